"""Inverting a consumer's read of its producer's buffer, for reverse_compute_inline.

The consumer reads `B[L_0(c), ..., L_r(c)]` (c: its iter vars); folded into the producer, which
writes `B[s_0, ..., s_r]`, each iter var must be written as a function of the s. That works when
the read is a bijection made of fusions and splits of the iter vars, as TVM's iter maps are:
every dimension is `off + (F // div) % mod` of a *fused* iterator F (a mixed-radix sum of some
iter vars, `vi * 16 + vj`), and the dimensions reading one F tile it (`F // 128`, `F % 128`):

    C[vi, vj, vk] = B[vi * 16 + vj, vk]     ->   vi = s_0 // 16, vj = s_0 % 16, vk = s_1

A group is such an F with the dimensions that read it; `read_groups` finds them or raises
`NotInvertible` (the read reuses an element, skips one, or is not affine).

Over symbolic sizes (docs/symbolic.md) a digit may be a size, as in TVM's iter maps: a fuse
of loops over `n` and `m` split in three reads `F % (n * m) // m` and `F % m`, F over
`[0, n * m)` by the split's `T.where(F < n * m)` (a `limits` entry: the last tile of F's top
loop is cut there).
"""

from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Tuple

from mlir import ir

from tir_mlir.analysis.linear import linear
from tir_mlir.analysis.symbolic import Int, SymExpr, prove_le, used_symbols
from tir_mlir.analysis import index
from tir_mlir.analysis.index import Lin
from tir_mlir.ir.affine_exprs import dims_of


class NotInvertible(Exception):
    """The read is not a bijection of the consumer's iter vars (the message says why)."""


@dataclass
class Piece:
    """Dimension `dim` of the read: off + (F // div) % mod; mod None for F's top digit (div
    and mod may be sizes: SymExprs)."""

    dim: int
    off: int
    div: Int
    mod: Optional[Int]
    terms: Dict[int, int]  # the iter vars (and coefficients) this dimension's index shows
    sign: int = 1  # -1: the index runs one iter var backwards (off - t)


