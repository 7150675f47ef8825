"""reindex_cache_read / reindex_cache_write: cache_read / cache_write through a cache buffer
indexed by a user map of the block's iter vars (TVM 0.21's output):

    for i, j, k: block "C":                  A_shared = alloc((4, 16, 4), "shared")
        C[vi, vj] += A[vi, vk] * B[vk, vj]    for i, k: block "A_shared":     # vi, vk = S, S
                                       ==>        A_shared[vi // 4, vk, vi % 4] = A[vi, vk]
    reindex_cache_read(C, 0, "shared",        for i, j, k: block "C":
        lambda i, j, k: (i // 4, k, i % 4))       C[vi, vj] += A_shared[vi // 4, vk, vi % 4] * ..

The copy block has the block's iter vars that the access uses (same names, domains, bindings),
under copies of the block's loops those bindings use (same names and ranges). The cache's
shape is the map's range over the iter var domains (a result `x % c` spans c, as in TVM).
Placement (as TVM): a read of an input buffer is copied at the start of the function; otherwise
right before the statement holding the block, in the innermost loop holding the buffer's writer
too. A write is copied back right before the first later reader of the buffer (in the innermost
loop holding both), or at the end of the function.

Legality (TVM's): the block is a leaf at the function root, in a stage pipeline; every access of
the buffer in the block has the same indices (a single point) and the map uses exactly the iter
vars those indices use; its results start at 0; a written buffer has the block as its only
writer, a read one at most one writer. Refused where TVM produces wrong or invalid programs: a
map under which two points of the block's iteration space share a cache element but not a
buffer element; a read of a buffer the block also writes, a write of a buffer it reads without
T.init() (the cache would be read unwritten), a store under a condition (the copy would store
elements never written), a block with a T.where predicate (the copy would run outside it).
"""

import itertools
from typing import Callable, List, Optional, Tuple

from mlir import ir
from mlir.dialects import memref

from tir_mlir.ir.affine_exprs import const_of
from tir_mlir.dialect.ops import Block, Loop
from tir_mlir.errors import ScheduleError
from tir_mlir.analysis import structure as analysis, index
from tir_mlir.schedule import lambda_exprs as symbolic
from tir_mlir.analysis.buffer_util import (
    accesses,
    block_reads,
    block_writes,
    buffer_name,
    dims_of,
    emit_index,
    func_of,
    substitute,
)
from tir_mlir.passes.schedule.cache_read_write import (
    _check_root,
    _check_single_writer,
    cache_name,
    make_cache_alloc,
    pick_buffer,
    top_of,
)
from tir_mlir.passes.schedule.reindex import (
    _args_of,
    _eval,
    _indices,
    _redirect,
    check_in_bounds,
    check_stage_pipeline,
)

_ENUMERATION_LIMIT = 1 << 20


def reindex_cache_read(
    block: Block, read_buffer_index: int, storage_scope: str, index_map: Callable
) -> Block:
    return _reindex_cache(block, read_buffer_index, storage_scope, index_map, "read")


def reindex_cache_write(
    block: Block, write_buffer_index: int, storage_scope: str, index_map: Callable
) -> Block:
    return _reindex_cache(block, write_buffer_index, storage_scope, index_map, "write")


def _reindex_cache(block: Block, i: int, scope: str, index_map: Callable, kind: str) -> Block:
    who = f"reindex_cache_{kind}"
    buf = pick_buffer(
        block, block_reads(block) if kind == "read" else block_writes(block), i, who, kind
    )
    _check_root(block, who)
    if any(analysis.is_block(o) for o in analysis.walk(block.op)):
        raise ScheduleError(f"{who}: block {block.name!r} is not a leaf block")
    if block.predicate is not None:
        raise ScheduleError(
            f"{who}: block {block.name!r} has a T.where predicate (the copy would run outside it)"
        )
    func = func_of(block.op)
    check_stage_pipeline(func, who)
    _check_single_writer(func, buf, who)
    ops = [op for op, _, v in accesses(block.op) if v == buf]
    _check_kinds(block, buf, ops, kind, who)
    old, used = _indices(block, buf, ops, who)
    check_in_bounds(block, buf, old, who)
    new = symbolic.exprs(index_map, len(block.iter_names))
    _check_same_iter_vars(block, old, new, used, who)
    shape = _shape(block, new, who)
    _check_consistent(block, old, new, used, who)
    writer = _writer(func, buf)
    if kind == "read":
        related = [block.op]
    else:
        related = [
            o
            for o in analysis.walk(func)
            if analysis.is_block(o)
            and o != block.op
            and any(k == "load" and v == buf for _, k, v in accesses(o))
        ]
    loc_scope, anchor = _location(func, writer, related)
    loops, dims, results = _copy_loops(block, used, loc_scope, who)

    # --- rewrite ------------------------------------------------------------------------------
    loc = block.op.location
    dtype = ir.MemRefType(buf.type).element_type
    cache = make_cache_alloc(
        func, buf, cache_name(buf, scope), scope, loc, ir.MemRefType.get(shape, dtype)
    )
    for op in ops:
        with ir.InsertionPoint(op), op.location:
            _redirect(op, cache, [emit_index(e, _args_of(block, op)) for e in new])
    src, dst = (buf, cache) if kind == "read" else (cache, buf)
    src_idx, dst_idx = (old, new) if kind == "read" else (new, old)
    return _build_copy(
        block,
        cache_name(buf, scope),
        used,
        loops,
        dims,
        results,
        anchor,
        loc,
        lambda leaves: memref.StoreOp(
            memref.LoadOp(src, [emit_index(e, leaves) for e in src_idx]).result,
            dst,
            [emit_index(e, leaves) for e in dst_idx],
        ),
    )


