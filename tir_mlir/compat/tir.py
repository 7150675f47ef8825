"""`tvm.tir`: the TensorIR names of tir_mlir (`tvm.tir.Schedule(mod)`, `tvm.tir.build`,
`tvm.tir.TensorIntrin`, and what a TE tensor intrinsic is built with: `decl_buffer`,
`call_extern`, `call_packed`, `ir_builder`)."""

from types import SimpleNamespace

from tir_mlir.runtime.build import build
from tir_mlir.schedule.schedule import Schedule
from tir_mlir.schedule.tensor_intrin import TensorIntrin
from tir_mlir.script.prim_func import PrimFunc
from tir_mlir.te.expr import const
from tir_mlir.te.intrin import IRBuilder, call_extern, call_packed, call_pure_extern, decl_buffer
from tir_mlir.te.operation import Select, exp, log, sigmoid, sqrt, tanh

ir_builder = SimpleNamespace(create=IRBuilder)

__all__ = [
    "Schedule",
    "TensorIntrin",
    "PrimFunc",
    "build",
    "Select",
    "const",
    "exp",
    "log",
    "sigmoid",
    "sqrt",
    "tanh",
    "decl_buffer",
    "call_extern",
    "call_pure_extern",
    "call_packed",
    "ir_builder",
]
