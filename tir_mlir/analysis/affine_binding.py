"""TVM's "affine binding" requirement (reorder, rfactor, ...): a block's bindings are fusions
and splits of its loops, each loop in one binding (a surjective iter map, read_inverse.py:
`v0 * 2 + v1` may overlap, `l * 16` may not skip), and its T.where only bounds such an
iterator (`i_0 * 4 + i_1 < 10` after a split, `2 <= j`). Bindings like `15 - i`,
`(i + j) % 16`, `i // 2 * 2 + j % 2`, or `T.where(i < j)` are not."""

from typing import Optional

from mlir import ir

from tir_mlir.ir.affine_exprs import dims_of
from tir_mlir.analysis import index
from tir_mlir.analysis.symbolic import SymExpr, substitute as sym_substitute
from tir_mlir.dialect.ops import Block, Loop
from tir_mlir.analysis.structure import result_dims, value_range
from tir_mlir.analysis.buffer_util import NotAffine, substitute, to_affine
from tir_mlir.analysis.linear import Linear, linear
from tir_mlir.analysis.read_inverse import NotInvertible, read_groups


def affine_binding_error(block: ir.Operation, fixed=()) -> Optional[str]:
    """Why the block's binding is not affine in TVM's sense, or None when it is. `fixed`:
    loop variables held constant (reorder's loops above the reordered ones): a binding that
    is not affine only in those is a constant here, as in TVM."""
    b = Block(block)
    leaves, constant = [], set()
    dims = []
    values = b.dims
    if all(isinstance(v.owner, ir.Block) for v in values) and len(set(values)) == len(values):
        # every dim is its own loop variable (the common case): the bindings are over the
        # leaves as they stand, no substitution needed (a fixed loop is a constant)
        constant = {k for k, v in enumerate(values) if any(v == f for f in fixed)}
        return _error(b, list(values), constant, None)
    for d in values:
        tried = list(leaves)
        try:
            dims.append(to_affine(d, tried))
            leaves[:] = tried
        except NotAffine as e:
            if not fixed or not _only_uses(d, fixed):
                return f"a binding is not affine ({e})"
            leaves.append(d)
            constant.add(len(leaves) - 1)
            dims.append(ir.AffineExpr.get_dim(len(leaves) - 1))
    constant |= {k for k, v in enumerate(leaves) if any(v == f for f in fixed)}
    return _error(b, leaves, constant, dims)


def _error(b: Block, leaves, constant, dims) -> Optional[str]:
    """affine_binding_error once the dims are AffineExprs `dims` over `leaves` (None: dim
    k is leaf k)."""
    bindings = b.bindings
    if dims is None:
        binds, used = list(bindings.results), result_dims(bindings)
    else:
        binds = [substitute(r, dims) for r in bindings.results]
        used = [dims_of(e) for e in binds]
    ranges = [(0, 0) if k in constant else value_range(v) for k, v in enumerate(leaves)]
    mins = [lo for lo, _ in ranges]
    extents = [
        _extent(v) if hi == index.UNKNOWN else hi - lo + 1 for v, (lo, hi) in zip(leaves, ranges)
    ]
    names = [f"loop {k}" for k in range(len(leaves))]
    # bindings to constants (unit loops included) take no part in the iter map
    exprs = [e for e, ks in zip(binds, used) if any(extents[k] != 1 for k in ks)]
    predicate = b.predicate
    constraints = []
    if predicate is not None:
        for c in predicate.constraints:
            expr = c.expr if dims is None else substitute(c.expr, dims)
            constraints.append((c.is_eq, expr, _dims_linear(expr)))
    try:
        groups = read_groups(
            exprs,
            mins,
            extents,
            names,
            all_used=False,
            reverse=False,
            surjective=True,
            symbols=b.symbols,
            limits=[u for _, e, lin in constraints for u in _upper_limit(e, lin, b.symbols)],
        )
    except NotInvertible as e:
        return f"its bindings are not an iter map of its loops: {e}"
    if constraints:
        forms = [linear(e) for e in binds]
        fused = [frozenset(f.terms.items()) for f in forms if f is not None and f.terms]
        fused += [s for e in binds for s in _divided_sums(e)]  # `(f0 * 1024 + f1) // 768`
        # the fused iterators of the iter map, also where MLIR split the sum up in the
        # binding (`f0 * 16384 + f1 * 64 + f2 // 16` for `(f0 * 262144 + ...) // 16`)
        fused += [frozenset(g.coeffs.items()) for g in groups]
        for is_eq, _, lin in constraints:
            if is_eq or lin is None or not _bounds_an_iterator(lin.terms, fused):
                return "its T.where is not a bound on one of its loop iterators"
    return None


