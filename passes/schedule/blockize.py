"""blockize: wrap the subtree under a loop into an outer block.

blockize(j_1) on `for i, j_0, k, j_1: block C (vj = j_0 * 4 + j_1)`::

    for i, j_0, k:
        block "C_o": vi_o, vj_o, vk_o = S(16, i), S(4, j_0), R(16, k)
            init: for j_1: block "C_init": vj_i_init = S(4, j_1)
                      C[vi_o, vj_o * 4 + vj_i_init] = 0
            for j_1:
                block "C": vj_i = S(4, j_1)
                    C[vi_o, vj_o * 4 + vj_i] = C[...] + A[vi_o, vk_o] * B[vk_o, vj_o * 4 + vj_i]

Each binding is divided into an outer part (loops outside the subtree) and an inner part (loops
inside): `v = v_o * E + v_i` with E the inner part's extent. An iter var bound only outside
gets no inner var; one bound only inside gets a unit outer var `T.axis.spatial(1, 0)` (TVM's
preserve_unit_iters; with preserve_unit_iters=False, unit loops are also 0 in outer bindings), and no inner var either when it is itself a unit iter (bound to unit
loops only). The block's T.where is split by conjunct, like TVM: one over outer loops only
goes on the outer block, one over inner loops only on the inner block (and on the init block
when all its loops are init loops; one over reduction loops only is dropped there, where TVM
0.21 copies it and leaves those loops undefined). Legality: the subtree is loops around
exactly one block; no conjunct of its predicate mixes inner and outer loops; each binding mixing inner and outer loops is linear, its inner part a dense
mixed-radix combination of loops starting at 0, its outer part divisible by E.
"""

from typing import List, Optional, Tuple

from mlir import ir

from tir_mlir.analysis.structure import erase, move_sid
from tir_mlir.dialect.ops import Block, Loop
from tir_mlir.errors import ScheduleError
from tir_mlir.analysis.buffer_util import (
    dims_of,
    emit_index,
    enclosing_loops,
    erase_region_block,
    move_body,
    replace_uses,
    substitute,
    walk,
)
from tir_mlir.analysis.linear import Linear, linear

C = ir.AffineExpr.get_constant


