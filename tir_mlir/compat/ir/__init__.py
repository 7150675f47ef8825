"""`tvm.ir`: the IRModule and the structural comparisons."""

from tir_mlir.printer.equality import assert_structural_equal, structural_equal, structural_hash
from tir_mlir.module import IRModule

__all__ = ["IRModule", "assert_structural_equal", "structural_equal", "structural_hash"]
