"""Where cache_read puts its copy when the buffer's writer shares loops with a consumer (after
compute_at), as TVM's CacheLocDetector does, and the copy of what the writer writes in one
iteration of those loops (cache_write's copy back too, when a block still reading the original
buffer shares loops with the writer):

    for i in range(8):                              for i in range(8):
        for j in range(16): block "A": A[i*16+j]        for j in range(16): block "A": A[...]
        for j in range(16): block "B": .. A[..]   ==>   for ax0 in range(16): block "A_global":
    for i in range(128): block "C": .. A[i] ..              v0 = T.axis.spatial(128, i * 16 + ax0)
                                                            A_global[v0] = A[v0]
                                                        for j in range(16): block "B": A_global
                                                    for i in range(128): block "C": A_global

The location: going down from the function body through the loops holding both the writer and
a consumer, the statement after the writer's that holds the first consumer; the copy is the
writer's region over the loops inside that location (outer loops fixed).
"""

from typing import List, Optional, Tuple

from mlir import ir
from mlir.dialects import memref

from tir_mlir.dialect.ops import Block, Loop
from tir_mlir.errors import ScheduleError
from tir_mlir.analysis import structure as analysis, index
from tir_mlir.dialect.ops import body_ops
from tir_mlir.analysis.buffer_util import accesses
from tir_mlir.analysis.region_cover import NestedSpace, RegionError, _vars, access_region


def location(
    func, writer: ir.Operation, consumers
) -> Optional[Tuple[Optional[ir.Operation], ir.Operation]]:
    """(the loop whose body gets the copy, the statement the copy goes before), or None when
    no consumer follows the writer there."""
    container, stmts = None, body_ops(func.regions[0].blocks[0])
    while True:
        seen = False
        for s in stmts:
            has_w = s == writer or analysis.is_ancestor(s, writer)
            has_r = any(s == c or analysis.is_ancestor(s, c) for c in consumers)
            if has_w and has_r:
                if not analysis.is_loop(s):
                    return None
                container, stmts = s, analysis.loop_children(s)
                break
            if has_r:
                return (container, s) if seen else None
            seen = seen or has_w
        else:
            return None


def copy_nest(
    loc_loop: ir.Operation,
    writer: ir.Operation,
    src: ir.Value,
    dst: ir.Value,
    name: str,
    loc,
    before: ir.Operation,
    written: Optional[ir.Value] = None,
) -> Block:
    """The copy src -> dst of what `writer` stores to `written` (default src) in one
    iteration of `loc_loop` (cache_write copies its cache back so)."""
    outer = analysis.enclosing_loops(loc_loop) + [loc_loop]
    space = NestedSpace(outer)
    written = src if written is None else written
    stores = [op for op, k, v in accesses(writer) if k == "store" and v == written]
    try:
        region = access_region(space, stores)
    except RegionError as e:
        raise ScheduleError(
            f"cache_read: the region the writer writes in one iteration of "
            f"loop {Loop(loc_loop).name!r} cannot be described ({e})"
        ) from None
    los = [iv.lo for iv in region if isinstance(iv.lo, int)]
    if len(los) != len(region):
        raise ScheduleError(
            f"cache_read: the region the writer writes in one iteration of loop "
            f"{Loop(loc_loop).name!r} starts at a size: not supported"
        )
    used: List[int] = []
    for iv in region:
        for atom, _ in iv.base.terms:
            used += [k for k in sorted(_vars(atom)) if k not in used]
    ip, axes = ir.InsertionPoint(before), []
    shape = ir.MemRefType(src.type).shape
    for d, iv in enumerate(region):
        lp = Loop.build(f"ax{d}", iv.extent, loc=loc, ip=ip)
        axes.append(lp)
        ip = ir.InsertionPoint(analysis.terminator(lp.body))
    pos = {k: n for n, k in enumerate(used)}
    n = len(used)
    starts = [
        index.to_affine(iv.base, lambda k: ir.AffineExpr.get_dim(pos[k]))
        + lo
        + ir.AffineExpr.get_dim(n + d)
        for d, (iv, lo) in enumerate(zip(region, los))
    ]
    rank = len(region)
    block = Block.build(
        name,
        [f"v{d}" for d in range(rank)],
        ["S"] * rank,
        [(0, s) for s in shape],
        ir.AffineMap.get(n + rank, 0, starts),
        [space.values[k] for k in used] + [lp.iv for lp in axes],
        loc=loc,
        ip=ip,
    )
    with ir.InsertionPoint.at_block_terminator(block.body), loc:
        idx = list(block.iter_vars)
        memref.StoreOp(memref.LoadOp(src, idx).result, dst, idx)
    return block
