"""decompose_padding: split a padding block into a block that fills the whole buffer with the
pad value and a block that copies only the valid region (TVM 0.21's output):

    for h, w in T.grid(8, 8):                    for h, w in T.grid(8, 8):
        with T.block("Apad"):                        with T.block("Apad_pad_const"):
            vh, vw = T.axis.remap("SS", [h, w])          vh, vw = T.axis.remap("SS", [h, w])
            Apad[vh, vw] = T.if_then_else(     ==>       Apad[vh, vw] = T.float32(0)
                1 <= vh and vh < 7 and ...,          for h, w in T.grid(6, 6):
                A[vh - 1, vw - 1], T.float32(0))         with T.block("Apad"):
                                                         vh, vw = T.axis.remap("SS", [h, w])
                                                         Apad[vh + 1, vw + 1] = A[vh, vw]

The fill block is a copy of the loops from `loop` down to the block, placed before `loop`;
as in TVM its loops are serial and bare, and neither block keeps the block's annotations.
In the copy block each iter var v the condition bounds to [lo, hi) becomes v' = v - lo over
[0, hi - lo): a loop bound to v alone (under `loop`, holding only this block) shrinks to
hi - lo; otherwise the binding is shifted and `T.where(lo <= binding < hi)` added.

Legality: `loop` encloses the block; the block is spatial, without init or nested blocks, and
its body is one store of `T.if_then_else(cond, value, pad)` where `pad` reads no buffer and
`cond` is a conjunction of comparisons each bounding one iter var by constants and
excluding some element; `pad` is constant (reads no buffer, uses no variable).
`can_decompose_padding` answers whether these hold.
"""

from typing import Dict, List, Tuple

from mlir import ir
from mlir.dialects import arith

from tir_mlir.dialect.ops import Block, Loop
from tir_mlir.errors import ScheduleError
from tir_mlir.analysis import structure as analysis, index
from tir_mlir.analysis.buffer_util import (
    NotAffine,
    emit_index,
    i64_array,
    replace_uses,
    simplify,
    to_affine,
)
from tir_mlir.analysis.linear import linear
from tir_mlir.analysis.expr_tree import clone_tree, erase_dead

WHO = "decompose_padding"
# arith.cmpi predicate -> (sign, offset): `a OP b` holds iff sign * (a - b) < offset
_CMP = {
    "slt": (1, 0),
    "sle": (1, 1),
    "sgt": (-1, 0),
    "sge": (-1, 1),
    "ult": (1, 0),
    "ule": (1, 1),
    "ugt": (-1, 0),
    "uge": (-1, 1),
}
_INF = 1 << 62
_CMP_CODES = {2: "slt", 3: "sle", 4: "sgt", 5: "sge", 6: "ult", 7: "ule", 8: "ugt", 9: "uge"}


class _Plan:
    """What the checks found: the store, the if_then_else, the valid range per iter var, the
    bounds in the order the condition gives them ((k, "lo" | "hi")), the loops from `loop`."""

    def __init__(self, store, ifop, ranges, sides, path):
        self.store, self.ifop, self.ranges, self.sides, self.path = store, ifop, ranges, sides, path


