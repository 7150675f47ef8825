"""cache_read / cache_write of a block nested in another block (a scope block: after blockize, or written
so), as TVM builds it: the cache is allocated in the scope over the region one instance of
the scope reads (its shape that region's extents), the copy goes after the buffer's writer in
the scope (at its start for a buffer written outside), and the readers index the cache
relative to the region's start:

    block "scope": i, j = ...                    block "scope": i, j = ...
        for x, y: block "A": A[i*16+x, j*16+y]       A_local = T.alloc_buffer((16, 16), "local")
        for x, y: block "B": .. A[vi, vj] ..  ==>    for x, y: block "A": A[...] = ...
                                                     for x, y: block "A_local":
                                                         A_local[vi, vj] = A[i * 16 + vi, ...]
                                                     for x, y: block "B": A_local[vi - i * 16, ..]

cache_write is the mirror: the block writes the compact cache, copied back right after it.
Supported (else refused): the region's start is affine in the scope's iter vars, each bound
to one loop around the scope; one writer of the buffer in the scope.
"""

from typing import List

from mlir import ir
from mlir.dialects import arith, memref

from tir_mlir.dialect.ops import Block, Loop, body_ops
from tir_mlir.dialect.buffers import SCOPE, buffer_attrs, scope_attr
from tir_mlir.errors import ScheduleError
from tir_mlir.analysis import structure as analysis, index
from tir_mlir.analysis.buffer_util import (
    NotAffine,
    accesses,
    buffer_name,
    emit_index,
    simplify,
    substitute,
    to_affine,
)
from tir_mlir.analysis.region_cover import NestedSpace, RegionError, access_region

WHO = "cache_read"


def scope_of(block: Block):
    p = analysis.parent_op(block.op)
    while p is not None and not analysis.is_block(p) and p.name != "func.func":
        p = analysis.parent_op(p)
    return Block(p) if p is not None and analysis.is_block(p) else None


def _region(scope: Block, buf: ir.Value, ops, who: str):
    """(one Interval per dim, the start of each over the scope's iter vars) of what `ops`
    touch in one instance of the scope."""
    space = NestedSpace(analysis.enclosing_loops(scope.op))
    try:
        region = access_region(space, ops)
    except RegionError as e:
        raise ScheduleError(
            f"{who}: the region of {buffer_name(buf)!r} in block "
            f"{scope.name!r} cannot be described ({e})"
        ) from None
    by_loop = {}
    for k, e in enumerate(scope.bindings.results):
        e = e.maybe_downcast()
        if isinstance(e, ir.AffineDimExpr):
            by_loop[space.num(scope.dims[e.position])] = k
    for iv in region:
        for atom, _ in iv.base.terms:
            if atom[0] != "v" or atom[1] not in by_loop:
                raise ScheduleError(
                    f"{who}: the region of {buffer_name(buf)!r} in block "
                    f"{scope.name!r} does not start at an affine function of "
                    f"its iter vars"
                )
    los = [iv.lo for iv in region if isinstance(iv.lo, int)]
    if len(los) != len(region):
        raise ScheduleError(
            f"{who}: the region of {buffer_name(buf)!r} in block {scope.name!r} starts "
            f"at a size ({', '.join(str(iv.lo) for iv in region)}): not supported"
        )
    starts = [
        index.to_affine(iv.base, lambda n: ir.AffineExpr.get_dim(by_loop[n])) + lo
        for iv, lo in zip(region, los)
    ]
    return region, starts


def _alloc(scope: Block, buf: ir.Value, region, name: str, storage_scope: str, loc):
    mtype = ir.MemRefType(buf.type)
    ops = body_ops(scope.body)
    n = next((k for k, o in enumerate(ops) if o.name != "memref.alloc"), len(ops))
    with ir.InsertionPoint(ops[n]), loc:  # after the scope's allocations, as TVM
        cache = memref.AllocOp(
            ir.MemRefType.get([iv.extent for iv in region], mtype.element_type), [], []
        ).result
    cache.owner.attributes["tir.name"] = ir.StringAttr.get(name)
    cache.owner.attributes[SCOPE] = scope_attr(storage_scope)
    dtype = buffer_attrs(buf).get("tir.dtype")  # unsigned: the memref says only the width
    if dtype is not None:
        cache.owner.attributes["tir.dtype"] = dtype
    return cache


def _after(scope: Block, op) -> ir.Operation:
    """The statement of the scope's body after the one holding `op`."""
    stmts = [o for o in body_ops(scope.body) if o.name != "memref.alloc"]
    top = next(s for s in stmts if s == op or analysis.is_ancestor(s, op))
    k = stmts.index(top) + 1
    return stmts[k] if k < len(stmts) else analysis.terminator(scope.body)


