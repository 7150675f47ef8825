"""`tvm.ir.module.IRModule`."""

from tir_mlir.module import IRModule

__all__ = ["IRModule"]
