"""A block's bindings as TVM's split/fuse write them: the hint trees (Block.binding_trees,
dialect/spelling.py) over the IR's affine maps, read and recorded.

`split`/`fuse` call `before(block)` for the trees of the bindings and T.where bounds they are
about to rewrite, then, once the block is rebound, `record(...)`: the binding trees with the
loop substituted, in TVM's iter-map normal form (analysis/iter_map.py), kept for each binding
whose printed form they change (`(f0 * 1024 + f1) // 512` where the map holds
`f0 * 2 + f1 floordiv 512`); the bounds substituted as they are (TVM does not simplify a
predicate: `i_0 * 100 + (i_1_0 * 10 + i_1_1) < 512`), the split's own bound added. A hint is
used only while it has the value of what the IR holds over the loops' ranges (`tree`,
`where_tree`), so a later rewrite that changes it, or the loops under it, leaves the IR's form.
"""

from typing import Dict, List, Optional, Sequence, Tuple

from mlir import ir

from tir_mlir.analysis import index, iter_map
from tir_mlir.analysis.iter_map import Tree
from tir_mlir.analysis.linear import linear
from tir_mlir.ir.affine_exprs import const_of, sum_terms
from tir_mlir.analysis.structure import is_loop, op_of, value_range
from tir_mlir.dialect.ops import Block, Loop


class _Ranges(dict):
    """Dim position -> inclusive range of the block's dim, computed on first use."""

    def __init__(self, dims):
        super().__init__()
        self.dims = dims

    def __missing__(self, k):
        r = self[k] = value_range(self.dims[k])
        return r

    def get(self, k, default=None):
        return self[k] if 0 <= k < len(self.dims) else default


def _ranges(b: Block) -> Dict[int, Tuple[int, int]]:
    return _Ranges(list(b.dims))


def tree(b: Block, k: int, hints: Optional[dict] = None) -> Optional[Tree]:
    """The hint tree of binding k when it still has the binding's value, else None
    (`hints`: the block's `binding_trees`, when the caller has them)."""
    e = b.bindings.results[k]
    t = (b.binding_trees if hints is None else hints).get(str(e))
    if t is None or not _int32(b):
        return None
    return t if _same(t, e, b) else None


def _same(t: Tree, e: ir.AffineExpr, b: Block) -> bool:
    ranges = [value_range(v) for v in b.dims]
    key = (t, str(e), tuple(ranges))
    same = _CHECKED.get(key)
    if same is None:
        if len(_CHECKED) > 10000:
            _CHECKED.clear()
        same = _CHECKED[key] = iter_map.same_value(t, e, dict(enumerate(ranges)))
    return same


# (tree, expression, ranges) -> whether they agree: printing asks again for every print
_CHECKED: Dict[tuple, bool] = {}


def _bound(c) -> Optional[Tuple[Tree, int]]:
    """A T.where constraint `u - 1 - sum >= 0` as (the sum of loops, u): `sum < u`; None for
    any other constraint (not modelled)."""
    return None if c.is_eq else _bound_of(c.expr)


def _bound_of(expr: ir.AffineExpr) -> Optional[Tuple[Tree, int]]:
    form = linear(expr)
    if form is None or not form.terms or any(v >= 0 for v in form.terms.values()):
        return None
    t: Tree = 0
    for pos, coeff in sorted(form.terms.items(), key=lambda pc: pc[1]):
        t = iter_map.add(t, iter_map.mul(("v", pos), -coeff))
    return t, form.const + 1


def where_tree(b: Block, c, hints: Optional[dict] = None) -> Optional[Tuple[Tree, int]]:
    """(the hint tree, u) of T.where constraint c, `tree < u`, while the tree has the value
    of the sum the constraint bounds; else None (`hints`: the block's `where_trees`)."""
    t = (b.where_trees if hints is None else hints).get(str(c.expr))
    bound = _bound(c) if t is not None else None
    if t is None or bound is None or not _int32(b):
        return None
    return (t, bound[1]) if _same(t, iter_map.to_affine(bound[0]), b) else None


def _int32(b: Block) -> bool:
    """Whether the block's iter vars and loops are int32 (a tree prints its constants bare)."""
    if any(d != "int32" for d in b.index_dtypes):
        return False
    for v in b.dims:
        owner = v.owner
        if isinstance(owner, ir.Block) and is_loop(op_of(owner.owner)):
            if Loop(op_of(owner.owner)).index_dtype != "int32":
                return False
    return True


Before = Tuple[List[Optional[Tree]], List[Optional[Tree]]]


