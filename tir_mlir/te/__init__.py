"""TE, TVM's tensor-expression frontend: `placeholder`, `compute`, reducers,
`create_prim_func`, and the TE schedule API (`create_schedule`, `s[C].split`, ...) on top of
`tir_mlir.Schedule`.
"""

from tir_mlir.te.expr import Expr, Var, const
from tir_mlir.te.operation import (
    IterVar,
    Select,
    Tensor,
    all,
    any,
    comm_reducer,
    compute,
    exp,
    if_then_else,
    log,
    max,
    min,
    placeholder,
    reduce_axis,
    rsqrt,
    sigmoid,
    sqrt,
    sum,
    tanh,
    thread_axis,
    var,
)
from tir_mlir.te.intrin import decl_tensor_intrin
from tir_mlir.te.prim_func import create_prim_func
from tir_mlir.te.schedule import Schedule, Stage, create_schedule, lower

__all__ = [
    "Expr",
    "Var",
    "const",
    "IterVar",
    "Select",
    "Tensor",
    "all",
    "any",
    "comm_reducer",
    "compute",
    "exp",
    "if_then_else",
    "log",
    "max",
    "min",
    "placeholder",
    "reduce_axis",
    "rsqrt",
    "sigmoid",
    "sqrt",
    "sum",
    "tanh",
    "thread_axis",
    "var",
    "decl_tensor_intrin",
    "create_prim_func",
    "Schedule",
    "Stage",
    "create_schedule",
    "lower",
]
