"""AffineExpr -> TVMScript text (`d0 * 4 + d1` -> `j_0 * 4 + j_1`), with TVM's precedence.

MLIR keeps a sum as `lhs + rhs` with constants and `x * -1` on the right; TVM writes those
as `a - 1` and `a - b`, which is what the printer must produce to re-parse to the same tree.
`int_dtype` is the TensorIR dtype of the expression: its constants print as `T.int64(4)` when
it is int64 (see `tir_mlir.ir.index_dtypes.expr_dtype`).
"""

from mlir import ir

from tir_mlir.ir.affine_exprs import const_of, sum_terms
from tir_mlir.printer.literals import int_text
from tir_mlir.printer.precedence import ADD, ATOM, MUL, wrap


def _negated(e: ir.AffineExpr):
    """`x` when e is `x * -1` (or `-c` for a constant), else None."""
    e = e.maybe_downcast()
    c = const_of(e)
    if c is not None:
        return ir.AffineConstantExpr.get(-c) if c < 0 else None
    r = const_of(e.rhs) if isinstance(e, ir.AffineMulExpr) else None
    if isinstance(e, ir.AffineMulExpr) and r is not None and r < 0:
        return e.lhs if r == -1 else e.lhs * -r
    return None


def affine_text(e: ir.AffineExpr, dim_names, sym_names=(), int_dtype="int32") -> tuple:
    """(text, precedence) of an affine expression; dim k prints as dim_names[k], symbol k as
    sym_names[k] (a name, or the (text, precedence) of the expression a symbol stands for)."""
    e = e.maybe_downcast()
    if isinstance(e, ir.AffineDimExpr):
        return dim_names[e.position], ATOM
    if isinstance(e, ir.AffineSymbolExpr):
        name = sym_names[e.position]
        return name if isinstance(name, tuple) else (name, ATOM)
    if isinstance(e, ir.AffineConstantExpr):
        return int_text(e.value, int_dtype), ATOM
    assert isinstance(e, ir.AffineBinaryExpr), e
    lhs = e.lhs
    names = (dim_names, sym_names, int_dtype)
    if isinstance(e, ir.AffineAddExpr):
        return _sum_text(e, *names)
    if isinstance(e, ir.AffineMulExpr):
        return _binop("*", MUL, lhs, e.rhs, *names)
    if isinstance(e, ir.AffineFloorDivExpr):
        return _binop("//", MUL, lhs, e.rhs, *names)
    if isinstance(e, ir.AffineModExpr):
        return _binop("%", MUL, lhs, e.rhs, *names)
    c = const_of(e.rhs)
    if isinstance(e, ir.AffineCeilDivExpr) and sym_names and c is not None:
        # TVM 0.21 has no ceildiv node: T.ceildiv(n, 4) and split's extents are (n + 3) // 4
        return _binop("//", MUL, lhs + (c - 1), e.rhs, *names)
    if isinstance(e, ir.AffineCeilDivExpr):
        a = affine_text(lhs, *names)[0]
        b = affine_text(e.rhs, *names)[0]
        return f"T.ceildiv({a}, {b})", ATOM
    raise TypeError(f"unknown affine expression {e}")


def _scale(t) -> int:
    t = t.maybe_downcast()
    c = const_of(t.rhs) if isinstance(t, ir.AffineMulExpr) else None
    return 1 if c is None else c


def _sum_text(e, dim_names, sym_names, int_dtype):
    """A sum in TVM's canonical order: terms by descending scale (stable), the constant last,
    so `vk_0 * 4 + vk_1` and `i - 1` (MLIR may hold `vk_1 + vk_0 * 4`)."""
    terms, const = sum_terms(e)
    terms = _fold_mods(terms)
    terms.sort(key=lambda t: -_scale(t))
    if const > 0 and terms and all(_negated(t) is not None for t in terms):
        terms.insert(0, ir.AffineConstantExpr.get(const))  # `7 - i`, as TVM simplifies it
    elif const or not terms:
        terms.append(ir.AffineConstantExpr.get(const))
    text, prec = affine_text(terms[0], dim_names, sym_names, int_dtype)
    for t in terms[1:]:
        neg = _negated(t)
        op, t = ("-", neg) if neg is not None else ("+", t)
        left = wrap((text, prec), ADD, right=False)
        right = wrap(affine_text(t, dim_names, sym_names, int_dtype), ADD, right=True)
        text, prec = f"{left} {op} {right}", ADD
    return text, prec


def _fold_mods(terms):
    """`x * c` and `x // d * -(c * d)` among the terms back to `x % d * c`: MLIR's affine
    simplifier holds a scaled mod (a fused loop's `f % 16 * 8`) in that flat form, which TVM
    reads as another expression."""
    out = list(terms)
    for t in terms:
        t = t.maybe_downcast()
        m = const_of(t.rhs) if isinstance(t, ir.AffineMulExpr) else None
        q = t.lhs.maybe_downcast() if m is not None else None
        if m is None or m >= 0 or not isinstance(q, ir.AffineFloorDivExpr):
            continue
        d = const_of(q.rhs)
        if d is None or d <= 0 or -m % d:
            continue
        c = -m // d
        partner = q.lhs if c == 1 else q.lhs * c
        match = next((u for u in out if u == partner), None)
        if match is None or t not in out:
            continue
        out.remove(match)
        out.remove(t)
        mod = ir.AffineExpr.get_mod(q.lhs, ir.AffineConstantExpr.get(d))
        out.append(mod if c == 1 else mod * c)
    return out


