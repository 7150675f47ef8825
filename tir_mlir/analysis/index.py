"""Range-aware simplification of affine index expressions, so bindings print like TVM's.

Loop rewrites substitute loop variables in block bindings (`j -> j_0 * 4 + j_1`); MLIR's own
`simplify_affine_expr` knows no ranges, so `(a * 4 + b) floordiv 4` stays as is even when
0 <= b < 4. Here an expression is a `Lin`: a linear combination of atoms (a variable, or a
floordiv / mod of another Lin by a constant) plus a constant. Constructors simplify with the
variable ranges they are given:

    (a*4 + b) // 4          -> a                 when 0 <= b < 4
    (a*4 + b) % 4           -> b                 when 0 <= b < 4
    (f // 128)*128 + f % 128 -> f
    (x // a) // b           -> x // (a*b)
    (x // a) % b            -> x % (a*b) // a    (TVM's canonical form of a fused index)
    (x % (a*b)) % b         -> x % b

Variables are integer keys (positions in a block's `dims`); `from_affine`/`to_affine` convert
from and to `mlir.ir.AffineExpr`, substituting dims on the way in. An affine symbol (a
function-level size `n`, docs/symbolic.md) is the atom ("s", k), k its position in the map's
symbols, kept in place: its range is [0, unknown). What is no linear form over constants
(`f // n`, `i * n` after a fuse over a symbolic extent) is the atom ("x", expr), an
AffineExpr over the already-substituted operands, left as MLIR simplifies it.
"""

import math
from dataclasses import dataclass
from typing import Callable, Dict, Mapping, Sequence, Tuple, Union, overload

from mlir import ir

from tir_mlir.analysis.linear import linear
from tir_mlir.analysis.symbolic import Int, substitute

Ranges = Dict[int, Tuple[int, int]]  # variable -> inclusive (lo, hi)
SymRanges = Dict[int, Tuple[Int, Int]]  # the same, over symbolic extents
Dims = Union[Sequence["Lin"], Mapping[int, "Lin"]]  # dim position -> its form


@dataclass(frozen=True)
class Lin:
    """sum(coeff * atom) + const; atoms are ("v", k) | ("div", Lin, c) | ("mod", Lin, c) |
    ("s", k) (symbol k) | ("x", AffineExpr) (an expression with no linear form)."""

    terms: Tuple[Tuple[tuple, int], ...] = ()
    const: int = 0

    def __add__(self, other: "Lin") -> "Lin":
        d = dict(self.terms)
        for atom, c in other.terms:
            d[atom] = d.get(atom, 0) + c
        return Lin(tuple((a, c) for a, c in d.items() if c), self.const + other.const)

    def scale(self, k: int) -> "Lin":
        if k == 0:
            return Lin()
        return Lin(tuple((a, c * k) for a, c in self.terms), self.const * k)

    @property
    def is_const(self) -> bool:
        return not self.terms


def var(k: int) -> Lin:
    return Lin(((("v", k), 1),))


def const(c: int) -> Lin:
    return Lin((), c)


@overload
def bounds(e: Lin, ranges: Ranges) -> Tuple[int, int]: ...
@overload
def bounds(e: Lin, ranges: SymRanges) -> Tuple[Int, Int]: ...
def bounds(e: Lin, ranges: Mapping[int, Tuple[Int, Int]]) -> Tuple[Int, Int]:
    """Inclusive range of e, from the variable ranges (ints; a caller that gives the exact
    ranges of variables over symbolic extents, `(0, n - 1)`, gets SymExprs)."""
    lo = hi = e.const
    for atom, c in e.terms:
        alo, ahi = _atom_bounds(atom, ranges)
        if c >= 0:
            lo, hi = lo + c * alo, hi + c * ahi
        else:
            lo, hi = lo + c * ahi, hi + c * alo
    return lo, hi


UNKNOWN = 1 << 40  # the bound of what has none known


def symbol(k: int) -> Lin:
    return Lin(((("s", k), 1),))


def opaque(expr: ir.AffineExpr) -> Lin:
    """An expression with no linear form, as one atom (a constant stays a constant)."""
    e = _downcast(expr)
    if isinstance(e, ir.AffineConstantExpr):
        return const(e.value)
    return Lin(((("x", e), 1),))


