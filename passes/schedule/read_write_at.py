"""read_at / write_at: copy the region of a buffer that one iteration of a loop reads (writes)
into (out of) a cache buffer, at the start (end) of that loop's body (TVM 0.21's output):

    for i_0, j, k_0:                          A_shared = alloc(shape of A, "shared")
        for i_1, k_1: block "C":              for i_0, j, k_0:
            ... A[vi, vk] ...          ==>        block "A_shared": v0, v1 = remap("SS", [i_0, k_0])
    read_at(k_0, C, 0, "shared")                  T.block_attr({"auto_copy": True})
                                                  for ax0, ax1 in grid(4, 4):
                                                      A_shared[v0 * 4 + ax0, v1 * 4 + ax1] = A[...]
                                              for i_1, k_1: block "C": ... A_shared[vi, vk] ...

The region is the union of what the blocks under the loop access, over the loops inside it and
the thread loops around it whose threads share the cache's scope (as compute_at relaxes); the
copy block has one iter var per loop (the given one or one around it) that region's start uses.
read_at copies before the first statement of the loop body that reads the buffer, and every
statement from there on reads the cache; write_at copies back after the last statement that
writes it, and every statement up to there accesses the cache.

Legality (TVM's): the loop is not inside a block; some block under the loop reads (read_at) /
writes (write_at) the buffer; no statement writes it after the first one reading it (read_at),
none reads it after the last one writing it (write_at). Beyond TVM, where its output would be
wrong: every index is affine in loop variables and the region lies inside the buffer; for
write_at, one iteration writes every element of the region (the copy back would store cache
elements never written) with no predicate or condition, and a block that reads the buffer under
the loop writes it too, with T.init() (it would read the cache before anything wrote it).
"""

import itertools
from typing import Dict, List

from mlir import ir
from mlir.dialects import memref

from tir_mlir.dialect.ops import Block, Loop
from tir_mlir.errors import ScheduleError
from tir_mlir.analysis import structure as analysis, index
from tir_mlir.analysis.shapes import buffer_shape
from tir_mlir.passes.schedule.annotate import to_attr
from tir_mlir.analysis.buffer_util import (
    accesses,
    block_reads,
    block_writes,
    buffer_name,
    emit_index,
    func_of,
    top_stmt,
)
from tir_mlir.passes.schedule.cache_read_write import cache_name, make_cache_alloc, pick_buffer
from tir_mlir.analysis.region_cover import (
    Interval,
    NestedSpace,
    RegionError,
    _vars,
    access_region,
    lins_of,
    region_inside,
)

_ENUMERATION_LIMIT = 1 << 16


def read_at(loop: ir.Operation, block: Block, read_buffer_index: int, storage_scope: str) -> Block:
    return _at(loop, block, read_buffer_index, storage_scope, True)


def write_at(
    loop: ir.Operation, block: Block, write_buffer_index: int, storage_scope: str
) -> Block:
    return _at(loop, block, write_buffer_index, storage_scope, False)


def _at(loop: ir.Operation, block: Block, i: int, scope: str, is_read: bool) -> Block:
    who, kind = ("read_at", "read") if is_read else ("write_at", "write")
    src = pick_buffer(block, block_reads(block) if is_read else block_writes(block), i, who, kind)
    name = buffer_name(src)
    lp = Loop(loop)
    top_parent = analysis.parent_op(top_stmt(loop))
    if top_parent is None or top_parent.name != "func.func":
        raise ScheduleError(f"{who}: loop {lp.name!r} is inside a block")
    stmts = analysis.loop_children(loop)
    r_pos = [
        n for n, s in enumerate(stmts) if any(k == "load" and v == src for _, k, v in accesses(s))
    ]
    w_pos = [
        n for n, s in enumerate(stmts) if any(k == "store" and v == src for _, k, v in accesses(s))
    ]
    if is_read:
        if not r_pos:
            raise ScheduleError(f"{who}: nothing under loop {lp.name!r} reads {name!r}")
        if w_pos and w_pos[-1] >= r_pos[0]:
            raise ScheduleError(
                f"{who}: {name!r} is written under loop {lp.name!r} after it is first read there"
            )
        first, end = r_pos[0], len(stmts)
    else:
        if not w_pos:
            raise ScheduleError(f"{who}: nothing under loop {lp.name!r} writes {name!r}")
        if r_pos and r_pos[-1] > w_pos[-1]:
            raise ScheduleError(
                f"{who}: {name!r} is read under loop {lp.name!r} after it is last written there"
            )
        first, end = 0, w_pos[-1] + 1
    replaced = stmts[first:end]
    ops = [
        op
        for s in replaced
        for op, k, v in accesses(s)
        if v == src and k == ("load" if is_read else "store")
    ]
    space = NestedSpace(analysis.enclosing_loops(loop) + [loop])
    space.fold_unit_loops = False  # TVM keeps `n` of a unit loop in the region start
    space.relax_for(scope)  # a "shared" copy serves every thread of the block
    try:
        region = access_region(space, ops)
    except RegionError as e:
        raise ScheduleError(
            f"{who}: the region of {name!r} accessed under loop {lp.name!r} "
            f"cannot be described ({e})"
        ) from None
    if not region_inside(space, region, buffer_shape(src)):
        raise ScheduleError(
            f"{who}: the region of {name!r} accessed under loop "
            f"{lp.name!r} may lie outside the buffer (a guarded access?)"
        )
    if not is_read:
        _check_readers(replaced, src, who)
        _check_exact(space, ops, region, who, name, lp.name)

    # --- rewrite ------------------------------------------------------------------------------
    loc = loop.location
    dst = make_cache_alloc(func_of(loop), src, cache_name(src, scope), scope, loc)
    for s in replaced:
        for op, k, v in accesses(s):
            if v == src:
                op.operands[0 if k == "load" else 1] = dst
    before = (
        stmts[first]
        if is_read
        else (stmts[end] if end < len(stmts) else analysis.terminator(lp.body))
    )
    copy_from, copy_to = (src, dst) if is_read else (dst, src)
    return _copy_block(space, region, copy_from, copy_to, cache_name(src, scope), loc, before)


