"""Integer expressions over a function's symbols (docs/symbolic.md).

A symbolic size is an `index` value defined at the top level of a function (an argument, or
`arith`/`affine` ops over arguments). Loop extents, block domains and buffer shapes that use
one are `SymExpr`s: an `ir.AffineExpr` with no dims, whose symbol k is `symbols[k]`. Constant
expressions are plain `int`s everywhere (`Int`), so static programs never see this class.

Arithmetic builds MLIR affine expressions, which MLIR simplifies as they are made
(`(s0 * 8) mod 4` is `0`); products of symbols are semi-affine expressions, which affine loop
bounds accept. Facts from `tir.assume` (`n % 4 == 0`) decide divisibility that the expression
alone does not.
"""

from collections.abc import Iterable, Sequence
from typing import List, Set, Union

from mlir import ir

Int = Union[int, "SymExpr"]


def _const(value: int) -> ir.AffineExpr:
    return ir.AffineConstantExpr.get(int(value))


def substitute(
    expr: ir.AffineExpr, dims: Sequence[ir.AffineExpr], symbols: Sequence[ir.AffineExpr]
) -> ir.AffineExpr:
    """`expr` with dim k replaced by `dims[k]` and symbol k by `symbols[k]`."""
    e = expr.maybe_downcast()
    if isinstance(e, ir.AffineConstantExpr):
        return e
    if isinstance(e, ir.AffineDimExpr):
        return dims[e.position]
    if isinstance(e, ir.AffineSymbolExpr):
        return symbols[e.position]
    if not isinstance(e, ir.AffineBinaryExpr):
        raise TypeError(f"unknown affine expression {e}")
    lhs, rhs = substitute(e.lhs, dims, symbols), substitute(e.rhs, dims, symbols)
    if isinstance(e, ir.AffineAddExpr):
        return lhs + rhs
    if isinstance(e, ir.AffineMulExpr):
        return lhs * rhs
    if isinstance(e, ir.AffineModExpr):
        return ir.AffineExpr.get_mod(lhs, rhs)
    if isinstance(e, ir.AffineFloorDivExpr):
        return ir.AffineExpr.get_floor_div(lhs, rhs)
    if isinstance(e, ir.AffineCeilDivExpr):
        return ir.AffineExpr.get_ceil_div(lhs, rhs)
    raise TypeError(f"unknown affine expression {e}")


def used_symbols(expr: ir.AffineExpr) -> Set[int]:
    """Positions of the symbols `expr` uses."""
    e = expr.maybe_downcast()
    if isinstance(e, ir.AffineSymbolExpr):
        return {e.position}
    if not isinstance(e, ir.AffineBinaryExpr):
        return set()
    return used_symbols(e.lhs) | used_symbols(e.rhs)


