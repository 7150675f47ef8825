"""reindex: make a block access one buffer through a new buffer indexed by its iter vars
(TVM 0.21's output), with a copy block between the two:

    for i, j, k:  block "C":                       B_reindex = alloc((16, 16))
        C[vi, vj] += A[vi, vk] * B[vk, vj]          for ax0, ax1: block "B_reindex_reindex":
                                          ==>           B_reindex[v0, v1] = B[v1, v0]
    reindex(C, ("read", 1))                      for i, j, k:  block "C":
                                                     C[vi, vj] += A[vi, vk] * B_reindex[vj, vk]

The new buffer has one dimension per iter var the access uses, in the block's iter var order,
its extent the iter var's domain. A read is copied in before the block's top-level loop (block
`<buf>_reindex_reindex`); a write is copied out after it (block `<buf>_reindex`).

Legality (TVM's, plus one): the block is a leaf at the function root whose loops hold no other
block; the scope has no
write-after-read dependency; every access of the buffer in the block has the same indices, each
an affine expression of iter vars whose domains start at 0. A write must cover the iter vars'
domains (TVM copies back elements the block never wrote); this is checked by enumerating the
block's iterations (up to 2^16), else the bindings must be distinct whole loops. A block that
reads and writes the buffer may only reindex its write, and only with a T.init() (TVM accepts
both and reads an unwritten or stale buffer).
"""

import itertools
from typing import List, Tuple, Union

from mlir import ir
from mlir.dialects import memref

from tir_mlir.dialect.ops import Block
from tir_mlir.errors import BufferIndexError, ScheduleError
from tir_mlir.analysis import structure as analysis, index
from tir_mlir.analysis.buffer_util import (
    NotAffine,
    accesses,
    block_reads,
    block_writes,
    buffer_name,
    buffer_scope,
    dims_of,
    emit_index,
    func_of,
    simplify,
    substitute,
    to_affine,
    top_stmt,
)
from tir_mlir.analysis.linear import linear
from tir_mlir.passes.schedule.cache_read_write import (
    _check_root,
    make_cache_alloc,
    make_nest,
    pick_buffer,
)
from tir_mlir.analysis.expr_tree import erase_with_operands

WHO = "reindex"
_ENUMERATION_LIMIT = 1 << 16


def buffer_index(
    block: Block, buffer: Union[Tuple[str, int], str], who: str = WHO
) -> Tuple[str, int]:
    """("read" | "write", index) for a buffer given so or by name (a written name: "write")."""
    if isinstance(buffer, str):
        for through_views in (False, True):  # a view's source as TVM's T.writes name it
            for kind, bufs in (("write", block_writes(block)), ("read", block_reads(block))):
                for i, b in enumerate(bufs):
                    while (
                        through_views
                        and not isinstance(b.owner, ir.Block)
                        and b.owner.name == "memref.subview"
                    ):
                        b = b.owner.operands[0]
                    if buffer_name(b) == buffer:
                        return kind, i
        raise ScheduleError(f"{who}: could not find buffer {buffer!r} in block {block.name!r}")
    kind, i = buffer
    if kind not in ("read", "write"):
        raise ScheduleError(
            f"{who}: buffer must be ('read'|'write', index) or a name, got {buffer!r}"
        )
    bufs = block_reads(block) if kind == "read" else block_writes(block)
    if isinstance(i, int) and not 0 <= i < len(bufs):
        raise BufferIndexError(
            f"{who}: block {block.name!r} has {len(bufs)} {kind} buffer(s); "
            f"index {i} is out of range"
        )
    pick_buffer(block, bufs, i, who, kind)
    return kind, i


def check_stage_pipeline(func, who: str):
    """TVM's stage-pipeline condition: no block writes a buffer an earlier block read (the
    blocks of the function's root scope, each with the blocks nested in it)."""
    read = []
    for op in analysis.child_blocks(func):
        if analysis.is_block(op):
            reads, writes = analysis.block_reads_writes(op)
            for w in writes:
                if any(w == r for r, o in read if o != op):
                    raise ScheduleError(
                        f"{who}: the scope is not a stage pipeline (block "
                        f"{Block(op).name!r} writes {buffer_name(w)!r} after "
                        f"another block read it)"
                    )
            read += [(r, op) for r in reads]