def _check_readers(stmts, src: ir.Value, who: str):
    """Under write_at, a block reading the buffer must be the one accumulating into it."""
    for s in stmts:
        for b in [s] * analysis.is_block(s) + analysis.blocks_under(s):
            if analysis.blocks_under(b):
                continue
            kinds = {k for _, k, v in accesses(b) if v == src}
            if "load" in kinds and ("store" not in kinds or Block(b).init is None):
                raise ScheduleError(
                    f"{who}: block {Block(b).name!r} reads "
                    f"{buffer_name(src)!r} without writing it first under "
                    f"T.init() (it would read the cache unwritten)"
                )


def _check_exact(space: NestedSpace, stores, region: List[Interval], who, name, loop_name):
    """One iteration of the loop writes every element of `region`: enumerate the loops inside
    it (the outer ones at their minimum), without predicates or conditions."""
    points, inner = set(), set()
    lins = []
    for op in stores:
        owner = analysis.parent_op(op)
        while owner is not None and analysis.is_loop(owner):
            owner = analysis.parent_op(owner)
        if not analysis.is_block(owner) or Block(owner).predicate is not None:
            raise ScheduleError(
                f"{who}: {name!r} is stored under a condition or a T.where "
                f"(the copy back would store elements never written)"
            )
        lins.append(lins_of(op, space.value_lin, space.ranges))
    for ls in lins:
        for e in ls:
            for atom, _ in e.terms:
                inner |= {k for k in _vars(atom) if not space.is_outer(k)}
    inner = sorted(inner)
    size = 1
    for k in inner:
        lo, hi = space.ranges[k]
        size *= hi - lo + 1
    if size > _ENUMERATION_LIMIT:
        raise ScheduleError(
            f"{who}: cannot check that one iteration of loop {loop_name!r} "
            f"writes the whole region of {name!r} ({size} points)"
        )
    env = {k: space.ranges[k][0] for k in range(space.n_outer)}
    for values in itertools.product(
        *[range(space.ranges[k][0], space.ranges[k][1] + 1) for k in inner]
    ):
        env.update(zip(inner, values))
        for ls in lins:
            points.add(tuple(_eval(e, env) for e in ls))
    volume = 1
    for iv in region:
        volume *= iv.extent
    if len(points) != volume:
        raise ScheduleError(
            f"{who}: one iteration of loop {loop_name!r} does not write every "
            f"element of the region of {name!r} it copies back"
        )


def _eval(e: index.Lin, env: Dict[int, int]) -> int:
    total = e.const
    for atom, c in e.terms:
        if atom[0] == "v":
            x = env[atom[1]]
        elif atom[0] == "div":
            x = _eval(atom[1], env) // atom[2]
        else:
            x = _eval(atom[1], env) % atom[2]
        total += c * x
    return total


def _copy_block(
    space: NestedSpace,
    region: List[Interval],
    src: ir.Value,
    dst: ir.Value,
    name: str,
    loc,
    before: ir.Operation,
) -> Block:
    """block name (one spatial iter var per outer loop the region starts use, over its range):
    for ax0, ... in grid(extents): dst[start + ax] = src[start + ax]."""
    outer: List[int] = []
    for iv in region:
        for atom, _ in iv.base.terms:
            outer += [k for k in sorted(_vars(atom)) if k not in outer]
    loops = [Loop(analysis.op_of(ir.BlockArgument(space.values[k]).owner.owner)) for k in outer]
    n = len(outer)
    block = Block.build(
        name,
        [f"v{d}" for d in range(n)],
        ["S"] * n,
        [(lp.min, lp.extent) for lp in loops],
        ir.AffineMap.get_identity(n),
        [space.values[k] for k in outer],
        index_dtypes=[lp.index_dtype for lp in loops],
        annotations={"auto_copy": to_attr(True)},
        loc=loc,
        ip=ir.InsertionPoint(before),
    )
    pos = {k: d for d, k in enumerate(outer)}
    ip = ir.InsertionPoint.at_block_terminator(block.body)
    axes = []
    for d, iv in enumerate(region):
        ax = Loop.build(f"ax{d}", iv.extent, loc=loc, ip=ip)
        axes.append(ax.iv)
        ip = ir.InsertionPoint.at_block_terminator(ax.body)
    starts = [
        iv.start(lambda k: ir.AffineExpr.get_dim(pos[k])) + ir.AffineExpr.get_dim(n + d)
        for d, iv in enumerate(region)
    ]
    leaves = list(block.iter_vars) + axes
    with ip, loc:
        value = memref.LoadOp(src, [emit_index(e, leaves) for e in starts]).result
        memref.StoreOp(value, dst, [emit_index(e, leaves) for e in starts])
    return block