class SymExpr:
    """An integer expression over symbol values; build with `symbol`, `from_affine` or
    arithmetic, which return an `int` whenever the result is constant."""

    __slots__ = ("expr", "symbols")

    def __init__(self, expr: ir.AffineExpr, symbols: Sequence[ir.Value]):
        self.expr, self.symbols = expr, tuple(symbols)

    # --- construction -----------------------------------------------------------------------
    @staticmethod
    def symbol(value: ir.Value) -> "SymExpr":
        return SymExpr(ir.AffineSymbolExpr.get(0), (value,))

    @staticmethod
    def from_affine(expr: ir.AffineExpr, symbols: Sequence[ir.Value]) -> Int:
        """The expression of a map result over symbol operands (the map has no dims)."""
        return _make(expr, symbols)

    @staticmethod
    def from_map(amap: ir.AffineMap, operands: Sequence[ir.Value]) -> list[Int]:
        """Each result of a map with no dims, applied to its symbol operands."""
        if amap.n_dims:
            raise ValueError(f"{amap} has dims: not an expression of symbols only")
        return [_make(r, operands) for r in amap.results]

    # --- reading ----------------------------------------------------------------------------
    def as_int(self) -> int | None:
        e = self.expr.maybe_downcast()
        return e.value if isinstance(e, ir.AffineConstantExpr) else None

    def to_map(self) -> tuple[ir.AffineMap, list[ir.Value]]:
        """`()[s0, ...] -> (expr)` and its symbol operands."""
        return ir.AffineMap.get(0, len(self.symbols), [self.expr]), list(self.symbols)

    def embed(self, symbols: list[ir.Value]) -> ir.AffineExpr:
        """This expression over the symbol list `symbols` (extended in place with the ones it
        lacks): for putting it into a map whose other results use `symbols` too."""
        with self.expr.context:
            return self._embed(symbols)

    def _embed(self, symbols: list[ir.Value]) -> ir.AffineExpr:
        pos = []
        for s in self.symbols:
            if s not in symbols:
                symbols.append(s)
            pos.append(ir.AffineSymbolExpr.get(symbols.index(s)))
        return substitute(self.expr, [], pos)

    # --- arithmetic -------------------------------------------------------------------------
    def _binary(self, other: Int, op, swap=False) -> Int:
        with self.expr.context:  # (callers need not be inside one)
            symbols = list(self.symbols)
            a = self.expr
            b = other.embed(symbols) if isinstance(other, SymExpr) else _const(other)
            return _make(op(b, a) if swap else op(a, b), symbols)

    def __add__(self, other: Int) -> Int:
        return self._binary(other, lambda a, b: a + b)

    __radd__ = __add__

    def __sub__(self, other: Int) -> Int:
        return self._binary(other, lambda a, b: a + b * _const(-1))

    def __rsub__(self, other: Int) -> Int:
        return self._binary(other, lambda a, b: a + b * _const(-1), swap=True)

    def __neg__(self) -> Int:
        with self.expr.context:
            return _make(self.expr * _const(-1), self.symbols)

    def __mul__(self, other: Int) -> Int:
        return self._binary(other, lambda a, b: a * b)

    __rmul__ = __mul__

    def __floordiv__(self, other: Int) -> Int:
        return self._binary(other, ir.AffineExpr.get_floor_div)

    def __rfloordiv__(self, other: Int) -> Int:
        return self._binary(other, ir.AffineExpr.get_floor_div, swap=True)

    def __mod__(self, other: Int) -> Int:
        return self._binary(other, ir.AffineExpr.get_mod)

    def __rmod__(self, other: Int) -> Int:
        return self._binary(other, ir.AffineExpr.get_mod, swap=True)

    # --- comparison -------------------------------------------------------------------------
    def __eq__(self, other) -> bool:
        if not isinstance(other, (int, SymExpr)):
            return NotImplemented
        return (self - other) == 0 if isinstance(self - other, int) else False

    def __hash__(self) -> int:
        # Equal expressions use the same symbols (unused ones are dropped on construction).
        return hash(frozenset(self.symbols))

    def __repr__(self) -> str:
        return f"SymExpr({self.expr} over {len(self.symbols)} symbols)"

    def __str__(self) -> str:
        return show(self)


def _make(expr: ir.AffineExpr, symbols: Sequence[ir.Value]) -> Int:
    """An int when `expr` is constant, else a SymExpr over exactly the symbols it uses."""
    with expr.context:  # (callers need not be inside one)
        return _make_in_context(expr, symbols)


def _make_in_context(expr: ir.AffineExpr, symbols: Sequence[ir.Value]) -> Int:
    expr = ir.AffineExpr.simplify_affine_expr(expr, 0, len(symbols))
    e = expr.maybe_downcast()
    if isinstance(e, ir.AffineConstantExpr):
        return e.value
    used = sorted(used_symbols(expr))
    if len(used) == len(symbols):
        return SymExpr(expr, symbols)
    remap = [_const(0)] * len(symbols)
    for new, old in enumerate(used):
        remap[old] = ir.AffineSymbolExpr.get(new)
    return SymExpr(substitute(expr, [], remap), [symbols[k] for k in used])


def as_int(x: Int) -> int | None:
    """The value of a constant (an int, or a SymExpr that folded to one), else None."""
    return x if isinstance(x, int) else x.as_int()