def reindex(block: Block, buffer: Union[Tuple[str, int], str]) -> Block:
    kind, i = buffer_index(block, buffer)
    buf = (block_reads(block) if kind == "read" else block_writes(block))[i]
    _check_root(block, WHO)
    if any(analysis.is_block(o) for o in analysis.walk(block.op)):
        raise ScheduleError(f"{WHO}: block {block.name!r} is not a leaf block")
    top = top_stmt(block.op)
    if any(o != block.op for o in analysis.blocks_under(top)):
        raise ScheduleError(
            f"{WHO}: the loops of block {block.name!r} hold other blocks (the "
            f"copy would run before or after those too)"
        )
    func = func_of(block.op)
    check_stage_pipeline(func, WHO)
    ops = [op for op, _, v in accesses(block.op) if v == buf]
    kinds = {k for _, k, v in accesses(block.op) if v == buf}
    if kinds == {"load", "store"} and (kind == "read" or block.init is None):
        raise ScheduleError(
            f"{WHO}: block {block.name!r} reads and writes buffer "
            f"{buffer_name(buf)!r}"
            + (
                " (the copy would not see its writes)"
                if kind == "read"
                else " without T.init() (its first read would see the new buffer unwritten)"
            )
        )
    exprs, used = _indices(block, buf, ops)
    if kind == "write":
        _check_covers(block, used)
    check_in_bounds(block, buf, exprs, WHO)

    # --- rewrite ------------------------------------------------------------------------------
    loc = block.op.location
    shape = [block.domains[k][1] for k in used]
    dtype = ir.MemRefType(buf.type).element_type
    new = make_cache_alloc(
        func,
        buf,
        f"{buffer_name(buf)}_reindex",
        buffer_scope(buf),
        loc,
        ir.MemRefType.get(shape, dtype),
    )
    for op in ops:
        _redirect(op, new, [_args_of(block, op)[k] for k in used])
    dtypes = [block.index_dtypes[k] for k in used]  # the copy loops: the iter vars' dtypes
    taken = {Block(o).name for o in analysis.walk(func) if analysis.is_block(o)}
    if kind == "read":
        copy = make_nest(
            _unique(f"{buffer_name(new)}_reindex", taken),
            shape,
            loc,
            top,
            lambda ivs: memref.StoreOp(
                memref.LoadOp(buf, _emit(exprs, used, ivs)).result, new, ivs
            ),
            dtypes,
        )
    else:
        copy = make_nest(
            _unique(buffer_name(new), taken),
            shape,
            loc,
            top,
            lambda ivs: memref.StoreOp(
                memref.LoadOp(new, ivs).result, buf, _emit(exprs, used, ivs)
            ),
            dtypes,
        )
        top_stmt(copy.op).move_after(top)
    return copy


def _unique(name: str, taken: set) -> str:
    """`name`, or `name_1`, `name_2`... when a block has it (a reindex of a reindex block
    would name its copy like that block)."""
    k, out = 0, name
    while out in taken:
        k += 1
        out = f"{name}_{k}"
    return out