def _check_kinds(block: Block, buf: ir.Value, ops, kind: str, who: str):
    kinds = {"load" if op.name == "memref.load" else "store" for op in ops}
    name = buffer_name(buf)
    if kind == "read" and "store" in kinds:
        raise ScheduleError(
            f"{who}: block {block.name!r} reads and writes buffer {name!r} "
            f"(the cache would not see its writes)"
        )
    if kind == "write" and "load" in kinds and block.init is None:
        raise ScheduleError(
            f"{who}: block {block.name!r} reads and writes buffer {name!r} "
            f"without T.init() (it would read the cache unwritten)"
        )
    if kind == "write":
        regions = [block.body] + ([block.init] if block.init is not None else [])
        for op in ops:
            if op.name == "memref.store" and not any(_in(op, r) for r in regions):
                raise ScheduleError(
                    f"{who}: block {block.name!r} stores to {name!r} under a "
                    f"condition (the copy back would store elements it did "
                    f"not write)"
                )


def _in(op, region_block: ir.Block) -> bool:
    return any(analysis.op_of(o) == op for o in region_block.operations)


def _check_same_iter_vars(block: Block, old, new, used, who: str):
    """TVM: the map uses exactly the iter vars the buffer indices use."""
    in_new = set().union(*[dims_of(e) for e in new]) if new else set()
    for k, name in enumerate(block.iter_names):
        if (k in used) != (k in in_new):
            where, other = (
                ("the buffer indices", "the index map")
                if k in used
                else ("the index map", "the buffer indices")
            )
            raise ScheduleError(
                f"{who}: iter var {name!r} of block {block.name!r} appears in "
                f"{where} but not in {other}"
            )


def _shape(block: Block, new, who: str) -> List[int]:
    """The cache shape: each result's range over the iter var domains (TVM's MapShape)."""
    ranges = {k: (0, ext - 1) for k, (_, ext) in enumerate(block.domains)}
    dims = [index.var(k) for k in range(len(block.domains))]
    shape = []
    for j, e in enumerate(new):
        try:
            lo, hi = index.bounds(index.from_affine(e, dims, ranges), ranges)
        except ValueError as err:
            raise ScheduleError(f"{who}: the index map is not affine ({err})") from None
        if lo != 0:
            raise ScheduleError(f"{who}: result {j} of the index map ranges from {lo}, not 0")
        mod = e.maybe_downcast()
        modulus = const_of(mod.rhs) if isinstance(mod, ir.AffineModExpr) else None
        if modulus:
            hi = modulus - 1  # TVM: `x % c` spans c, however small x's range
        shape.append(hi + 1)
    return shape


def _check_consistent(block: Block, old, new, used, who: str):
    """Points of the iteration space sharing a cache element share the buffer element (the map
    may merge points only where the buffer indices do)."""
    exts = [block.domains[k][1] for k in used]
    size = 1
    for n in exts:
        size *= n
    if size > _ENUMERATION_LIMIT:
        bare = [e.maybe_downcast() for e in new]
        if all(isinstance(e, ir.AffineDimExpr) for e in bare) and len(
            {e.position for e in bare}
        ) == len(bare):
            return  # a permutation of iter vars: injective
        raise ScheduleError(
            f"{who}: cannot check the index map over {size} points of block {block.name!r}"
        )
    seen = {}
    point = [0] * len(block.domains)
    for values in itertools.product(*[range(n) for n in exts]):
        for k, v in zip(used, values):
            point[k] = v
        key = tuple(_eval(e, point) for e in new)
        val = tuple(_eval(e, point) for e in old)
        if seen.setdefault(key, val) != val:
            raise ScheduleError(
                f"{who}: the index map sends two different elements of the "
                f"buffer to one cache element {list(key)} (block "
                f"{block.name!r})"
            )