@dataclass
class Group:
    coeffs: Dict[int, int]  # iter var -> its coefficient in F (mixed radix)
    pieces: List[Piece]  # by increasing div: the lowest digit of F first
    extent: Int  # F ranges over [0, extent)

    def span(self, p: Piece) -> Int:
        """How many values the piece takes: its digit's range."""
        return p.mod if p.mod is not None else -(-self.extent // p.div)

    def image(self, p: Piece):
        """The inclusive range of indices the piece reads."""
        lo, hi = p.off, p.off + self.span(p) - 1
        return (lo, hi) if p.sign == 1 else (2 * p.off - hi, lo)


def read_groups(
    exprs: Sequence[ir.AffineExpr],
    mins: Sequence[int],
    extents: Sequence[Int],
    names: Sequence[str],
    *,
    all_used: bool = True,
    reverse: bool = True,
    surjective: bool = False,
    constants_ok: bool = False,
    unit_dims: frozenset = frozenset(),
    symbols: Sequence[ir.Value] = (),
    limits: Sequence[Tuple[Dict[int, int], Int]] = (),
) -> List[Group]:
    """The groups of a read whose dimension d is exprs[d] over iter vars (dim k = iter k, of
    domain [mins[k], mins[k] + extents[k])); unit iter vars count as constants.
    `all_used`: every (non-unit) iter var must be read; `reverse`: an index may run one
    iter var backwards (`7 - vi`); `surjective`: a plain sum of iter vars may overlap
    (`v0 * 2 + v1` with 4 values of v1: each value read, some more than once);
    `constants_ok`: constant indices are skipped rather than refused; `unit_dims`: dimensions
    of size 1, where index 0 (a unit iter var, `D[vn, ...]` of a batch of one) is no group but
    fine. `symbols`: the values of the exprs' symbols (a divisor `n * m` is then a size);
    `limits`: pairs (coefficients of a fused iterator F, U) from a `T.where(F < U)`: F's
    extent is U unless its loops provably give fewer values."""
    n = len(extents)
    dims = [
        index.const(mins[k]) if extents[k] == 1 else Lin(((("v", k), 1),), mins[k])
        for k in range(n)
    ]
    # (a symbolic extent, `n`, is an open range to the simplification)
    ranges = {k: (0, x - 1 if isinstance(x, int) else index.UNKNOWN) for k, x in enumerate(extents)}
    pieces = []
    for d, e in enumerate(exprs):
        try:
            lin = index.from_affine(e, dims, ranges)
        except ValueError as err:
            raise NotInvertible(f"index {d} is not affine ({err})") from None
        if lin.is_const:
            # a fixed index (`B[0, vi]`) constrains no iter var
            if constants_ok or (d in unit_dims and lin.const == 0):
                continue
            raise NotInvertible(f"index {d} is a constant")
        pieces.append(_piece(d, lin, symbols, ranges))
        if pieces[-1].sign == -1 and not reverse:
            raise NotInvertible(f"index {d} runs an iter var backwards")
    groups = _connect(pieces)
    seen = {k for g in groups for k in g.coeffs}
    for k in range(n):
        if all_used and extents[k] != 1 and k not in seen:
            raise NotInvertible(f"iter var {names[k]} does not index the read")
    for g in groups:
        if surjective and len(g.pieces) == 1 and g.pieces[0].div == 1 and g.pieces[0].mod is None:
            _check_no_gaps(g, extents, names)
        else:
            _check_group(g, extents, names, limits)
    return groups


def _check_no_gaps(g: Group, extents, names):
    """A sum of iter vars takes every value of [0, max] (overlaps allowed)."""
    reach = 0  # the sum so far covers [0, reach]
    for k in sorted(g.coeffs, key=lambda k: g.coeffs[k]):
        if not prove_le(g.coeffs[k], reach + 1):
            raise NotInvertible(
                f"iter var {names[k]} has stride {g.coeffs[k]}: the index skips values"
            )
        reach += g.coeffs[k] * (extents[k] - 1)
    g.extent = reach + 1


def _linear_terms(lin: Lin) -> Optional[Dict[int, int]]:
    if lin.const or any(a[0] != "v" for a, _ in lin.terms):
        return None
    return {a[1]: c for a, c in lin.terms}


def _single_atom(lin: Lin):
    if lin.const == 0 and len(lin.terms) == 1 and lin.terms[0][1] == 1:
        return lin.terms[0][0]
    return None


def _piece(d: int, lin: Lin, symbols: Sequence[ir.Value] = (), ranges=None) -> Piece:
    off = lin.const
    lin_terms = {a[1]: c for a, c in lin.terms if a[0] == "v"}
    atoms = [(a, c) for a, c in lin.terms if a[0] != "v"]
    if not atoms:
        return _checked(Piece(d, off, 1, None, lin_terms))
    # (a symbol atom `("s", k)`, a size such as `n`, is neither a split nor a fusion)
    if len(atoms) == 1 and atoms[0][1] == 1 and atoms[0][0][0] in ("div", "mod"):
        kind, inner, c = atoms[0][0]
        terms = _linear_terms(inner)
        if terms is not None and kind == "div":
            # a*t + G // c is (a*c*t + G) // c: MLIR pulls divisible terms out of a division
            for k, a in lin_terms.items():
                terms[k] = terms.get(k, 0) + a * c
            return _checked(Piece(d, off, c, None, terms))
        if not lin_terms:
            if terms is not None:
                return _checked(Piece(d, off, 1, c, terms))
            sub = _single_atom(inner)
            if sub is not None and sub[0] not in ("div", "mod"):
                sub = None
            sub_terms = _linear_terms(sub[1]) if sub is not None else None
            if sub is not None and sub_terms is not None:
                terms = sub_terms
                if kind == "div" and sub[0] == "mod" and sub[2] % c == 0:  # (F % m) // c
                    return _checked(Piece(d, off, c, sub[2] // c, terms))
                if kind == "mod" and sub[0] == "div":  # (F // c) % m
                    return _checked(Piece(d, off, sub[2], c, terms))
    if len(atoms) == 1 and atoms[0][1] == 1 and not lin_terms:
        # a digit by a size: one expression MLIR keeps whole (`F % (n * m) // m`)
        piece = _sized_piece(d, off, index.to_affine(Lin(tuple(atoms))), symbols, ranges)
        if piece is not None:
            return _checked(piece)
    raise NotInvertible(f"index {d} is not a split or a fusion of the iter vars")


def _sized_piece(d: int, off: int, e: ir.AffineExpr, symbols, ranges) -> Optional[Piece]:
    """The piece of `G % S`, `G // T`, `G % S // T` or `G // T % S` (G a fused iterator or a
    constant division of one, `F // 4`; S and T expressions of sizes, T dividing S), else
    None."""
    div: Optional[Int] = 1
    mod: Optional[Int] = None
    e = e.maybe_downcast()
    if isinstance(e, ir.AffineModExpr):
        mod, e = _size(e.rhs, symbols), e.lhs.maybe_downcast()
        if isinstance(e, ir.AffineFloorDivExpr):
            div, e = _size(e.rhs, symbols), e.lhs.maybe_downcast()
        if mod is None:
            return None
    elif isinstance(e, ir.AffineFloorDivExpr):
        div, e = _size(e.rhs, symbols), e.lhs.maybe_downcast()
        if isinstance(e, ir.AffineModExpr):
            whole, e = _size(e.rhs, symbols), e.lhs.maybe_downcast()
            mod = None if whole is None or div is None else _quotient(whole, div)
            if mod is None:
                return None
    if div is None:
        return None
    form = linear(e)
    if form is not None:
        if form.const or not form.terms:
            return None
        return Piece(d, off, div, mod, dict(form.terms))
    # G = F // c, as MLIR writes it (`f0 * 8 + f1 * 2 + f2 // 4`): G // T is F // (c * T)
    n_dims = max(dims_of(e), default=-1) + 1
    try:
        inner = _piece(d, index.from_affine(e, [index.var(k) for k in range(n_dims)], ranges))
    except (NotInvertible, ValueError, TypeError):
        return None
    if inner.off or inner.mod is not None or inner.sign != 1:
        return None
    return Piece(d, off, inner.div * div, mod, inner.terms)


def _quotient(whole: Int, div: Int) -> Optional[Int]:
    """whole / div when div divides it exactly, one factor of div at a time (MLIR simplifies
    `(n * m * 4) // 4` and `(n * m) // m`, not `(n * m * 4) // (m * 4)`); else None."""
    factors, stack = [], [div.expr if isinstance(div, SymExpr) else div]
    while stack:
        f = stack.pop()
        x = f.maybe_downcast() if isinstance(f, ir.AffineExpr) else f
        if isinstance(x, ir.AffineMulExpr):
            stack += [x.lhs, x.rhs]
        else:
            factors.append(x)
    q = whole
    for f in factors:
        if isinstance(f, ir.AffineExpr):
            assert isinstance(div, SymExpr)
            f = SymExpr.from_affine(f, div.symbols)
        step = q // f
        if step * f != q:
            return None
        q = step
    return q


def _size(e: ir.AffineExpr, symbols) -> Optional[Int]:
    """A divisor with no iter var in it, as an Int over `symbols` (None otherwise)."""
    if dims_of(e) or any(k >= len(symbols) for k in used_symbols(e)):
        return None
    size = SymExpr.from_affine(e, symbols)
    return None if isinstance(size, int) and size <= 0 else size


def _checked(p: Piece) -> Piece:
    if len(p.terms) == 1 and p.div == 1 and p.mod is None and list(p.terms.values()) == [-1]:
        p.terms, p.sign = {k: 1 for k in p.terms}, -1
    if any(c <= 0 for c in p.terms.values()):
        raise NotInvertible(f"index {p.dim} runs an iter var backwards")
    return p


def _connect(pieces: List[Piece]) -> List[Group]:
    """Pieces sharing an iter var read the same fused iterator: one group each."""
    groups: List[Group] = []
    for p in pieces:
        joined = [g for g in groups if any(set(q.terms) & set(p.terms) for q in g.pieces)]
        g = Group({}, [], 0)
        for other in joined:
            groups.remove(other)
            g.pieces += other.pieces
        g.pieces.append(p)
        groups.append(g)
    for g in groups:
        for p in g.pieces:
            for k, c in p.terms.items():
                if g.coeffs.setdefault(k, c) != c:
                    raise NotInvertible(
                        f"index {p.dim} reads an iter var with another "
                        f"stride than index {g.pieces[0].dim}"
                    )
        # (a size after the constants: `_check_group` finds its place in the chain)
        g.pieces.sort(key=lambda p: (0, p.div) if isinstance(p.div, int) else (1, 0))
    groups.sort(key=lambda g: min(p.dim for p in g.pieces))
    return groups


def _check_group(g: Group, extents, names, limits=()):
    """F must be a mixed-radix number (a bijection onto [0, extent)) and its pieces its
    digits, lowest first, each one where the previous ends."""
    if any(p.sign == -1 for p in g.pieces) and len(g.pieces) + len(g.coeffs) > 2:
        raise NotInvertible("an index runs a fused iterator backwards")
    radix = 1
    for k in sorted(g.coeffs, key=lambda k: g.coeffs[k]):
        if g.coeffs[k] != radix:
            raise NotInvertible(
                f"iter var {names[k]} has stride {g.coeffs[k]} where "
                f"{radix} would make the read a bijection"
            )
        radix *= extents[k]
    g.extent = _limited(radix, g.coeffs, limits)
    expect: Int = 1
    for i, p in enumerate(g.pieces):
        top = i == len(g.pieces) - 1
        if p.div != expect:
            later = next((j for j in range(i + 1, len(g.pieces)) if g.pieces[j].div == expect), 0)
            if later:  # (a digit by a size sorts last: find the one that goes here)
                g.pieces[i], g.pieces[later] = g.pieces[later], g.pieces[i]
                p = g.pieces[i]
        if p.div != expect:
            raise NotInvertible(
                f"index {p.dim} skips or repeats digits of {' + '.join(names[k] for k in g.coeffs)}"
            )
        if p.mod is not None and top and prove_le(g.extent, p.div * p.mod):
            p.mod = None
        if p.mod is None and not top:
            raise NotInvertible(f"index {p.dim} overlaps index {g.pieces[i + 1].dim}")
        if p.mod is None and p.terms != g.coeffs:
            raise NotInvertible(f"index {p.dim} does not read the whole fused iterator")
        if p.mod is not None:
            expect = p.div * p.mod
            if any(
                not isinstance(expect, int) or c % expect
                for k, c in g.coeffs.items()
                if k not in p.terms
            ):
                raise NotInvertible(f"index {p.dim} drops an iter var that it depends on")
    if g.pieces[-1].mod is not None:
        raise NotInvertible(
            f"the read wraps around: index {g.pieces[-1].dim} is taken modulo {g.pieces[-1].mod}"
        )


def _limited(radix: Int, coeffs: Dict[int, int], limits) -> Int:
    """F's extent under the `T.where(F < U)` bounds on it: U unless radix <= U is proved. (A
    split of a size `U` makes radix `ceil(U / k) * k`, at least U, which `prove_le` cannot
    show over symbols; the bound is what the block sees either way.)"""
    for terms, upper in limits:
        if terms == coeffs and not prove_le(radix, upper):
            radix = upper
    return radix


def digit_of(g: Group, k: int):
    """How iter var k comes out of F: F // div % mod, div None for the lowest digit and
    mod None for the top one."""
    order = sorted(g.coeffs, key=lambda k: g.coeffs[k])
    c, pos = g.coeffs[k], order.index(k)
    mod = None if pos == len(order) - 1 else g.coeffs[order[pos + 1]] // c
    return (c if c != 1 else None), mod