def _extent(v: ir.Value):
    """The trip count of a loop over a size (`(n * m + 1023) // 1024`); UNKNOWN when the
    value is not such a loop's variable."""
    owner = v.owner
    if isinstance(owner, ir.Block) and owner.owner.operation.name == Loop.OP_NAME:
        loop = Loop(owner.owner.operation)
        if loop.constant_bounds and loop.min == 0:
            return loop.extent
    return index.UNKNOWN


def _upper_limit(expr: ir.AffineExpr, lin: Optional[Linear], symbols) -> list:
    """[(coefficients of F, U)] for a constraint `U - F - 1 >= 0` (`T.where(F < U)`), U an
    expression of sizes; [] for any other constraint."""
    if lin is None or not lin.terms or any(c > 0 for c in lin.terms.values()):
        return []
    rest = sym_substitute(
        expr,
        [ir.AffineExpr.get_constant(0)] * (max(dims_of(expr)) + 1),
        [ir.AffineExpr.get_symbol(k) for k in range(len(symbols))],
    )
    if _max_symbol(rest) >= len(symbols):
        return []
    return [({k: -c for k, c in lin.terms.items()}, SymExpr.from_affine(rest, symbols) + 1)]


def _divided_sums(expr: ir.AffineExpr) -> list:
    """The linear sums of loops a binding divides (`x` of `x // c`, `x % c`): a fused loop
    kept whole, which a T.where may bound as TVM's split puts it."""
    e = expr.maybe_downcast()
    if not isinstance(e, ir.AffineBinaryExpr):
        return []
    out = _divided_sums(e.lhs) + _divided_sums(e.rhs)
    if isinstance(e, (ir.AffineFloorDivExpr, ir.AffineModExpr)):
        form = linear(e.lhs)
        if form is not None and len(form.terms) > 1:
            out.append(frozenset(form.terms.items()))
    return out


def _dims_linear(expr: ir.AffineExpr) -> Optional[Linear]:
    """`linear(expr)` where symbols (`n`, in `i_0 * 4 + i_1 < n`) count as part of the
    constant: None unless the dims' coefficients do not depend on them."""
    n_sym = _max_symbol(expr) + 1
    if not n_sym:
        return linear(expr)
    n_dim = max(dims_of(expr), default=-1) + 1
    dims = [ir.AffineExpr.get_dim(k) for k in range(n_dim)]
    at = [
        linear(sym_substitute(expr, dims, [ir.AffineExpr.get_constant(v)] * n_sym)) for v in (0, 1)
    ]
    if at[0] is None or at[1] is None or at[0].terms != at[1].terms:
        return None
    return Linear(at[0].terms)


def _max_symbol(expr: ir.AffineExpr) -> int:
    e = expr.maybe_downcast()
    if isinstance(e, ir.AffineSymbolExpr):
        return e.position
    if isinstance(e, ir.AffineBinaryExpr):
        return max(_max_symbol(e.lhs), _max_symbol(e.rhs))
    return -1


def _only_uses(v: ir.Value, fixed) -> bool:
    """`v` is computed from constants and the `fixed` loop variables only."""
    if any(v == f for f in fixed):
        return True
    if isinstance(v.owner, ir.Block):
        return False
    op = v.owner
    return op.name == "arith.constant" or (
        len(op.operands) > 0 and all(_only_uses(x, fixed) for x in op.operands)
    )


def _bounds_an_iterator(coeffs: dict, fused) -> bool:
    """A constraint `±X + c >= 0` where X is a loop or a fused loop sum a binding uses."""
    if not coeffs:
        return True
    sign = 1 if next(iter(coeffs.values())) > 0 else -1
    terms = frozenset((k, c * sign) for k, c in coeffs.items())
    return (len(terms) == 1 and next(iter(terms))[1] == 1) or terms in fused
