"""cache_inplace: stage a buffer a block reads and writes through a cache buffer, copied in
right before the block and back right after it (TVM 0.21's output):

    for i:                                       A_local = alloc(shape of A, "local")
        block "X": A[vi] = A[vi] * 2 + B[vi]     for i:
                                        ==>          for ax0 in range(1): block "A_local":
    cache_inplace(X, 0, "local")                         v0 = S(16, i + ax0); A_local[v0] = A[v0]
                                                     block "X": A_local[vi] = A_local[vi] * 2 + ..
                                                     for ax0 in range(1): block "A_local":
                                                         v0 = S(16, i + ax0); A[v0] = A_local[v0]

The copies sit in the innermost loop around the block (else the function body), right before
and after it; each covers the region the block reads (copy in) or writes (copy back) in one
iteration of the loops around it: `for ax_d in range(extent)`, iter var `v_d` over the
buffer's dimension bound to `region start + ax_d`. The cache has the buffer's shape.

Legality (TVM's): `read_buffer_index` is in range of the block's reads and the block also
writes that buffer. Beyond TVM: the block is not nested in another block without a loop
between (as cache_read); every index is affine in loop variables; the read region lies inside
the buffer (a guarded access may not) and the written region inside the read one (the copy
back would otherwise store cache elements never written). TVM
describes the region by the block's own iter vars, which are undefined at the copies when the
block sits in a loop: its output is only well formed for a block directly at the root.
"""

from typing import List, Tuple

from mlir import ir
from mlir.dialects import memref

from tir_mlir.dialect.ops import Block, Loop
from tir_mlir.analysis.shapes import buffer_shape
from tir_mlir.analysis.symbolic import prove_le
from tir_mlir.errors import ScheduleError
from tir_mlir.ir.index_dtypes import buffer_dims
from tir_mlir.analysis import structure as analysis
from tir_mlir.analysis.buffer_util import accesses, block_reads, buffer_name, func_of
from tir_mlir.passes.schedule.cache_read_write import (
    cache_name,
    make_cache_alloc,
    pick_buffer,
    top_of,
)
from tir_mlir.analysis.region_cover import (
    Interval,
    LoopSpace,
    NestedSpace,
    RegionError,
    _vars,
    access_region,
    region_inside,
)

WHO = "cache_inplace"


def cache_inplace(block: Block, read_buffer_index: int, storage_scope: str) -> Tuple[Block, Block]:
    buf = pick_buffer(block, block_reads(block), read_buffer_index, WHO, "read")
    name = buffer_name(buf)
    if not any(k == "store" and v == buf for _, k, v in accesses(block.op)):
        raise ScheduleError(
            f"{WHO}: block {block.name!r} does not both read and write buffer {name!r}"
        )
    loops = analysis.enclosing_loops(block.op)
    scope = loops[-1] if loops else None
    parent = analysis.parent_op(block.op)
    if scope is None and (parent is None or parent.name != "func.func"):
        raise ScheduleError(
            f"{WHO}: block {block.name!r} is nested in another block; only "
            f"blocks in a loop or at the function root can be cached"
        )
    space = NestedSpace(loops)
    ops = [(op, k) for op, k, v in accesses(block.op) if v == buf]
    try:
        read = access_region(space, [op for op, k in ops if k == "load"])
        written = access_region(space, [op for op, k in ops if k == "store"])
    except RegionError as e:
        raise ScheduleError(
            f"{WHO}: the region of {name!r} that block {block.name!r} "
            f"accesses cannot be described ({e})"
        ) from None
    if not region_inside(space, read, buffer_shape(buf)):
        raise ScheduleError(
            f"{WHO}: the region of {name!r} that block {block.name!r} "
            f"accesses may lie outside the buffer (a guarded access?)"
        )
    if not all(_inside(w, r) for w, r in zip(written, read)):
        raise ScheduleError(
            f"{WHO}: block {block.name!r} writes elements of {name!r} it does "
            f"not read (the copy back would store cache elements never "
            f"written)"
        )

    # --- rewrite ------------------------------------------------------------------------------
    loc = block.op.location
    cache = make_cache_alloc(
        func_of(block.op), buf, cache_name(buf, storage_scope), storage_scope, loc
    )
    stmt = top_of(block.op, scope)
    copy_in = _copy(space, read, buf, cache, cache_name(buf, storage_scope), loc, stmt)
    for op, _, v in accesses(block.op):
        if v == buf:
            op.operands[0 if op.name == "memref.load" else 1] = cache
    copy_out = _copy(space, written, cache, buf, cache_name(buf, storage_scope), loc, stmt)
    top_of(copy_out.op, scope).move_after(stmt)
    return copy_in, copy_out


def _inside(a: Interval, b: Interval) -> bool:
    diff = a.base + b.base.scale(-1)
    return diff.is_const and prove_le(b.lo, a.lo + diff.const) and prove_le(a.hi + diff.const, b.hi)


def _copy(
    space: LoopSpace,
    region: List[Interval],
    src: ir.Value,
    dst: ir.Value,
    name: str,
    loc,
    before: ir.Operation,
) -> Block:
    """for ax0, ...: block name: v_d = base_d + lo_d + ax_d (over the buffer's dimension d);
    dst[v] = src[v], built before `before`."""
    shape = buffer_shape(src)
    dtypes = list(buffer_dims(src) or ["int32"] * len(shape))
    outer: List[int] = sorted(
        {k for iv in region for atom, _ in iv.base.terms for k in _vars(atom)}
    )
    ip = ir.InsertionPoint(before)
    axes = []
    for d, iv in enumerate(region):
        lp = Loop.build(f"ax{d}", iv.extent, index_dtype=dtypes[d], loc=loc, ip=ip)
        axes.append(lp.iv)
        ip = ir.InsertionPoint.at_block_terminator(lp.body)
    pos = {k: n for n, k in enumerate(outer)}
    results = [
        iv.start(lambda k: ir.AffineExpr.get_dim(pos[k])) + ir.AffineExpr.get_dim(len(outer) + d)
        for d, iv in enumerate(region)
    ]
    rank = len(shape)
    block = Block.build(
        name,
        [f"v{d}" for d in range(rank)],
        ["S"] * rank,
        [(0, n) for n in shape],
        ir.AffineMap.get(len(outer) + rank, 0, results),
        [space.values[k] for k in outer] + axes,
        index_dtypes=dtypes,
        loc=loc,
        ip=ip,
    )
    with ir.InsertionPoint.at_block_terminator(block.body), loc:
        ivs = list(block.iter_vars)
        memref.StoreOp(memref.LoadOp(src, ivs).result, dst, ivs)
    return block