def before(block: ir.Operation) -> Before:
    """(the trees of the block's bindings, those of the sums its T.where constraints bound):
    the hints, else the affine forms (None for one over symbols, or a constraint that is no
    upper bound), over the block's dims."""
    b = Block(block)
    p = b.predicate
    cons = list(p.constraints) if p is not None else []
    if b.symbols:
        return [None] * len(b.iter_names), [None] * len(cons)
    hints = b.binding_trees
    out: List[Optional[Tree]] = []
    for k, e in enumerate(b.bindings.results):
        t = hints.get(str(e))
        out.append(t if t is not None and tree(b, k, hints) is not None else iter_map.of_affine(e))
    wheres = b.where_trees if cons else {}
    bounds: List[Optional[Tree]] = []
    for c in cons:
        hint = where_tree(b, c, wheres) if wheres else None
        bound = hint or _bound(c)
        bounds.append(bound[0] if bound is not None else None)
    return out, bounds


def _extents(b: Block) -> Dict[int, int]:
    """Dim position -> extent, for the dims that are loops from 0 of constant extent."""
    out = {}
    for k, v in enumerate(b.dims):
        owner = v.owner
        if isinstance(owner, ir.Block) and is_loop(op_of(owner.owner)):
            lp = Loop(op_of(owner.owner))
            if lp.min == 0 and isinstance(lp.extent, int):
                out[k] = lp.extent
    return out


def _bounds(b: Block) -> Optional[List[Tuple[Tree, int]]]:
    """The T.where constraints as (sum of loops, upper bound): `c - sum - 1 >= 0` is
    `sum < c`. None for any other constraint (not modelled)."""
    p = b.predicate
    if p is None:
        return []
    out = []
    for c in p.constraints:
        bound = _bound(c)
        if bound is None:
            return None
        out.append(bound)
    return out


def record(
    block: ir.Operation,
    old: Before,
    old_dims: Sequence[ir.Value],
    new_dims: Sequence[ir.Value],
    replaced: Sequence[Tuple[ir.Value, Tree]],
    keep_unit: bool,
    appended: Optional[Tree] = None,
):
    """Give the rebound `block` (dims `new_dims`) the hint trees of its bindings and T.where:
    `old` (from `before`) over `old_dims`, each old dim of `replaced` standing for its tree over
    the new dims, the others moved to their position among the new dims; for the bindings,
    TVM's normal form of the result, with unit loops 0 unless `keep_unit`; `appended`: the sum
    of the constraint the rewrite added after the old ones."""
    b = Block(block)
    new_dims = list(new_dims)
    if b.symbols or not _int32(b) or list(b.dims) != new_dims:
        return
    subst: Dict[int, Tree] = {}
    for k, v in enumerate(old_dims):
        hit = next((t for d, t in replaced if d == v), None)
        if hit is not None:
            subst[k] = hit
        elif v in new_dims:
            subst[k] = ("v", new_dims.index(v))
        else:
            return
    trees, bounds = old
    bounds = [None if t is None else iter_map.substitute(t, subst) for t in bounds]
    _record_wheres(b, bounds + ([appended] if appended is not None else []))
    known = [t for t in trees if t is not None]
    if len(known) != len(trees):
        return
    trees = [iter_map.substitute(t, subst) for t in known]
    if keep_unit and all(iter_map.is_plain(t) for t in trees):
        b.binding_trees = {}  # plain sums (a split of a plain loop): printed so anyway
        return
    bounds = _bounds(b)
    if bounds is None:
        return
    new = iter_map.simplify(trees, _extents(b), bounds, not keep_unit)
    if new is None:
        return
    ranges = _ranges(b)
    hints = {}
    for t, e in zip(new, b.bindings.results):
        if (not iter_map.is_flat(t) or iter_map.to_affine(t) != e) and iter_map.same_value(
            t, e, ranges
        ):
            hints[str(e)] = t
    b.binding_trees = hints


def _record_wheres(b: Block, bounds: Sequence[Optional[Tree]]):
    """The where_trees hints: the bound sums, one per constraint of the rebound block in
    order, each kept while it has the value of the sum its constraint bounds."""
    p = b.predicate
    cons = list(p.constraints) if p is not None else []
    hints = {}
    if len(cons) == len(bounds):
        for t, c in zip(bounds, cons):
            bound = _bound(c) if t is not None else None
            if t is not None and bound is not None and _same(t, iter_map.to_affine(bound[0]), b):
                hints[str(c.expr)] = t
    if hints or b.where_trees:
        b.where_trees = hints