def _writer(func, buf: ir.Value) -> Optional[ir.Operation]:
    for o in analysis.walk(func):
        if analysis.is_block(o) and any(k == "store" and v == buf for _, k, v in accesses(o)):
            return o
    return None


def _location(func, writer, related) -> Tuple[Optional[ir.Operation], ir.Operation]:
    """(loop or None for the function body, statement in it the copy goes before), as TVM's
    CacheLocDetector: before the first related block after the writer, in the innermost loop
    holding both; an input buffer at the start of the function; else at its end."""
    body = func.regions[0].blocks[0]
    stmts = [analysis.op_of(s) for s in body.operations]
    if writer is None:
        return None, next(s for s in stmts if not analysis.is_declaration(s))
    blocks = [o for o in analysis.walk(func) if analysis.is_block(o)]
    after = blocks[blocks.index(writer) + 1 :]
    first = next((b for b in after if b in related), None)
    if first is None:
        return None, stmts[-1]
    scope = next(
        (
            lp
            for lp in reversed(analysis.enclosing_loops(first))
            if analysis.is_ancestor(lp, writer)
        ),
        None,
    )
    return scope, top_of(first, scope)


def _copy_loops(block: Block, used, scope, who: str):
    """The loops of the block under `scope` that the bindings of the used iter vars read, the
    binding dims (values) and the binding results of those iter vars over them."""
    results = [block.bindings.results[k] for k in used]
    wanted = sorted({d for r in results for d in dims_of(r)})
    values = [block.dims[d] for d in wanted]
    inner = [
        lp
        for lp in analysis.enclosing_loops(block.op)
        if scope is None or analysis.is_ancestor(scope, lp)
    ]
    ivs = [Loop(lp).iv for lp in inner]
    for v in values:
        if not any(v == iv for iv in ivs) and not _outside_loop_iv(v, scope):
            raise ScheduleError(
                f"{who}: block {block.name!r} has a binding that is not over its loops"
            )
    loops = [lp for lp in inner if any(Loop(lp).iv == v for v in values)]
    remap = [ir.AffineExpr.get_dim(k) for k in range(len(wanted))]
    pos = {d: k for k, d in enumerate(wanted)}
    subs = [
        remap[pos[d]] if d in pos else ir.AffineExpr.get_constant(0) for d in range(len(block.dims))
    ]
    return loops, values, [substitute(r, subs) for r in results]


def _outside_loop_iv(v: ir.Value, scope) -> bool:
    """`v` is the IV of `scope` or of a loop around it (visible where the copy goes)."""
    owner = v.owner
    if scope is None or not isinstance(owner, ir.Block):
        return False
    lp = analysis.op_of(owner.owner)
    return analysis.is_loop(lp) and (lp == scope or analysis.is_ancestor(lp, scope))


def _build_copy(block: Block, name: str, used, loops, values, results, anchor, loc, fill) -> Block:
    """Copies of `loops` (outermost first) before `anchor`, holding block `name` with the used
    iter vars bound by `results` over `values` (old loop IVs replaced by the copies')."""
    ip = ir.InsertionPoint(anchor)
    new_ivs = {}
    for lp in map(Loop, loops):
        copy = Loop.build(
            lp.name, lp.extent, min=lp.min, index_dtype=lp.index_dtype, loc=loc, ip=ip
        )
        new_ivs[lp.op] = copy.iv
        ip = ir.InsertionPoint.at_block_terminator(copy.body)
    dims = [next((iv for lp, iv in new_ivs.items() if Loop(lp).iv == v), v) for v in values]
    dtypes = block.index_dtypes
    copy = Block.build(
        name,
        [block.iter_names[k] for k in used],
        ["S"] * len(used),
        [block.domains[k] for k in used],
        ir.AffineMap.get(len(dims), 0, results),
        dims,
        index_dtypes=[dtypes[k] for k in used],
        loc=loc,
        ip=ip,
    )
    leaves = [None] * len(block.iter_names)
    for k, iv in zip(used, copy.iter_vars):
        leaves[k] = iv
    with ir.InsertionPoint.at_block_terminator(copy.body), loc:
        fill(leaves)
    return copy
