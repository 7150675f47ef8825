"""Queries on MLIR AffineExprs that the bindings lack, shared by the printer, region inference,
index dtypes and the lowering stages."""

from typing import List, Optional, Set, Tuple

from mlir import ir


def const_of(e: ir.AffineExpr) -> Optional[int]:
    """The value of a constant expression, else None."""
    e = e.maybe_downcast()
    return e.value if isinstance(e, ir.AffineConstantExpr) else None


def dims_of(e: ir.AffineExpr) -> Set[int]:
    """Positions of the dims `e` uses (iteratively: expressions can be deep)."""
    used, stack = set(), [e]
    while stack:
        x = stack.pop().maybe_downcast()
        if isinstance(x, ir.AffineDimExpr):
            used.add(x.position)
        elif isinstance(x, ir.AffineBinaryExpr):
            stack += [x.lhs, x.rhs]
    return used


def expr_bounds(e: ir.AffineExpr, dims) -> Optional[tuple]:
    """Inclusive (min, max) of an affine expression given its dims' bounds (None: unknown)."""
    e = e.maybe_downcast()
    if isinstance(e, ir.AffineConstantExpr):
        return e.value, e.value
    if isinstance(e, ir.AffineDimExpr):
        return dims[e.position]
    if not isinstance(e, ir.AffineBinaryExpr):
        return None  # a symbol: unknown
    a, b = expr_bounds(e.lhs, dims), expr_bounds(e.rhs, dims)
    if a is None or b is None:
        return None
    if isinstance(e, ir.AffineAddExpr):
        return a[0] + b[0], a[1] + b[1]
    if isinstance(e, ir.AffineMulExpr):
        corners = [x * y for x in a for y in b]
        return min(corners), max(corners)
    if b[0] == b[1] and b[0] > 0 and isinstance(e, ir.AffineFloorDivExpr):
        return a[0] // b[0], a[1] // b[0]
    if b[0] == b[1] and b[0] > 0 and isinstance(e, ir.AffineModExpr):
        return 0, b[0] - 1
    return None


def sum_terms(expr: ir.AffineExpr) -> Tuple[List[ir.AffineExpr], int]:
    """The non-constant terms of a sum, in order, and its constant."""
    terms, const = [], 0
    stack = [expr]
    while stack:
        e = stack.pop().maybe_downcast()
        if isinstance(e, ir.AffineAddExpr):
            stack += [e.rhs, e.lhs]
        elif isinstance(e, ir.AffineConstantExpr):
            const += e.value
        else:
            terms.append(e)
    return terms, const