def _atom_bounds(atom, ranges):
    if atom[0] == "v":
        return ranges.get(atom[1], (-UNKNOWN, UNKNOWN))
    if atom[0] == "s":
        return 0, UNKNOWN
    if atom[0] == "x":
        return -UNKNOWN, UNKNOWN
    lo, hi = bounds(atom[1], ranges)
    if atom[0] == "div":
        return lo // atom[2], hi // atom[2]
    if isinstance(lo, int) and isinstance(hi, int) and 0 <= lo and hi < atom[2]:
        return lo, hi
    return 0, atom[2] - 1


def _split(e: Lin, c: int):
    """e = q*c + r where q holds the terms whose coefficients c divides."""
    q = Lin(tuple((a, k // c) for a, k in e.terms if k % c == 0), e.const // c)
    r = Lin(tuple((a, k) for a, k in e.terms if k % c), e.const % c)
    return q, r


def _opaque(e: Lin, c: int) -> bool:
    """TVM's iter-map form keeps a sum of several iterators whole under // and % (a "fused
    mark": `(f_0 * 8 + f_1) // 16`, where we would split off terms). MLIR folds a term whose
    coefficient c divides out of such an AffineExpr anyway, so only sums without one stay."""
    return len(e.terms) > 1 and all(k % c for _, k in e.terms)


def floordiv(e: Lin, c: int, ranges: Ranges, marks: bool = False) -> Lin:
    """e // c; `marks`: keep TVM's fused-mark form (see _opaque) as bindings do."""
    if c == 1:
        return e
    if marks and _opaque(e, c):
        return Lin(((("div", e, c), 1),))
    q, r = _split(e, c)
    lo, hi = bounds(r, ranges)
    if 0 <= lo and hi < c:
        return q
    if len(e.terms) == 1 and e.const == 0 and e.terms[0][1] == 1 and e.terms[0][0][0] == "div":
        inner = e.terms[0][0]  # (x // a) // c -> x // (a * c)
        return floordiv(inner[1], inner[2] * c, ranges, marks)
    lo, hi = bounds(e, ranges)
    if lo // c == hi // c:
        return const(lo // c)
    return Lin(((("div", e, c), 1),))


def mod(e: Lin, c: int, ranges: Ranges, marks: bool = False) -> Lin:
    if c == 1:
        return Lin()
    if marks and _opaque(e, c):
        return Lin(((("mod", e, c), 1),))
    _, r = _split(e, c)
    lo, hi = bounds(r, ranges)
    if 0 <= lo and hi < c:
        return r
    if len(r.terms) == 1 and r.const == 0 and r.terms[0][1] == 1:
        atom = r.terms[0][0]
        if atom[0] == "div":  # (x // a) % c -> x % (a * c) // a
            return floordiv(mod(atom[1], atom[2] * c, ranges, marks), atom[2], ranges, marks)
        if atom[0] == "mod" and atom[2] % c == 0:  # (x % (a * c)) % c -> x % c
            return mod(atom[1], c, ranges, marks)
        if atom[0] == "x" and isinstance(atom[1], ir.AffineFloorDivExpr):
            x, a = atom[1].lhs, atom[1].rhs  # (x // n) % c -> x % (n * c) // n, as above
            return opaque(ir.AffineExpr.get_floor_div(ir.AffineExpr.get_mod(x, a * c), a))
    return Lin(((("mod", r, c), 1),))


def floordiv_by(e: Lin, c: Int, ranges: Ranges, symbols: list, marks: bool = False) -> Lin:
    """e // c for a divisor that may be symbolic (`SymExpr`, embedded over `symbols`, which
    grows with the ones it lacks): `f // n` stays an expression of its own."""
    if isinstance(c, int):
        return floordiv(e, c, ranges, marks)
    return opaque(ir.AffineExpr.get_floor_div(to_affine(e), c.embed(symbols)))


def mod_by(e: Lin, c: Int, ranges: Ranges, symbols: list, marks: bool = False) -> Lin:
    """e % c for a divisor that may be symbolic (see floordiv_by)."""
    if isinstance(c, int):
        return mod(e, c, ranges, marks)
    return opaque(ir.AffineExpr.get_mod(to_affine(e), c.embed(symbols)))


def upper(x: Int) -> int:
    """A constant upper bound of a size: itself, or UNKNOWN for a symbolic one."""
    return x if isinstance(x, int) else UNKNOWN


def less_than(e: Lin, n: int, ranges: Ranges) -> Tuple[Lin, int]:
    """`e < n` as an equivalent `e' < n'`, with a common factor divided out like TVM's
    simplifier: `c*X + r < n` with 0 <= r < c and c | n is `X < n / c`, repeatedly
    (`i_0 * 6 + i_1 * 2 + ax0 < 4` -> `i_0 * 3 + i_1 < 2`). Unchanged when nothing divides."""
    terms, n0 = list(e.terms), n - e.const
    changed = False
    while True:
        by_size = sorted(terms, key=lambda t: abs(t[1]))
        for s in range(len(by_size)):
            big = by_size[s:]
            d = math.gcd(*(abs(c) for _, c in big))
            lo, hi = bounds(Lin(tuple(by_size[:s])), ranges)
            if d > 1 and 0 <= lo and hi < d and n0 % d == 0:
                keep = {a for a, _ in big}
                terms = [(a, c // d) for a, c in terms if a in keep]
                n0 //= d
                changed = True
                break
        else:
            break
    return (Lin(tuple(terms)), n0) if changed else (e, n)


def recombine(e: Lin) -> Lin:
    """k*c*(x // c) + k*(x % c) -> k*x and k*c*(x % M // c) + k*(x % c) -> k*(x % M)
    (c divides M), repeatedly."""
    d = dict(e.terms)
    changed = True
    while changed:
        changed = False
        for atom, k in list(d.items()):
            if atom[0] != "mod" or atom not in d:
                continue
            x, c = atom[1], atom[2]
            for div, whole in _recombinable(d, x, c, k):
                del d[atom], d[div]
                rest = Lin(tuple(d.items()), 0) + whole.scale(k)
                d = dict(rest.terms)
                changed = True
                break
    return Lin(tuple(d.items()), e.const)


def _recombinable(d, x: Lin, c: int, k: int):
    """(div atom, what it recombines to with k*(x % c)) for div atoms of `d` that pair with it."""
    if d.get(("div", x, c)) == k * c:
        yield ("div", x, c), x
    for atom, kk in d.items():
        if (
            atom[0] == "div"
            and atom[2] == c
            and kk == k * c
            and len(atom[1].terms) == 1
            and atom[1].const == 0
            and atom[1].terms[0][1] == 1
        ):
            inner = atom[1].terms[0][0]
            if inner[0] == "mod" and inner[1] == x and inner[2] % c == 0:
                yield atom, atom[1]


def from_affine(expr: ir.AffineExpr, dims: Dims, ranges: Ranges, marks: bool = False) -> Lin:
    """Convert `expr`, replacing dim k by dims[k] and simplifying with `ranges` (`marks`:
    keep sums of iterators whole under // and %, as TVM's block bindings do)."""
    fast = _linear_of(expr, dims)
    return fast if fast is not None else _from_affine(expr, dims, ranges, marks)


def _linear_of(expr: ir.AffineExpr, dims: Dims):
    """`from_affine`'s result for the common case, without its walk of the expression: a
    linear `expr` (analysis/linear.py) whose dims stand for linear Lins that share no
    variable, so that no term cancels or recombines (terms then come in the order of the
    expression's leaves, as `from_affine` orders them). None otherwise."""
    form = linear(expr)
    if form is None:
        return None
    terms, const = {}, form.const
    for pos, c in form.terms.items():
        d = dims[pos]
        const += c * d.const
        for atom, k in d.terms:
            if atom[0] != "v" or atom in terms or not k:
                return None
            terms[atom] = k * c
    return Lin(tuple(terms.items()), const)


def _from_affine(expr: ir.AffineExpr, dims: Dims, ranges: Ranges, marks: bool = False) -> Lin:
    expr = _downcast(expr)
    if isinstance(expr, ir.AffineDimExpr):
        return dims[expr.position]
    if isinstance(expr, ir.AffineConstantExpr):
        return const(expr.value)
    if isinstance(expr, ir.AffineSymbolExpr):
        return symbol(expr.position)
    if not isinstance(expr, ir.AffineBinaryExpr):
        raise TypeError(f"unknown affine expression {expr}")
    lhs = from_affine(expr.lhs, dims, ranges, marks)
    rhs = from_affine(expr.rhs, dims, ranges, marks)
    if isinstance(expr, ir.AffineAddExpr):
        return recombine(lhs + rhs)
    if isinstance(expr, ir.AffineMulExpr):
        if rhs.is_const:
            return lhs.scale(rhs.const)
        if lhs.is_const:
            return rhs.scale(lhs.const)
        return opaque(to_affine(lhs) * to_affine(rhs))  # semi-affine: `i * n`
    if not rhs.is_const:  # by a symbol (`f // n` after fusing a loop over n)
        get = (
            ir.AffineExpr.get_floor_div
            if isinstance(expr, ir.AffineFloorDivExpr)
            else ir.AffineExpr.get_mod
            if isinstance(expr, ir.AffineModExpr)
            else ir.AffineExpr.get_ceil_div
        )
        return opaque(get(to_affine(lhs), to_affine(rhs)))
    if rhs.const <= 0:
        raise ValueError("division by a non-positive constant")
    if isinstance(expr, ir.AffineFloorDivExpr):
        return floordiv(lhs, rhs.const, ranges, marks)
    if isinstance(expr, ir.AffineModExpr):
        return mod(lhs, rhs.const, ranges, marks)
    return floordiv(lhs + const(rhs.const - 1), rhs.const, ranges)  # ceildiv


def _downcast(expr: ir.AffineExpr) -> ir.AffineExpr:
    """The concrete subclass (IntegerSet constraints hand out plain `AffineExpr`s)."""
    return expr.maybe_downcast()


def to_affine(e: Lin, dim: Callable[[int], ir.AffineExpr] = ir.AffineDimExpr.get) -> ir.AffineExpr:
    """The AffineExpr of e, terms in their order (outer loops first, like TVM prints)."""
    out = None
    for atom, k in e.terms:
        if atom[0] == "v":
            a = dim(atom[1])
        elif atom[0] == "s":
            a = ir.AffineSymbolExpr.get(atom[1])
        elif atom[0] == "x":
            a = (
                atom[1]
                if dim is ir.AffineDimExpr.get
                else substitute(
                    atom[1],
                    [dim(k) for k in range(_max_dim(atom[1]) + 1)],
                    [ir.AffineSymbolExpr.get(k) for k in range(_max_symbol(atom[1]) + 1)],
                )
            )
        else:
            inner = to_affine(atom[1], dim)
            c = ir.AffineConstantExpr.get(atom[2])
            a = (
                ir.AffineExpr.get_floor_div(inner, c)
                if atom[0] == "div"
                else ir.AffineExpr.get_mod(inner, c)
            )
        t = a if k == 1 else a * k
        out = t if out is None else out + t
    if out is None:
        return ir.AffineConstantExpr.get(e.const)
    return out + e.const if e.const else out


def simplify(expr: ir.AffineExpr, ranges: Ranges) -> ir.AffineExpr:
    """Range-aware simplification of an AffineExpr over dims 0..n-1."""
    n = _max_dim(expr) + 1
    return to_affine(from_affine(expr, [var(k) for k in range(n)], ranges))


def _max_symbol(expr) -> int:
    expr = _downcast(expr)
    if isinstance(expr, ir.AffineSymbolExpr):
        return expr.position
    if isinstance(expr, ir.AffineBinaryExpr):
        return max(_max_symbol(expr.lhs), _max_symbol(expr.rhs))
    return -1


def _max_dim(expr) -> int:
    expr = _downcast(expr)  # (isinstance on a plain AffineExpr aborts in the bindings)
    if isinstance(expr, ir.AffineDimExpr):
        return expr.position
    if isinstance(expr, ir.AffineBinaryExpr):
        return max(_max_dim(expr.lhs), _max_dim(expr.rhs))
    return -1
