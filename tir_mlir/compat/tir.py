"""`tvm.tir`: the TensorIR names of tir_mlir (`tvm.tir.Schedule(mod)`, `tvm.tir.TensorIntrin`)."""
from tir_mlir.schedule.schedule import Schedule
from tir_mlir.schedule.tensor_intrin import TensorIntrin
from tir_mlir.script.prim_func import PrimFunc
from tir_mlir.te.expr import const
from tir_mlir.te.operation import Select, exp, log, sigmoid, sqrt, tanh

__all__ = ["Schedule", "TensorIntrin", "PrimFunc", "Select", "const", "exp", "log", "sigmoid",
           "sqrt", "tanh"]