def written(
    block: ir.Operation, trees: Sequence[Optional[Tree]], bounds: Sequence[Optional[Tree]]
) -> Tuple[Dict[str, Tree], Dict[str, Tree]]:
    """The hints (binding_trees, where_trees) that keep a parsed block's bindings and T.where
    bounds as the program wrote them (`trees`, `bounds`: one per binding / constraint, None
    where not modelled), for those the printer would write otherwise (TVM keeps a sum whole
    under `//`, `%`, `*`, or nested). Those are range-simplified in the IR, as split/fuse hold
    them, and the dims renumbered by their first use in the maps, so a printed schedule parses
    back to its own maps (`(a * 128 + d) // 32` is `a * 4` for d < 32)."""
    b = Block(block)
    p = b.predicate
    cons = list(p.constraints) if p is not None else []
    if b.symbols or not _int32(b):
        return {}, {}
    bounds = list(bounds) if len(bounds) == len(cons) else [None] * len(cons)
    trees, ranges = list(trees), _ranges(b)
    results = list(b.bindings.results)
    exprs, eqs = [c.expr for c in cons], [c.is_eq for c in cons]
    changed = False
    for k, t in enumerate(trees):
        if t is not None and not iter_map.is_flat(t):
            simple = index.simplify(results[k], ranges)
            if simple != results[k] and iter_map.same_value(t, simple, ranges):
                results[k], changed = simple, True
    for k, t in enumerate(bounds):
        if t is not None and not eqs[k] and _bound_of(exprs[k]) is None:
            simple = index.simplify(exprs[k], ranges)  # (a fused sum MLIR kept)
            bound = _bound_of(simple)
            if bound is not None and iter_map.same_value(t, iter_map.to_affine(bound[0]), ranges):
                exprs[k], changed = simple, True
    if changed:
        n = len(b.dims)
        first: Dict[int, Tuple[int, int]] = {}
        for i, e in enumerate(results + exprs):
            for j, d in enumerate(_print_order(e)):
                first.setdefault(d, (i, j))
        order = sorted(range(n), key=lambda d: first.get(d, (len(results) + len(exprs), d)))
        if order != list(range(n)):
            inv = {old: new for new, old in enumerate(order)}
            rename = ir.AffineMap.get(n, 0, [ir.AffineDimExpr.get(inv[k]) for k in range(n)])
            results = [_in_print_order(e.compose(rename)) for e in results]
            exprs = [e.compose(rename) for e in exprs]
            dims = list(b.dims)
            for new_pos, old_pos in enumerate(order):
                b.op.operands[new_pos] = dims[old_pos]
            sub: Dict[int, Tree] = {k: ("v", inv[k]) for k in range(n)}
            trees = [None if t is None else iter_map.substitute(t, sub) for t in trees]
            bounds = [None if t is None else iter_map.substitute(t, sub) for t in bounds]
            ranges = _ranges(b)
        b.op.attributes["bindings"] = ir.AffineMapAttr.get(ir.AffineMap.get(n, 0, results))
        if p is not None:
            new_set = ir.IntegerSet.get(n, 0, exprs, eqs)
            b.set_attr("predicate", ir.IntegerSetAttr.get(new_set))
    hints: Dict[str, Tree] = {}
    for t, e in zip(trees, results):
        if t is None or iter_map.of_affine(e) == t:
            continue
        if iter_map.is_flat(t) and not _out_of_order(t):
            continue
        if iter_map.same_value(t, e, ranges):
            hints[str(e)] = t
    wheres: Dict[str, Tree] = {}
    for t, e, eq in zip(bounds, exprs, eqs):
        bound = _bound_of(e) if t is not None and not eq else None
        if t is None or bound is None or t == bound[0]:
            continue
        if iter_map.same_value(t, iter_map.to_affine(bound[0]), ranges):
            wheres[str(e)] = t
    return hints, wheres


def _print_order(e: ir.AffineExpr) -> List[int]:
    """The dims of e in the order the printer writes them (a sum's terms by descending
    scale, as printer/affine_text.py), which is the order a parse of that text numbers them."""
    terms, _ = sum_terms(e)
    terms.sort(key=_scale_of, reverse=True)
    out: List[int] = []
    stack = list(reversed(terms))
    while stack:
        x = stack.pop().maybe_downcast()
        if isinstance(x, ir.AffineDimExpr):
            out.append(x.position)
        elif isinstance(x, ir.AffineBinaryExpr):
            stack.extend((x.rhs, x.lhs))
    return out


def _scale_of(t: ir.AffineExpr) -> int:
    t = t.maybe_downcast()
    c = const_of(t.rhs) if isinstance(t, ir.AffineMulExpr) else None
    return 1 if c is None else c


def _in_print_order(e: ir.AffineExpr) -> ir.AffineExpr:
    """e with its sum's terms in the printer's order (as a parse of the printed text has
    them): `d4 * 32 + d5`, not `d5 + d4 * 32`."""
    terms, c = sum_terms(e)
    if len(terms) < 2:
        return e
    terms.sort(key=_scale_of, reverse=True)
    out = terms[0]
    for t in terms[1:]:
        out = out + t
    return out + c if c else out


def _out_of_order(t: Tree) -> bool:
    """Whether a sum was written with a term of smaller scale before a larger one
    (`i2_3 + f % 2 * 28 + i2_1 * 14`): the printer sorts a sum by descending scale, TVM keeps
    it as written. Constants are left aside (`8 + i` has its own hint)."""
    terms: List[Tree] = []
    while isinstance(t, tuple) and t[0] == "+":
        terms.append(t[2])
        t = t[1]
    terms.append(t)
    scales = [x[2] if x[0] == "*" else 1 for x in reversed(terms) if isinstance(x, tuple)]
    return any(a < b for a, b in zip(scales, scales[1:]))