def _divide(e: ir.AffineExpr, inner: set, extents: dict, dom: int, what: str):
    """(outer expr, inner expr or None, E, outer extent) with e = outer * E + inner."""
    used = dims_of(e)
    if not used & inner:
        return e, None, 1, dom
    if not used - inner:
        lin = linear(e)
        if dom == 1 and all(extents[d] == 1 for d in used):
            return C(0), None, 1, 1  # a unit iter moves to the outer block (as TVM)
        if lin is None or lin.const == 0:
            return C(0), e, dom, 1
    lin = linear(e)
    rest = []  # terms over outer loops only that are not linear (`f // 2 * 64`)
    if lin is None:
        lin, rest = _linear_but_outer(e, inner)
        if lin is None:
            raise ScheduleError(f"blockize: {what} is not separable (non-linear binding)")
    coeffs, const = lin.terms, lin.const
    terms = sorted((c, d) for d, c in coeffs.items() if d in inner)
    E = 1
    for c, d in terms:
        if c != E:
            raise ScheduleError(
                f"blockize: {what} is not separable: its inner loops do not form a dense range"
            )
        E *= extents[d]
    outer = {d: c for d, c in coeffs.items() if d not in inner}
    if any(c % E for c in outer.values()) or const % E or dom % E or any(c % E for _, c in rest):
        raise ScheduleError(
            f"blockize: {what} is not separable: the outer part is not a "
            f"multiple of the inner extent {E}"
        )
    o = C(const // E)
    if rest:  # the outer terms in the binding's order (`f // 2 * 4 + f % 2 * 2 + j_0`)
        for x, c in _outer_terms(e, inner):
            o = o + x * (c // E)
    for d, c in ({} if rest else outer).items():
        o = o + ir.AffineExpr.get_dim(d) * (c // E)
    i = C(0)
    for c, d in terms:
        i = i + ir.AffineExpr.get_dim(d) * c
    return o, i, E, dom // E


def _outer_terms(e: ir.AffineExpr, inner: set) -> list:
    """[(x, c)] for the terms of sum `e` over outer loops only (`x * c`, c the term's constant
    factor or 1), left to right."""
    return [
        _factor(t)
        for t in _sum_terms(e)
        if not dims_of(t) & inner and not isinstance(t, ir.AffineConstantExpr)
    ]


def _factor(t) -> tuple:
    if isinstance(t, ir.AffineMulExpr):
        for a, k in ((t.lhs, t.rhs), (t.rhs, t.lhs)):
            kk = k.maybe_downcast()
            if isinstance(kk, ir.AffineConstantExpr):
                return a, kk.value
    return t, 1


def _sum_terms(e: ir.AffineExpr) -> list:
    terms = []

    def flatten(t):
        t = t.maybe_downcast()
        if isinstance(t, ir.AffineAddExpr):
            flatten(t.lhs)
            flatten(t.rhs)
        else:
            terms.append(t)

    flatten(e)
    return terms


def _linear_but_outer(e: ir.AffineExpr, inner: set) -> Tuple[Optional[Linear], list]:
    """(linear form of the terms of sum `e` that are linear, [(x, c)] for the others: each
    `x * c` over outer loops only), or (None, []) when a term over inner loops is not linear."""
    coeffs, const, rest = {}, 0, []
    for t in _sum_terms(e):
        lin = linear(t)
        if lin is not None:
            for d, c in lin.terms.items():
                coeffs[d] = coeffs.get(d, 0) + c
            const += lin.const
        elif dims_of(t) & inner:
            return None, []
        else:
            rest.append(_factor(t))
    return Linear(coeffs, const), rest  # (Linear drops the zero coefficients)


def blockize(loop: Loop, preserve_unit_iters: bool = True) -> Block:
    blocks = walk(loop.op, Block.is_block)
    if len(blocks) != 1:
        raise ScheduleError(
            f"blockize: loop {loop.name!r} must hold exactly one block, found {len(blocks)}"
        )
    block = Block(blocks[0])
    others = walk(
        loop.op,
        lambda o: o.name not in (Loop.OP_NAME, "affine.yield") and o.parent.name == Loop.OP_NAME,
    )
    if any(o != block.op for o in others):
        raise ScheduleError(
            f"blockize: the subtree of loop {loop.name!r} has statements "
            f"besides loops and block {block.name!r}"
        )
    loops = enclosing_loops(block.op)
    inner_loops = loops[next(i for i, l in enumerate(loops) if l.op == loop.op) :]
    dims = block.dims
    extents = inner_extents(block, inner_loops)
    inner = set(extents)
    preds = _split_predicate(block, inner, loop)
    parts = [
        _divide(
            e,
            inner,
            extents,
            dom[1],
            f"the binding of {block.iter_names[k]!r} in block {block.name!r}",
        )
        for k, (e, dom) in enumerate(zip(block.bindings.results, block.domains))
    ]
    if not preserve_unit_iters:  # TVM: a unit loop's variable becomes 0 in outer bindings
        unit = [
            C(0)
            if any(v == l.iv and l.extent == 1 and l.min == 0 for l in loops)
            else ir.AffineExpr.get_dim(p)
            for p, v in enumerate(dims)
        ]
        parts = [(substitute(o, unit), i, E, d) for o, i, E, d in parts]
    if block.init is not None:
        for k, arg in enumerate(block.init.arguments):
            if block.iter_types[k] != "S" and len(list(arg.uses)):
                raise ScheduleError(
                    f"blockize: the init of block {block.name!r} uses "
                    f"reduction iter var {block.iter_names[k]!r}"
                )
        order = set(_init_positions(block, parts, inner_loops, dims, inner))
        if any(dims_of(e) & order and not dims_of(e) <= order for e, _ in preds[1]):
            raise ScheduleError(
                f"blockize: the predicate (T.where) of block {block.name!r} "
                f"mixes the init's loops with reduction loops"
            )
    with block.op.location:
        return _build(loop, block, dims, inner, inner_loops, parts, preds)


def inner_extents(block: Block, inner_loops: List[Loop]) -> dict:
    """{position in block.dims of each of `inner_loops` the bindings use: its extent}; refused
    when one of them does not start at 0."""
    extents = {}
    for p, v in enumerate(block.dims):
        l = next((l for l in inner_loops if l.iv == v), None)
        if l is not None:
            if l.min != 0:
                raise ScheduleError(f"blockize: loop {l.name!r} does not start at 0")
            extents[p] = l.extent
    return extents


def _split_predicate(block: Block, inner: set, loop: Loop) -> tuple:
    """(outer, inner) lists of (expr, is_eq) conjuncts of the block's T.where."""
    outer_c, inner_c = [], []
    for c in block.predicate.constraints if block.predicate is not None else []:
        used = dims_of(c.expr)
        if used and used <= inner:
            inner_c.append((c.expr, c.is_eq))
        elif not used & inner:
            outer_c.append((c.expr, c.is_eq))
        else:
            raise ScheduleError(
                f"blockize: the predicate (T.where) of block {block.name!r} "
                f"mixes loops inside and outside loop {loop.name!r}"
            )
    return outer_c, inner_c


def _predicate(conjuncts, positions, ndims) -> Optional[ir.IntegerSet]:
    """The conjuncts (over block dim positions) as a set over `positions`; None if empty."""
    if not conjuncts:
        return None
    subs = [
        ir.AffineExpr.get_dim(positions.index(p)) if p in positions else C(0) for p in range(ndims)
    ]
    return ir.IntegerSet.get(
        len(positions), 0, [substitute(e, subs) for e, _ in conjuncts], [q for _, q in conjuncts]
    )


def _build(loop, block, dims, inner, inner_loops, parts, preds) -> Block:
    loc, names, types = block.op.location, block.iter_names, block.iter_types
    outer_pos = [p for p in range(len(dims)) if p not in inner]
    inner_pos = sorted(inner)

    def remap(e, positions):
        return substitute(
            e,
            [
                ir.AffineExpr.get_dim(positions.index(p)) if p in positions else C(0)
                for p in range(len(dims))
            ],
        )

    outer = Block.build(
        block.name + "_o",
        [n + "_o" for n in names],
        types,
        [(0, p[3]) for p in parts],
        ir.AffineMap.get(len(outer_pos), 0, [remap(p[0], outer_pos) for p in parts]),
        [dims[p] for p in outer_pos],
        has_init=block.init is not None,
        predicate=_predicate(preds[0], outer_pos, len(dims)),
        annotations=None,
        loc=loc,
        ip=ir.InsertionPoint(loop.op),
    )
    ks = [k for k, p in enumerate(parts) if p[1] is not None]
    inner_blk = _inner_block(
        block,
        block.name,
        [names[k] + "_i" for k in ks],
        [types[k] for k in ks],
        [(0, parts[k][2]) for k in ks],
        [remap(parts[k][1], inner_pos) for k in ks],
        [dims[p] for p in inner_pos],
        block.op,
        _predicate(preds[1], inner_pos, len(dims)),
    )
    move_sid(block.op, inner_blk.op)
    _move_region(block.body, inner_blk.body, parts, ks, list(outer.body.arguments))
    if block.init is not None:
        _build_init(block, outer, parts, ks, inner_loops, dims, inner_pos, preds[1])
    loop.op.move_before(list(outer.body.operations)[-1])
    erase(block.op)
    return outer


def _inner_block(
    old, name, iter_names, iter_types, domains, exprs, dims, before, predicate
) -> Block:
    return Block.build(
        name,
        iter_names,
        iter_types,
        domains,
        ir.AffineMap.get(len(dims), 0, exprs),
        dims,
        predicate=predicate,
        annotations=old.annotations or None,
        loc=old.op.location,
        ip=ir.InsertionPoint(before),
    )


def _move_region(src: ir.Block, dst: ir.Block, parts, ks, outer_args):
    """Move src's ops into dst; old iter var k becomes outer_k * E + inner_k."""
    move_body(src, dst)
    leaves = list(outer_args) + list(dst.arguments)
    no = len(outer_args)
    for k, old in enumerate(src.arguments):
        o = ir.AffineExpr.get_dim(k)
        if k in ks:
            i = ir.AffineExpr.get_dim(no + ks.index(k))
            e = i if parts[k][3] == 1 else o * parts[k][2] + i
        else:
            e = o
        replace_uses(old, lambda _u, e=e: emit_index(e, leaves))


def _init_positions(block, parts, inner_loops, dims, inner) -> list:
    """The positions (among the block's dims) of the inner loops the init is copied under:
    those bound to a spatial iter var, outermost first."""
    spatial = [k for k, p in enumerate(parts) if p[1] is not None and block.iter_types[k] == "S"]
    used = set().union(*[dims_of(parts[k][1]) for k in spatial]) if spatial else set()
    out = []
    for l in inner_loops:
        p = next((p for p in sorted(inner) if dims[p] == l.iv), None)
        if p is not None and p in used:
            out.append(p)
    return out


def _build_init(block, outer, parts, ks, inner_loops, dims, inner_pos, inner_pred):
    """The init moves to the outer block, as a copy of the inner loops bound to spatial iters
    around a block `<name>_init`."""
    spatial = [k for k in ks if block.iter_types[k] == "S"]
    ip = ir.InsertionPoint.at_block_terminator(outer.init)
    new_dims = []
    order = _init_positions(block, parts, inner_loops, dims, inner_pos)
    for p in order:
        nl = next(l for l in inner_loops if dims[p] == l.iv).build_like(ip=ip)
        new_dims.append((p, nl.iv))
        ip = ir.InsertionPoint.at_block_terminator(nl.body)
    kept = [(e, q) for e, q in inner_pred if dims_of(e) <= set(order)]  # (blockize checked
    # that no conjunct mixes these loops with the others)
    exprs = [
        substitute(
            parts[k][1],
            [
                ir.AffineExpr.get_dim(order.index(p)) if p in order else C(0)
                for p in range(len(dims))
            ],
        )
        for k in spatial
    ]
    init = Block.build(
        block.name + "_init",
        [block.iter_names[k] + "_i_init" for k in spatial],
        ["S"] * len(spatial),
        [(0, parts[k][2]) for k in spatial],
        ir.AffineMap.get(len(new_dims), 0, exprs),
        [v for _, v in new_dims],
        predicate=_predicate(kept, order, len(dims)),
        loc=block.op.location,
        ip=ip,
    )
    _move_region(block.init, init.body, parts, spatial, list(outer.init.arguments))
    erase_region_block(block.init)
