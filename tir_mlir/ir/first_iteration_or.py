"""`T.where(i < 1 or 2 <= ax0)`: a disjunct "first iteration of loop i, or a bound" in an
affine predicate (TVM's rolling_buffer writes it; an IntegerSet has no `or`).

For a loop var w over [m, m + n), `ind = (w - m + n - 1) floordiv n` is 0 on the first
iteration and 1 on the others, so

    w < m + 1  or  K <= R        (R >= 0 everywhere)
    ==  R - K * ind >= 0

`indicator` builds ind (rolling_buffer, the front end's `T.where(... or ...)`), `decode`
recognizes a constraint of that shape (printer).
"""

from typing import Optional, Tuple

from mlir import ir

from tir_mlir.ir.affine_exprs import const_of, sum_terms


def indicator(w: ir.AffineExpr, m: int, n: int) -> ir.AffineExpr:
    """0 on w == m, 1 on m < w < m + n."""
    return ir.AffineExpr.get_floor_div(w + (n - 1 - m), n)


def decode(expr: ir.AffineExpr) -> Optional[Tuple[int, int, int, int, ir.AffineExpr]]:
    """(w dim position, m, n, K, R) when expr is `R - K * ind(w) (>= 0)` with R's constant 0
    (the form `indicator` gives), else None. The caller checks that w ranges over [m, m + n)."""
    terms, const = sum_terms(expr)
    found = [(t, ind) for t in terms if (ind := _ind_term(t)) is not None]
    if len(found) != 1 or const != 0:
        return None
    term, (pos, m, n, k) = found[0]
    rest = [t for t in terms if t is not term]
    if not rest:
        return None
    r = rest[0]
    for t in rest[1:]:
        r = r + t
    return pos, m, n, k, r


def _ind_term(t) -> Optional[Tuple[int, int, int, int]]:
    """(w position, m, n, K) for `((w + c) floordiv n) * -K`."""
    t = t.maybe_downcast()
    if not isinstance(t, ir.AffineMulExpr):
        return None
    neg_k = const_of(t.rhs)
    div = t.lhs.maybe_downcast()
    if neg_k is None or neg_k >= 0 or not isinstance(div, ir.AffineFloorDivExpr):
        return None
    n = const_of(div.rhs)
    if n is None:
        return None
    inner = div.lhs.maybe_downcast()
    if isinstance(inner, ir.AffineDimExpr):
        w, c = inner, 0
    elif isinstance(inner, ir.AffineAddExpr):
        w, c = inner.lhs.maybe_downcast(), const_of(inner.rhs)
        if not isinstance(w, ir.AffineDimExpr) or c is None:
            return None
    else:
        return None
    m = n - 1 - c
    return w.position, m, n, -neg_k