def _binop(op, prec, lhs, rhs, dim_names, sym_names, int_dtype):
    a = wrap(affine_text(lhs, dim_names, sym_names, int_dtype), prec, right=False)
    b = wrap(affine_text(rhs, dim_names, sym_names, int_dtype), prec, right=True)
    return f"{a} {op} {b}", prec


def constraint_text(
    expr: ir.AffineExpr, is_eq: bool, dim_names, int_dtype="int32", written: str = "", sym_names=()
) -> str:
    """One IntegerSet constraint (`expr >= 0` / `expr == 0`) written the way TVM's T.where is.

    `-(i * 4 + j) + 9 >= 0` reads back as `i * 4 + j < 10`; `i - 2 >= 0` as `2 <= i` (TVM's
    simplifier's spelling), or `i >= 2` when the program wrote it so, `1 < i` when TVM's
    simplifier would (`written`: the comparison operator to use, "" for the default).
    """
    pos, neg, const = _split_terms(expr)
    zero = ir.AffineConstantExpr.get(0)
    num = lambda c: int_text(c, int_dtype)  # noqa: E731
    if not neg or (pos and is_eq):
        lhs = _sum(pos, zero) if pos else _sum(neg, zero) * -1
        text = affine_text(lhs, dim_names, sym_names, int_dtype)[0]
        if is_eq:
            return f"{text} == {num(-const)}"
        if written == ">=":
            return f"{text} >= {num(-const)}"
        if written == "<":
            return f"{num(-const - 1)} < {text}"
        return f"{num(-const)} <= {text}"
    lhs = (
        _nested_split(neg, dim_names, int_dtype)
        or affine_text(_sum(neg, zero), dim_names, sym_names, int_dtype)[0]
    )
    if is_eq:
        return f"{lhs} == {num(const)}"
    rhs = _sum(pos, ir.AffineConstantExpr.get(const + 1))
    return f"{lhs} < {affine_text(rhs, dim_names, sym_names, int_dtype)[0]}"


def _nested_split(terms, dim_names, int_dtype):
    """`(i0 * 2 + i1) * 3 + i2` for `i0 * 6 + i1 * 3 + i2`: the bound a split into three or more
    loops puts on them, nested as TVM's split builds it (None unless the terms are loops with
    coefficients each a multiple of the next, the last 1)."""
    if len(terms) < 3:
        return None
    scaled = []
    for t in terms:
        t = t.maybe_downcast()
        c = _scale(t)
        d = (t.lhs if c != 1 else t).maybe_downcast()
        if not isinstance(d, ir.AffineDimExpr) or c < 1:
            return None
        scaled.append((c, d))
    scaled.sort(key=lambda x: -x[0])
    coeffs = [c for c, _ in scaled]
    if coeffs[-1] != 1 or any(a % b or a == b for a, b in zip(coeffs, coeffs[1:])):
        return None
    text = dim_names[scaled[0][1].position]
    for (c, _), (c2, d) in zip(scaled, scaled[1:]):
        inner = f"({text})" if " + " in text else text
        text = f"{inner} * {int_text(c // c2, int_dtype)} + {dim_names[d.position]}"
    return text


def _split_terms(expr):
    """Positive terms, negated negative terms, constant of a flattened sum."""
    terms, const = sum_terms(expr)
    pos, neg = [], []
    for t in terms:
        n = _negated(t)
        (neg if n is not None else pos).append(n if n is not None else t)
    return pos, neg, const


def _sum(terms, tail: ir.AffineExpr) -> ir.AffineExpr:
    """terms + tail (a constant; a zero tail is left out, the tail alone for no terms)."""
    out = None
    for t in terms:
        out = t if out is None else out + t
    if out is None:
        return tail
    return out if const_of(tail) == 0 else out + tail


def tree_text(t, dim_names, int_dtype="int32") -> tuple:
    """(text, precedence) of a binding tree as TVM's split/fuse wrote it
    (tir_mlir/analysis/iter_map.py): `(f0 * 1024 + f1) // 512`, operands in the tree's order."""
    if isinstance(t, int):
        return int_text(t, int_dtype), ATOM
    if t[0] == "v":
        return dim_names[t[1]], ATOM
    op, prec = (t[0], ADD if t[0] == "+" else MUL)
    a = wrap(tree_text(t[1], dim_names, int_dtype), prec, right=False)
    rhs = t[2] if t[0] == "+" else int(t[2])
    b = wrap(tree_text(rhs, dim_names, int_dtype), prec, right=True)
    return f"{a} {op} {b}", prec
