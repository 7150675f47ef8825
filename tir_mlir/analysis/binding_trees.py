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

from tir_mlir.analysis import iter_map
from tir_mlir.analysis.iter_map import Tree
from tir_mlir.analysis.linear import linear
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
    form = linear(c.expr) if not c.is_eq else None
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


def written(block: ir.Operation, trees: Sequence[Optional[Tree]]) -> Dict[str, Tree]:
    """The hints that keep the bindings of a parsed block as the program wrote them, for
    those MLIR's simplifier changes and TVM keeps (a sum whole under `//`, `%` or `*`)."""
    b = Block(block)
    if b.symbols:
        return {}
    ranges = None
    out = {}
    for k, (t, e) in enumerate(zip(trees, b.bindings.results)):
        if t is None or iter_map.is_flat(t) or b.index_dtypes[k] != "int32":
            continue
        if iter_map.of_affine(e) == t:
            continue  # printed so anyway
        ranges = _ranges(b) if ranges is None else ranges
        if iter_map.same_value(t, e, ranges):
            out[str(e)] = t
    return out


def written_bounds(block: ir.Operation, trees: Sequence[Optional[Tree]]) -> Dict[str, Tree]:
    """The where_trees hints that keep the T.where bounds of a parsed block as the program
    wrote them (`trees`: one per constraint, None for one not written `x < c`), for those the
    printer would write otherwise."""
    b = Block(block)
    p = b.predicate
    cons = list(p.constraints) if p is not None else []
    if b.symbols or len(cons) != len(trees) or not _int32(b):
        return {}
    out = {}
    for t, c in zip(trees, cons):
        bound = _bound(c) if t is not None else None
        if t is None or bound is None or t == bound[0]:
            continue
        if _same(t, iter_map.to_affine(bound[0]), b):
            out[str(c.expr)] = t
    return out