def _indices(
    block: Block, buf: ir.Value, ops, who: str = WHO
) -> Tuple[List[ir.AffineExpr], List[int]]:
    """The access indices as affine exprs over iter var positions, and the iter vars used."""
    found = None
    for op in ops:
        args = _args_of(block, op)
        idx = list(op.operands)[1 if op.name == "memref.load" else 2 :]
        leaves: list = []
        try:
            es = [to_affine(v, leaves) for v in idx]
        except NotAffine:
            es = None
        if es is None or any(not any(lf == a for a in args) for lf in leaves):
            raise ScheduleError(
                f"{who}: the indices of buffer {buffer_name(buf)!r} in block "
                f"{block.name!r} are not affine in its iter vars"
            )
        pos = [next(k for k, a in enumerate(args) if a == lf) for lf in leaves]
        es = [
            e.compose(ir.AffineMap.get(len(args), 0, [ir.AffineExpr.get_dim(p) for p in pos]))
            if leaves
            else e
            for e in es
        ]
        if found is not None and [str(e) for e in es] != [str(e) for e in found]:
            raise ScheduleError(
                f"{who}: buffer {buffer_name(buf)!r} is accessed with "
                f"different indices in block {block.name!r} (multiple buffer "
                f"accesses have non-unique indices)"
            )
        found = es
    if found is None:
        raise ScheduleError(
            f"{who}: block {block.name!r} does not access buffer {buffer_name(buf)!r}"
        )
    found = [_drop_unit_iters(_fold_by_ranges(e, block.domains), block.domains) for e in found]
    used = sorted({p for e in found for p in dims_of(e)})
    for k in used:
        if block.domains[k][0] != 0:
            raise ScheduleError(
                f"{who}: iter var {block.iter_names[k]!r} of block "
                f"{block.name!r} does not start at 0"
            )
    return found, used


def _fold_by_ranges(e: ir.AffineExpr, domains) -> ir.AffineExpr:
    """`x // c` -> 0 and `x % c` -> x where x (linear in the iter vars) lies in [0, c), as
    TVM's simplifier does with the iter vars' domains (`co // 64 * 3 + rc` -> `rc` for co < 64):
    the reindexed buffer then has no dimension for an iter var the index does not need."""
    e = e.maybe_downcast()
    kinds = (
        (ir.AffineAddExpr, lambda a, b: a + b),
        (ir.AffineMulExpr, lambda a, b: a * b),
        (ir.AffineFloorDivExpr, ir.AffineFloorDivExpr.get),
        (ir.AffineModExpr, ir.AffineModExpr.get),
        (ir.AffineCeilDivExpr, ir.AffineCeilDivExpr.get),
    )
    for kind, make in kinds:
        if not isinstance(e, kind):
            continue
        lhs, rhs = _fold_by_ranges(e.lhs, domains), _fold_by_ranges(e.rhs, domains)
        c = rhs.maybe_downcast()
        lin = linear(lhs)
        if (
            kind in (ir.AffineFloorDivExpr, ir.AffineModExpr)
            and isinstance(c, ir.AffineConstantExpr)
            and c.value > 0
            and lin is not None
        ):
            coeffs, const = lin.terms, lin.const
            lo = const + sum(
                min(k * domains[d][0], k * sum(domains[d]) - k) for d, k in coeffs.items()
            )
            hi = const + sum(
                max(k * domains[d][0], k * sum(domains[d]) - k) for d, k in coeffs.items()
            )
            if 0 <= lo and hi < c.value:
                return ir.AffineExpr.get_constant(0) if kind is ir.AffineFloorDivExpr else lhs
        return make(lhs, rhs)
    return e


def _args_of(block: Block, op: ir.Operation) -> list:
    """The iter var values seen by `op`: the init region's own arguments inside T.init()."""
    init = block.init
    if (
        init is not None
        and analysis.is_ancestor(init.owner.operation, op)
        and any(
            analysis.op_of(o) == op or analysis.is_ancestor(analysis.op_of(o), op)
            for o in init.operations
        )
    ):
        return list(init.arguments)
    return list(block.iter_vars)


def _drop_unit_iters(e: ir.AffineExpr, domains) -> ir.AffineExpr:
    """`e` with the iter vars of a one-point domain [0, 1) read as 0 (`h + rh` is `h`), unless
    nothing else is left: an index that is such an iter var alone stays (TVM's reindex
    simplifies its indices so, SimplifyNonTrivialExpr)."""
    unit = {k for k, (lo, ext) in enumerate(domains) if lo == 0 and ext == 1}
    if not dims_of(e) & unit:
        return e
    n = len(domains)
    subs = [
        ir.AffineExpr.get_constant(0) if k in unit else ir.AffineExpr.get_dim(k) for k in range(n)
    ]
    out = simplify(substitute(e, subs), n)
    return e if not dims_of(out) else out