def check(blk: Block, loop: ir.Operation) -> _Plan:
    """All legality checks; raises ScheduleError, mutates nothing."""
    if not analysis.is_ancestor(loop, blk.op):
        raise ScheduleError(f"{WHO}: loop {Loop(loop).name!r} does not enclose block {blk.name!r}")
    if blk.init is not None or any(t != "S" for t in blk.iter_types):
        raise ScheduleError(f"{WHO}: block {blk.name!r} is not a spatial block without init")
    ops = list(analysis.walk(blk.op))
    if any(o.name in ("tir.block", "affine.for", "memref.alloc") for o in ops):
        raise ScheduleError(f"{WHO}: block {blk.name!r} is not a single store")
    stores = [o for o in ops if o.name == "memref.store"]
    if len(stores) != 1:
        raise ScheduleError(f"{WHO}: block {blk.name!r} must have exactly one store")
    store = stores[0]
    ifop = store.operands[0].owner
    if (
        isinstance(ifop, ir.Block)
        or ifop.name != "scf.if"
        or len(ifop.regions) != 2
        or not len(ifop.regions[1].blocks)
    ):
        raise ScheduleError(
            f"{WHO}: block {blk.name!r} does not store T.if_then_else(cond, value, pad_value)"
        )
    pad = _yielded(ifop.regions[1].blocks[0])
    if _varying(pad):
        raise ScheduleError(f"{WHO}: the pad value of block {blk.name!r} should be constant")
    ranges = {k: (lo, lo + ext) for k, (lo, ext) in enumerate(blk.domains)}
    sides = []
    for c in _conjuncts(ifop.operands[0]):
        k, lo, hi = _bound(c, blk)
        side = (k, "lo" if hi == _INF else "hi")
        if side not in sides:
            sides.append(side)
        ranges[k] = (max(ranges[k][0], lo), min(ranges[k][1], hi))
        if ranges[k][0] >= ranges[k][1]:
            raise ScheduleError(
                f"{WHO}: block {blk.name!r} writes no valid element "
                f"(iter var {blk.iter_names[k]!r} has an empty range)"
            )
    if all(ranges[k] == (lo, lo + ext) for k, (lo, ext) in enumerate(blk.domains)):
        raise ScheduleError(
            f"{WHO}: the in-bound predicate of block {blk.name!r} is trivial "
            f"(it excludes no element)"
        )
    loops = analysis.enclosing_loops(blk.op)
    path = loops[next(i for i, lp in enumerate(loops) if lp == loop) :]
    return _Plan(store, ifop, ranges, sides, path)


def _yielded(block: ir.Block) -> ir.Value:
    return analysis.terminator(block).operands[0]


def _varying(v: ir.Value) -> bool:
    """Whether `v` reads a buffer or uses a variable (an iter var or loop var)."""
    if isinstance(v.owner, ir.Block):
        return True
    op = analysis.op_of(v.owner)
    return (
        op.name == "memref.load"
        or any(_varying(o) for o in op.operands)
        or any(
            _varying(o)
            for inner in analysis.walk(op)
            for o in inner.operands
            if not (
                isinstance(o.owner, ir.Block)
                and analysis.is_ancestor(op, analysis.op_of(o.owner.owner))
            )
        )
    )


def _conjuncts(cond: ir.Value) -> List[ir.Operation]:
    owner = cond.owner
    if not isinstance(owner, ir.Block) and owner.name == "arith.andi":
        return _conjuncts(owner.operands[0]) + _conjuncts(owner.operands[1])
    if isinstance(owner, ir.Block) or owner.name != "arith.cmpi":
        raise ScheduleError(f"{WHO}: the padding condition is not a conjunction of comparisons")
    return [analysis.op_of(owner)]