def _copy(region, starts, s_ivs, src, dst, to_cache: bool, name: str, loc, before):
    ip, loops = ir.InsertionPoint(before), []
    for d, iv in enumerate(region):
        lp = Loop.build(f"ax{d}", iv.extent, loc=loc, ip=ip)
        loops.append(lp)
        ip = ir.InsertionPoint(analysis.terminator(lp.body))
    n = len(region)
    copy = Block.build(
        name,
        [f"v{d}" for d in range(n)],
        ["S"] * n,
        [(0, iv.extent) for iv in region],
        ir.AffineMap.get_identity(n),
        [lp.iv for lp in loops],
        loc=loc,
        ip=ip,
    )
    with ir.InsertionPoint.at_block_terminator(copy.body), loc:
        vs = list(copy.iter_vars)
        full = [
            emit_index(st + ir.AffineExpr.get_dim(len(s_ivs) + d), s_ivs + vs)
            for d, st in enumerate(starts)
        ]
        if to_cache:
            memref.StoreOp(memref.LoadOp(src, full).result, dst, vs)
        else:
            memref.StoreOp(memref.LoadOp(src, vs).result, dst, full)
    return copy


def _rebase(blocks, buf, cache, starts, s_ivs, kinds):
    """The blocks' accesses of `buf` (of `kinds`) go to the cache, relative to the starts."""
    for b in blocks:
        for op, k, v in accesses(b.op):
            if k not in kinds or v != buf:
                continue
            first = 1 if k == "load" else 2
            with ir.InsertionPoint(op), op.location:
                idx = [_minus(x, st, s_ivs) for x, st in zip(list(op.operands)[first:], starts)]
                new = (
                    memref.LoadOp(cache, idx)
                    if k == "load"
                    else memref.StoreOp(op.operands[0], cache, idx)
                )
            if k == "load":
                op.results[0].replace_all_uses_with(new.result)
            analysis.erase(op)


def cache_read(block: Block, scope: Block, buf: ir.Value, storage_scope: str, name: str):
    readers = [
        Block(o)
        for o in analysis.blocks_under(scope.op)
        if not analysis.blocks_under(o) and any(k == "load" and v == buf for _, k, v in accesses(o))
    ]
    writers = [
        o
        for o in analysis.blocks_under(scope.op)
        if any(k == "store" and v == buf for _, k, v in accesses(o))
    ]
    if len(writers) > 1:
        raise ScheduleError(
            f"{WHO}: buffer {buffer_name(buf)!r} has several writers in block {scope.name!r}"
        )
    ops = (
        [op for op, k, v in accesses(writers[0]) if k == "store" and v == buf]
        if writers
        else [op for r in readers for op, k, v in accesses(r.op) if k == "load" and v == buf]
    )
    region, starts = _region(scope, buf, ops, WHO)
    loc, s_ivs = block.op.location, list(scope.iter_vars)
    cache = _alloc(scope, buf, region, name, storage_scope, loc)
    stmts = [o for o in body_ops(scope.body) if o.name != "memref.alloc"]
    before = _after(scope, writers[0]) if writers else stmts[0]
    copy = _copy(region, starts, s_ivs, buf, cache, True, name, loc, before)
    _rebase(readers, buf, cache, starts, s_ivs, ("load",))
    return copy


def cache_write(block: Block, scope: Block, buf: ir.Value, storage_scope: str, name: str):
    """The block writes a compact cache in the scope, copied back right after it."""
    others = [
        o
        for o in analysis.blocks_under(scope.op)
        if o != block.op
        and not analysis.is_ancestor(block.op, o)
        and any(k == "store" and v == buf for _, k, v in accesses(o))
    ]
    if others:
        raise ScheduleError(
            f"cache_write: buffer {buffer_name(buf)!r} has several writers in block {scope.name!r}"
        )
    ops = [op for op, k, v in accesses(block.op) if k == "store" and v == buf]
    region, starts = _region(scope, buf, ops, "cache_write")
    loc, s_ivs = block.op.location, list(scope.iter_vars)
    cache = _alloc(scope, buf, region, name, storage_scope, loc)
    before = _after(scope, block.op)
    _rebase([block], buf, cache, starts, s_ivs, ("load", "store"))
    return _copy(region, starts, s_ivs, cache, buf, False, name, loc, before)


def _minus(x: ir.Value, start: ir.AffineExpr, s_ivs) -> ir.Value:
    """x - start (over the scope's iter vars), simplified where x is affine (TVM's
    `v_i0_o * 32 + v_i0_i - v_i0_o * 32` is `v_i0_i`)."""
    if _zero(start):
        return x
    leaves: List[ir.Value] = []
    try:
        e = to_affine(x, leaves)
    except NotAffine:
        return arith.subi(x, emit_index(start, s_ivs))
    pos = []
    for v in s_ivs:
        k = next((n for n, lf in enumerate(leaves) if lf == v), None)
        if k is None:
            leaves.append(v)
            k = len(leaves) - 1
        pos.append(ir.AffineExpr.get_dim(k))
    return emit_index(simplify(e - substitute(start, pos), len(leaves)), leaves)


def _zero(e: ir.AffineExpr) -> bool:
    e = e.maybe_downcast()
    return isinstance(e, ir.AffineConstantExpr) and e.value == 0