def _emit(exprs, used, ivs) -> List[ir.Value]:
    leaves = [None] * (max(used, default=-1) + 1)
    for k, v in zip(used, ivs):
        leaves[k] = v
    return [emit_index(e, leaves) for e in exprs]


def _redirect(op: ir.Operation, new: ir.Value, args: List[ir.Value]):
    """The access `op` reads / writes `new[args]` instead."""
    with ir.InsertionPoint(op), op.location:
        if op.name == "memref.load":
            load = memref.LoadOp(new, args)
            op.results[0].replace_all_uses_with(load.result)
        else:
            memref.StoreOp(op.operands[0], new, args)
    erase_with_operands(op)


def _check_covers(block: Block, used: List[int]):
    """Every point of the used iter vars' domains is written by some iteration."""
    dims = block.dims
    results = block.bindings.results
    ranges = [analysis.value_range(d) for d in dims]
    size = 1
    for lo, hi in ranges:
        size *= hi - lo + 1
    want = 1
    for k in used:
        want *= block.domains[k][1]
    if size <= _ENUMERATION_LIMIT:
        pred = block.predicate
        seen = set()
        for point in itertools.product(*[range(lo, hi + 1) for lo, hi in ranges]):
            if pred is not None and not all(
                (_eval(c.expr, point) == 0) if c.is_eq else (_eval(c.expr, point) >= 0)
                for c in pred.constraints
            ):
                continue
            seen.add(tuple(_eval(results[k], point) for k in used))
        if len(seen) == want:
            return
    elif block.predicate is None:
        loops = [e.position for e in (results[k] for k in used) if isinstance(e, ir.AffineDimExpr)]
        if len(loops) == len(used) == len(set(loops)) and all(
            ranges[p] == (0, block.domains[k][1] - 1) for p, k in zip(loops, used)
        ):
            return
    raise ScheduleError(
        f"{WHO}: block {block.name!r} does not write every element of its "
        f"iteration domain (the copy back would store unwritten elements)"
    )


def check_in_bounds(block: Block, buf: ir.Value, exprs, who: str):
    """The copy touches `buf` at `exprs` over the whole box of the iter vars' domains: refuse
    when that reaches outside the buffer (an access guarded by a condition, e.g. a padding
    block's `T.if_then_else`; TVM accepts and copies out of bounds; fuzzer seed 474). Also
    reindex_cache_read/_write's check (conservative when the copy covers less)."""
    n = len(block.domains)
    dims = [index.var(k) for k in range(n)]
    ranges = {k: (lo, lo + ext - 1) for k, (lo, ext) in enumerate(block.domains)}
    for d, (e, size) in enumerate(zip(exprs, ir.MemRefType(buf.type).shape)):
        lo, hi = index.bounds(index.from_affine(e, dims, ranges), ranges)
        if lo < 0 or hi >= size:
            raise ScheduleError(
                f"{who}: block {block.name!r} accesses {buffer_name(buf)!r} "
                f"at [{lo}, {hi}] on axis {d} over its iteration domain, "
                f"outside the buffer (a guarded access?): the copy would "
                f"access out of bounds"
            )


def _eval(e: ir.AffineExpr, point) -> int:
    e = e.maybe_downcast()
    if isinstance(e, ir.AffineConstantExpr):
        return e.value
    if isinstance(e, ir.AffineDimExpr):
        return point[e.position]
    assert isinstance(e, ir.AffineBinaryExpr), e  # (no symbols in a block's indices)
    a, b = _eval(e.lhs, point), _eval(e.rhs, point)
    if isinstance(e, ir.AffineAddExpr):
        return a + b
    if isinstance(e, ir.AffineMulExpr):
        return a * b
    if isinstance(e, ir.AffineFloorDivExpr):
        return a // b
    if isinstance(e, ir.AffineModExpr):
        return a % b
    return -(-a // b)  # ceildiv
