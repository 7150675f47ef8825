"""Queries on MLIR AffineExprs that the bindings lack, shared by the printer, region inference,
index dtypes and the lowering stages."""
from typing import Optional

from mlir import ir


def const_of(e: ir.AffineExpr) -> Optional[int]:
    """The value of a constant expression, else None."""
    e = e.maybe_downcast()
    return e.value if isinstance(e, ir.AffineConstantExpr) else None


def dims_of(e: ir.AffineExpr) -> set:
    """Positions of the dims `e` uses (iteratively: expressions can be deep)."""
    used, stack = set(), [e]
    while stack:
        x = stack.pop().maybe_downcast()
        if isinstance(x, ir.AffineDimExpr):
            used.add(x.position)
        elif isinstance(x, ir.AffineBinaryExpr):
            stack += [x.lhs, x.rhs]
    return used
