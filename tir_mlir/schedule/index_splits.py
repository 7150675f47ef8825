"""A buffer access index as a sum of pieces of loop variables, and the layout that orders the
pieces by loop (what `suggest_index_map` computes).

A piece (`Split`) is `(v // lower_factor) % extent * scale` of loop variable `v`: `i // 16` is
(i, 16, extent // 16, 1), `i % 16 * 16` is (i, 1, 16, 16). The flattened index of an access is
a valid mixed-radix number over such pieces when, sorted by scale, each scale is the next
one's scale times its extent (TVM's iter map detection, for the splits it fuses).
"""

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

from mlir import ir


@dataclass(frozen=True)
class Split:
    dim: int  # the loop variable (its position among the loops)
    lower_factor: int
    extent: int
    scale: int


class _NoSplit(Exception):
    pass


def index_splits(
    indices: Sequence[ir.AffineExpr], shape: Sequence[int], extents: Sequence[int]
) -> list[Split]:
    """The pieces of the flattened index `sum(indices[i] * stride[i])`, highest scale first,
    pieces of one variable that continue each other merged; [] when it is not a mixed-radix
    sum of disjoint pieces."""
    pieces: list[Split] = []
    stride = 1
    try:
        for e, n in zip(reversed(list(indices)), reversed(list(shape))):
            pieces += [replace(s, scale=s.scale * stride) for s in _splits(e, extents)]
            stride *= n
        pieces = _merge(pieces)
    except _NoSplit:
        return []
    pieces.sort(key=lambda s: -s.scale)
    for a, b in itertools.pairwise(pieces):
        if a.scale != b.scale * b.extent:
            return []
    return pieces


def _splits(e: ir.AffineExpr, extents: Sequence[int]) -> list[Split]:
    e = e.maybe_downcast()
    if isinstance(e, ir.AffineConstantExpr):
        return []
    if isinstance(e, ir.AffineDimExpr):
        n = extents[e.position]
        return [Split(e.position, 1, n, 1)] if n > 1 else []
    if isinstance(e, ir.AffineAddExpr):
        return _splits(e.lhs, extents) + _splits(e.rhs, extents)
    if isinstance(e, ir.AffineMulExpr):
        x, c = _with_const(e)
        if c < 0:
            raise _NoSplit
        return [replace(s, scale=s.scale * c) for s in _splits(x, extents)] if c else []
    if isinstance(e, (ir.AffineFloorDivExpr, ir.AffineModExpr)):
        x, c = e.lhs, _const(e.rhs)
        inner = _splits(x, extents)
        if not inner:
            return []
        if len(inner) != 1 or c <= 0:
            raise _NoSplit
        s = inner[0]
        return _div(s, c) if isinstance(e, ir.AffineFloorDivExpr) else _mod(s, c)
    raise _NoSplit


def _div(s: Split, c: int) -> list[Split]:
    """(piece * scale) // c."""
    if s.scale % c == 0:
        return [replace(s, scale=s.scale // c)]
    if c % s.scale:
        raise _NoSplit
    q = c // s.scale
    if s.extent <= q:
        return []
    if s.extent % q:
        raise _NoSplit
    return [Split(s.dim, s.lower_factor * q, s.extent // q, 1)]


def _mod(s: Split, c: int) -> list[Split]:
    """(piece * scale) % c."""
    if s.scale % c == 0:
        return []
    if c % s.scale:
        raise _NoSplit
    m = c // s.scale
    if s.extent <= m:
        return [s]
    if s.extent % m:
        raise _NoSplit
    return [replace(s, extent=m)]


def _with_const(e) -> tuple[ir.AffineExpr, int]:
    for x, c in ((e.lhs, e.rhs), (e.rhs, e.lhs)):
        c = c.maybe_downcast()
        if isinstance(c, ir.AffineConstantExpr):
            return x, c.value
    raise _NoSplit


def _const(e: ir.AffineExpr) -> int:
    e = e.maybe_downcast()
    if not isinstance(e, ir.AffineConstantExpr):
        raise _NoSplit
    return e.value


def _merge(pieces: list[Split]) -> list[Split]:
    """Pieces of one variable that continue each other (in value and in scale) become one;
    overlapping pieces of one variable are no mixed-radix number."""
    out: list[Split] = []
    for dim in dict.fromkeys(s.dim for s in pieces):
        mine = sorted((s for s in pieces if s.dim == dim), key=lambda s: s.lower_factor)
        cur = mine[0]
        for nxt in mine[1:]:
            if nxt.lower_factor < cur.lower_factor * cur.extent:
                raise _NoSplit
            if (
                nxt.lower_factor == cur.lower_factor * cur.extent
                and nxt.scale == cur.scale * cur.extent
            ):
                cur = Split(dim, cur.lower_factor, cur.extent * nxt.extent, cur.scale)
            else:
                out.append(cur)
                cur = nxt
        out.append(cur)
    return out


# --- the layout as lambda text --------------------------------------------------------------------
def split_lambda(shape: Sequence[int], digit_extents: Sequence[int], order: Sequence[int]) -> str:
    """`lambda i0, i1, ...: (...)`: the buffer's flattened index written in the mixed radix
    `digit_extents` (most significant first), the digits in `order`."""
    names = [f"i{k}" for k in range(len(shape))]
    digits = []
    for k, e in enumerate(digit_extents):
        digits.append(_digit(shape, names, math.prod(digit_extents[k + 1 :]), e))
    body = ", ".join(digits[k] for k in order)
    return f"lambda {', '.join(names)}: ({body}{',' if len(order) == 1 else ''})"


def _digit(shape: Sequence[int], names: list[str], s: int, e: int) -> str:
    """`flat // s % e` over the buffer indices, simplified with their ranges where the buffer's
    strides and the digit's bounds divide one another (else written out as it is)."""
    terms = _digit_terms(shape, names, s, e)
    if terms is None:
        flat = " + ".join(
            f"{n} * {math.prod(shape[i + 1 :])}" if i < len(shape) - 1 else n
            for i, n in enumerate(names)
        )
        return f"({flat}) // {s} % {e}"
    if not terms:
        return "0"
    text = " + ".join(t for t, _ in terms)
    if sum(m for _, m in terms) < e:
        return text
    return f"({text}) % {e}" if len(terms) > 1 else f"{text} % {e}"


def _digit_terms(shape, names, s: int, e: int) -> list[tuple[str, int]] | None:
    """(text, largest value) of each buffer index's share of the digit, or None."""
    out = []
    for i, (n, name) in enumerate(zip(shape, names)):
        st = math.prod(shape[i + 1 :])
        if n == 1 or st * n <= s:
            continue
        if st >= s:
            if st % s:
                return None
            c = st // s
            if c % e == 0:
                continue
            if e % c:
                return None
            m = e // c
            if n <= m:
                out.append((_scaled(name, c), (n - 1) * c))
            else:
                out.append((_scaled(f"{name} % {m}", c), (m - 1) * c))
        else:
            if s % st:
                return None
            q = s // st
            top = -(-n // q)
            if top <= e:
                out.append((f"{name} // {q}", top - 1))
            else:
                out.append((f"{name} // {q} % {e}", e - 1))
    return out


def _scaled(text: str, c: int) -> str:
    return text if c == 1 else f"{text} * {c}"