def product(values: Iterable[Int]) -> Int:
    """The product of ints and SymExprs, left to right (`n * m`: the order printed)."""
    out: Int = 1
    for v in values:
        out = out * v if isinstance(out, SymExpr) else v * out
    return out


def ceildiv(a: Int, b: Int) -> Int:
    if isinstance(a, int) and isinstance(b, int):
        return -(-a // b)
    if isinstance(a, int):
        a = _make(_const(a), ())
    assert isinstance(a, SymExpr)
    return a._binary(b, ir.AffineExpr.get_ceil_div)


# --- facts ------------------------------------------------------------------------------------
def divisible(x: Int, k: int, facts: Iterable[tuple[ir.Value, int]] = ()) -> bool:
    """Whether `k` divides `x` for every value of its symbols, given `facts`: pairs
    (symbol, m) each stating `symbol % m == 0` (from `tir.assume`)."""
    if isinstance(x, int):
        return x % k == 0
    mult = {}
    for value, m in facts:
        if value in x.symbols:
            mult[x.symbols.index(value)] = m
    # Writing each symbol known to be a multiple of m as m * s makes the fact part of the
    # expression, so MLIR's simplification of `expr mod k` decides it.
    subst = [ir.AffineSymbolExpr.get(i) * _const(mult.get(i, 1)) for i in range(len(x.symbols))]
    rem = ir.AffineExpr.simplify_affine_expr(
        ir.AffineExpr.get_mod(substitute(x.expr, [], subst), _const(k)), 0, len(x.symbols)
    )
    c = rem.maybe_downcast()
    return isinstance(c, ir.AffineConstantExpr) and c.value == 0


# --- showing ----------------------------------------------------------------------------------
def symbol_name(value: ir.Value) -> str:
    """The TVMScript name of a symbol: its argument's `tir.name` (docs/symbolic.md), else
    the value as MLIR prints it."""
    owner = value.owner
    if isinstance(owner, ir.Block) and owner.owner.operation.name == "func.func":
        attrs = owner.owner.operation.attributes
        if "arg_attrs" in attrs:
            arg = ir.ArrayAttr(attrs["arg_attrs"])[value.arg_number]
            entries = {n.name: n.attr for n in ir.DictAttr(arg)}
            if "tir.name" in entries:
                return ir.StringAttr(entries["tir.name"]).value
    return value.get_name()


def show(x: Int) -> str:
    """`x` as TVMScript would write it, for messages (`n * 4`, `(n + 3) // 4`)."""
    if isinstance(x, int):
        return str(x)
    return _show(x.expr, [symbol_name(s) for s in x.symbols], 0)


_PREC = {
    ir.AffineAddExpr: (1, " + "),
    ir.AffineMulExpr: (2, " * "),
    ir.AffineFloorDivExpr: (2, " // "),
    ir.AffineModExpr: (2, " % "),
}


def _show(expr: ir.AffineExpr, names: Sequence[str], outer: int) -> str:
    e = expr.maybe_downcast()
    if isinstance(e, ir.AffineConstantExpr):
        return str(e.value)
    if isinstance(e, ir.AffineSymbolExpr):
        return names[e.position]
    if isinstance(e, ir.AffineDimExpr):
        return f"d{e.position}"
    if not isinstance(e, ir.AffineBinaryExpr):
        raise TypeError(f"unknown affine expression {e}")
    if isinstance(e, ir.AffineCeilDivExpr):
        return f"T.ceildiv({_show(e.lhs, names, 0)}, {_show(e.rhs, names, 0)})"
    prec, op = _PREC[type(e)]
    rhs = e.rhs.maybe_downcast()
    if isinstance(e, ir.AffineAddExpr) and isinstance(rhs, ir.AffineConstantExpr) and rhs.value < 0:
        text = f"{_show(e.lhs, names, prec)} - {-rhs.value}"
    else:
        text = f"{_show(e.lhs, names, prec)}{op}{_show(e.rhs, names, prec + 1)}"
    return f"({text})" if prec < outer else text


# --- symbols of a function ---------------------------------------------------------------------
def _parent_op(v: ir.Value):
    if isinstance(v.owner, ir.Block):
        owner = v.owner.owner
        return None if owner is None else getattr(owner, "operation", owner), True
    parent = v.owner.operation.parent
    return None if parent is None else parent.operation, False


def is_symbol(v: ir.Value) -> bool:
    """Whether `v` is a symbol of its function: an `index` value defined at the top level of
    the body (an argument, or the result of an op there)."""
    if not isinstance(v.type, ir.IndexType):
        return False
    parent, _ = _parent_op(v)
    return parent is not None and parent.name == "func.func"


# --- range facts ------------------------------------------------------------------------------
# Symbols are sizes (buffer dimensions, extents): never negative. Bounds are what that and the
# expression's form prove; None where nothing is proved.
def bounds(x: Int) -> tuple[int | None, int | None]:
    """(lowest, highest) value of `x` over all symbol values >= 0; None for an unbounded side."""
    if isinstance(x, int):
        return x, x
    return _bounds(x.expr)


def _bounds(expr: ir.AffineExpr) -> tuple[int | None, int | None]:
    e = expr.maybe_downcast()
    if isinstance(e, ir.AffineConstantExpr):
        return e.value, e.value
    if isinstance(e, ir.AffineSymbolExpr):
        return 0, None
    if not isinstance(e, ir.AffineBinaryExpr):
        return None, None  # a dim
    if isinstance(e, ir.AffineAddExpr):
        c = _minus_mod(e.lhs, e.rhs) or _minus_mod(e.rhs, e.lhs)
        if c:  # (x // c) * c - x is -(x % c)
            return 1 - c, 0
    (alo, ahi), (blo, bhi) = _bounds(e.lhs), _bounds(e.rhs)
    if isinstance(e, ir.AffineAddExpr):
        return (
            None if alo is None or blo is None else alo + blo,
            None if ahi is None or bhi is None else ahi + bhi,
        )
    if isinstance(e, ir.AffineMulExpr):
        if blo is not None and blo == bhi:  # by a constant
            k = blo
            lo, hi = (alo, ahi) if k >= 0 else (ahi, alo)
            return (None if lo is None else lo * k, None if hi is None else hi * k)
        if alo is not None and blo is not None and alo >= 0 and blo >= 0:
            return alo * blo, (None if ahi is None or bhi is None else ahi * bhi)
        return None, None
    if blo is None or blo != bhi or blo <= 0:  # (by a positive constant only)
        return None, None
    k = blo
    if isinstance(e, ir.AffineModExpr):
        return 0, k - 1
    div = (lambda a: -(-a // k)) if isinstance(e, ir.AffineCeilDivExpr) else (lambda a: a // k)
    return (None if alo is None else div(alo), None if ahi is None else div(ahi))


def _minus_mod(a: ir.AffineExpr, b: ir.AffineExpr) -> int:
    """c when `a` is `(x floordiv c) * c` and `b` is `x * -1`, else 0."""
    a, b = a.maybe_downcast(), b.maybe_downcast()
    if not (isinstance(a, ir.AffineMulExpr) and isinstance(b, ir.AffineMulExpr)):
        return 0
    div, k = a.lhs.maybe_downcast(), a.rhs.maybe_downcast()
    x, minus = b.lhs, b.rhs.maybe_downcast()
    if (
        isinstance(div, ir.AffineFloorDivExpr)
        and isinstance(k, ir.AffineConstantExpr)
        and isinstance(minus, ir.AffineConstantExpr)
        and minus.value == -1
        and div.lhs == x
        and div.rhs.maybe_downcast() == k
        and k.value > 0
    ):
        return k.value
    return 0


def prove_le(a: Int, b: Int) -> bool:
    """Whether a <= b for all symbol values (>= 0); a symbol defined as the min of sizes
    (`T.min(n, 64)`) is at most each of them."""
    return _nonpositive(a - b, 2)


def _nonpositive(d: Int, depth: int) -> bool:
    hi = bounds(d)[1]
    if hi is not None and hi <= 0:
        return True
    if depth == 0 or isinstance(d, int):
        return False
    for k, value in enumerate(d.symbols):
        parts = _min_operands(value)
        if not parts:
            continue
        # d grows with this symbol: replacing it by one of the sizes it is the min of
        # bounds d from above
        one = [
            ir.AffineSymbolExpr.get(j) + (_const(1) if j == k else _const(0))
            for j in range(len(d.symbols))
        ]
        with d.expr.context:
            step = _make(substitute(d.expr, [], one) - d.expr, d.symbols)
        if not isinstance(step, int) or step < 0:
            continue
        for part in parts:
            with d.expr.context:
                subs: List[ir.AffineExpr] = [
                    ir.AffineSymbolExpr.get(j) for j in range(len(d.symbols))
                ]
                syms = list(d.symbols)
                subs[k] = part.embed(syms) if isinstance(part, SymExpr) else _const(part)
                if _nonpositive(_make(substitute(d.expr, [], subs), syms), depth - 1):
                    return True
    return False


def _min_operands(value: ir.Value) -> list:
    """The operands (Ints) of a size defined as `arith.minsi`, else []."""
    owner = value.owner
    if isinstance(owner, ir.Block) or owner.name != "arith.minsi":
        return []
    out = []
    for v in owner.operands:
        o = v.owner
        if not isinstance(o, ir.Block) and o.name == "arith.constant":
            out.append(ir.IntegerAttr(o.attributes["value"]).value)
        else:
            out.append(SymExpr.symbol(v))
    return out


def prove_lt(a: Int, b: Int) -> bool:
    return prove_le(a + 1, b)


def smin(a: Int, b: Int) -> Int | None:
    """min(a, b) where it is provably one of them, else None."""
    if prove_le(a, b):
        return a
    return b if prove_le(b, a) else None


def smax(a: Int, b: Int) -> Int | None:
    """max(a, b) where it is provably one of them, else None."""
    if prove_le(a, b):
        return b
    return a if prove_le(b, a) else None


def evaluate(x: Int, values: dict, default: int | None = None) -> int:
    """The value of `x` when each symbol is `values[name]` (its TVMScript name), or
    `default` for those `values` does not give."""
    if isinstance(x, int):
        return x
    consts = []
    for s in x.symbols:
        name = symbol_name(s)
        if name not in values and default is None:
            raise KeyError(f"no value for {name} (evaluating {show(x)})")
        consts.append(int(values.get(name, default)))
    with x.expr.context:
        e = substitute(x.expr, [], [_const(v) for v in consts])
        e = ir.AffineExpr.simplify_affine_expr(e, 0, 0).maybe_downcast()
    assert isinstance(e, ir.AffineConstantExpr), e
    return e.value


def tile_count(x: Int, k: int) -> Int:
    """ceil(x / k) in TVM's canonical form: `(x + k - 1) // k`, a constant part pulled out
    (`(n * m + 1 + 7) // 8` is `n * m // 8 + 1`) and a floordiv inside merged
    (`(n // 4 + 3) // 4` is `(n + 12) // 16`): a split's outer extent prints as TVM's."""
    if isinstance(x, int):
        return -(-x // k)
    with x.expr.context:
        e = x.expr.maybe_downcast()
        inner, add = e, 0
        rhs = e.rhs.maybe_downcast() if isinstance(e, ir.AffineAddExpr) else None
        if isinstance(e, ir.AffineAddExpr) and isinstance(rhs, ir.AffineConstantExpr):
            inner, add = e.lhs.maybe_downcast(), rhs.value
        div = inner.rhs.maybe_downcast() if isinstance(inner, ir.AffineFloorDivExpr) else None
        if isinstance(inner, ir.AffineFloorDivExpr) and isinstance(div, ir.AffineConstantExpr):
            c = div.value  # (y // c + a + k - 1) // k
            return _make(
                ir.AffineExpr.get_floor_div(inner.lhs + _const(c * (add + k - 1)), _const(c * k)),
                x.symbols,
            )
        return _make(ir.AffineExpr.get_floor_div(e + _const(k - 1), _const(k)), x.symbols)
