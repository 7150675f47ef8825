"""What the expression mixins (ExternCalls, VectorExprs, FixedPointExprs) use of the
ExprBuilder they are mixed into, declared for the type checker. Declarations only: ExprBuilder
and Fail (exprs.py) define each of them, and come before this class in its method order."""

from typing import Any, Callable, NoReturn, Optional, Sequence

from mlir import ir

from tir_mlir.frontend.ast import Pos
from tir_mlir.frontend.values import Val


class ExprHost:
    filename: str
    env: Any
    fail: Callable[..., NoReturn]
    loc: Callable[[Pos], ir.Location]
    op: Callable[..., Any]  # a result value, or the op when it has none
    call_op: Callable[..., ir.Value]
    constant: Callable[..., ir.Value]
    materialize: Callable[..., Val]
    unify: Callable[..., Any]
    eval: Callable[[Any], Any]
    indices: Callable[..., Sequence[ir.Value]]
    index: Callable[[Any, Optional[Pos]], ir.Value]
    dtype_arg: Callable[[Any, Optional[Pos]], str]
    _arity: Callable[..., Any]