def _bound(cmp: ir.Operation, blk: Block) -> Tuple[int, int, int]:
    """(iter var index, lo, hi) that the comparison `cmp` bounds."""
    pred = _CMP_CODES.get(ir.IntegerAttr(cmp.attributes["predicate"]).value)
    leaves: list = []
    try:
        expr = to_affine(cmp.operands[0], leaves) - to_affine(cmp.operands[1], leaves)
    except NotAffine:
        expr = None
    lin = linear(expr) if expr is not None and pred is not None else None
    args = blk.iter_vars
    if (
        pred is None
        or lin is None
        or len(lin.terms) != 1
        or not any(leaves[next(iter(lin.terms))] == a for a in args)
    ):
        raise ScheduleError(
            f"{WHO}: block iters are not independent wrt the padding condition "
            f"(a comparison does not bound one iter var by constants)"
        )
    (pos, coeff), const = next(iter(lin.terms.items())), lin.const
    k = next(i for i, a in enumerate(args) if a == leaves[pos])
    sign, offset = _CMP[pred]
    # sign * (coeff * v + const) < offset, i.e. c * v < m
    c, m = sign * coeff, offset - sign * const
    if c > 0:
        return k, -_INF, -(-m // c)  # v < ceil(m / c)
    return k, (-m) // -c + 1, _INF  # v > -m / |c|


def decompose_padding(blk: Block, loop: ir.Operation) -> Block:
    """Rewrite (see the module doc); returns the fill block."""
    plan = check(blk, loop)
    _fold_outer_unit_loops(blk, plan.path)
    fill = _build_fill(blk, plan, loop)
    _strip_condition(plan.ifop)
    _narrow(blk, plan)
    blk.set_attr("annotations", None)  # TVM rebuilds both blocks without annotations
    return fill


def _fold_outer_unit_loops(blk: Block, path):
    """Bindings use the min of a unit loop outside `loop` instead of its variable (as TVM)."""
    n = len(blk.dims)
    subs: List[ir.AffineExpr] = [ir.AffineExpr.get_dim(p) for p in range(n)]
    for p, d in enumerate(blk.dims):
        owner = d.owner.owner if isinstance(d.owner, ir.Block) else None
        if (
            owner is not None
            and analysis.is_loop(analysis.op_of(owner))
            and not any(lp == analysis.op_of(owner) for lp in path)
            and Loop(analysis.op_of(owner)).extent == 1
        ):
            unit_min = Loop(analysis.op_of(owner)).min
            if isinstance(unit_min, int):  # (a symbolic one stays the loop's value)
                subs[p] = ir.AffineExpr.get_constant(unit_min)
    if all(isinstance(e, ir.AffineDimExpr) for e in subs):
        return
    sub_map = ir.AffineMap.get(n, 0, subs)
    results = [simplify(e.compose(sub_map), n) for e in blk.bindings.results]
    blk.op.attributes["bindings"] = ir.AffineMapAttr.get(ir.AffineMap.get(n, 0, results))
    if blk.predicate is not None:
        cs = blk.predicate.constraints
        blk.set_attr(
            "predicate",
            ir.IntegerSetAttr.get(
                ir.IntegerSet.get(
                    n, 0, [simplify(c.expr.compose(sub_map), n) for c in cs], [c.is_eq for c in cs]
                )
            ),
        )


def _build_fill(blk: Block, plan: _Plan, loop: ir.Operation) -> Block:
    loc = blk.op.location
    ivs: Dict = {}
    ip = ir.InsertionPoint(loop)
    for lp in map(Loop, plan.path):  # serial and bare, as TVM builds them (fuzzer seed 2617)
        new = Loop.build(
            lp.name, lp.extent, min=lp.min, index_dtype=lp.index_dtype, loc=lp.op.location, ip=ip
        )
        ivs[lp.iv] = new.iv
        ip = ir.InsertionPoint(analysis.terminator(new.body))
    dims = [next((n for o, n in ivs.items() if o == d), d) for d in blk.dims]
    fill = Block.build(
        f"{blk.name}_pad_const",
        blk.iter_names,
        blk.iter_types,
        blk.domains,
        blk.bindings,
        dims,
        predicate=blk.predicate,
        index_dtypes=blk.index_dtypes,
        loc=loc,
        ip=ip,
    )
    subst = {
        old: (lambda new: lambda user: new)(new) for old, new in zip(blk.iter_vars, fill.iter_vars)
    }
    term = analysis.terminator(fill.body)
    store = plan.store.clone(ip=ir.InsertionPoint(term))
    pad = _yielded(plan.ifop.regions[1].blocks[0])
    for k, v in enumerate(list(plan.store.operands)):
        if k == 1:
            continue
        store.operands[k] = clone_tree(pad if k == 0 else v, store, subst, within=blk.op)
    return fill


def _strip_condition(ifop: ir.Operation):
    """T.if_then_else(cond, value, pad) -> value."""
    then = ifop.regions[0].blocks[0]
    value = _yielded(then)
    for o in list(then.operations)[:-1]:
        o.move_before(ifop)
    ifop.results[0].replace_all_uses_with(value)
    cond = ifop.operands[0]
    analysis.erase(ifop)
    erase_dead(cond)


def _narrow(blk: Block, plan: _Plan):
    domains = blk.domains
    moved = {k: r for k, r in plan.ranges.items() if r != (domains[k][0], sum(domains[k]))}
    if not moved:
        return
    # the body sees v = v' + lo
    for k, (lo, _) in moved.items():
        arg = blk.iter_vars[k]
        replace_uses(
            arg,
            lambda user, a=arg, c=lo: (
                arith.AddIOp(a, arith.ConstantOp(ir.IndexType.get(), c).result).result
            ),
        )
    _resimplify(blk, [blk.iter_vars[k] for k in moved])
    results = list(blk.bindings.results)
    n = len(blk.dims)
    cons, eqs = [], []
    own = {k: _own_loop(blk, k, plan.path) for k in moved}
    for k, side in plan.sides:  # T.where(lo <= binding and binding < hi), in cond order
        (lo, hi), e = moved.get(k, (None, None)), results[k]
        if k not in moved or own[k] is not None:
            continue
        if side == "lo" and lo != domains[k][0]:
            cons.append(simplify(e - lo, n))
        elif side == "hi" and hi != sum(domains[k]):
            cons.append(simplify(ir.AffineExpr.get_constant(hi - 1) - e, n))
        else:
            continue
        eqs.append(False)
    if blk.predicate is not None:  # TVM: the in-bound conditions first, then the old T.where
        cons += [c.expr for c in blk.predicate.constraints]
        eqs += [c.is_eq for c in blk.predicate.constraints]
    for k, (lo, hi) in moved.items():
        lp = own[k]
        if lp is not None:
            lp.op.attributes["upperBoundMap"] = ir.AffineMapAttr.get(
                ir.AffineMap.get_constant(lp.min + hi - lo)
            )
        else:
            results[k] = simplify(results[k] - lo, n)
        domains[k] = (0, hi - lo)
    blk.op.attributes["bindings"] = ir.AffineMapAttr.get(ir.AffineMap.get(n, 0, results))
    blk.set_attr("domains", ir.ArrayAttr.get([i64_array(d) for d in domains]))
    if cons:
        blk.set_attr("predicate", ir.IntegerSetAttr.get(ir.IntegerSet.get(n, 0, cons, eqs)))


def _own_loop(blk: Block, k: int, path) -> "Loop | None":
    """The loop bound to iter var k alone, under `loop`, over its whole domain, holding only
    this block: it can shrink."""
    e = blk.bindings.results[k]
    if not isinstance(e, ir.AffineDimExpr):
        return None
    iv = blk.dims[e.position]
    lp = next((Loop(p) for p in path if Loop(p).iv == iv), None)
    if lp is None or (lp.min, lp.extent) != tuple(blk.domains[k]) or lp.min != 0:
        return None
    others = [r for j, r in enumerate(blk.bindings.results) if j != k]
    if any(analysis._mentions(r, [e.position]) for r in others) or (
        blk.predicate is not None
        and any(analysis._mentions(c.expr, [e.position]) for c in blk.predicate.constraints)
    ):
        return None
    if [b for b in analysis.blocks_under(lp.op)] != [blk.op]:
        return None
    return lp


def _resimplify(blk: Block, shifted: list):
    """Rebuild the buffer indices using a `shifted` iter var in simplest form (`vh + 1 - 1` ->
    `vh`), looking into non-affine index ops (T.max, ...) for affine operands."""
    for op in [o for o in analysis.walk(blk.op) if o.name in ("memref.load", "memref.store")]:
        for k in range(1 if op.name == "memref.load" else 2, len(op.operands)):
            _resimplify_operand(op, k, shifted)


def _resimplify_operand(op: ir.Operation, k: int, shifted: list):
    old = op.operands[k]
    leaves: list = []
    try:
        e = to_affine(old, leaves)
    except NotAffine:
        if not isinstance(old.owner, ir.Block):
            inner = analysis.op_of(old.owner)
            for j in range(len(inner.operands)):
                _resimplify_operand(inner, j, shifted)
        return
    if not any(leaf == a for leaf in leaves for a in shifted):
        return
    ranges = {p: analysis.value_range(leaf) for p, leaf in enumerate(leaves)}
    with ir.InsertionPoint(op), op.location:
        op.operands[k] = emit_index(index.simplify(e, ranges), leaves)
    erase_dead(old)
