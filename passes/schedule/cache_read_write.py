"""cache_read / cache_write: stage a buffer through a new buffer in another storage scope.

cache_read(C, 0, "local") on `C[vi, vj] += A[vi, vk] * B[vk, vj]`::

    A_local = alloc(shape of A, scope="local")           # at the function root
    for ax0, ax1 in grid(shape of A):                     # first (A is an input), else right
                                                          # before the first consumer after A's writer
        block "A_local": v0, v1 = S, S
            A_local[v0, v1] = A[v0, v1]
    for i, j, k: block "C": ... A_local[vi, vk] ...       # consumers now read the cache

cache_write(C, 0, "local"): the block writes `C_local` instead of C (body and init), and a copy
nest `block "C_local": C[v0, v1] = C_local[v0, v1]` follows the block's outermost loop (or, when
the readers of C share a loop with the block, its statement in that loop).

Legality: the index is in range of the block's T.reads (cache_read) / T.writes (cache_write);
given consumer blocks that do not read the buffer are ignored (as TVM); the block sits at the function root (not nested in
another block), like the root placement TVM uses. Names follow TVM: `<buffer>_<scope>` with
dots replaced by underscores, copy iter vars `v0, v1, ...`, copy loops `ax0, ax1, ...`.
"""

from typing import Optional, Sequence

from mlir import ir
from mlir.dialects import memref

from tir_mlir.analysis.shapes import buffer_shape, is_dynamic, memref_type, size_operands
from tir_mlir.analysis.symbolic import Int
from tir_mlir.dialect.ops import INDEX_DTYPE, Block, Loop
from tir_mlir.ir.index_dtypes import buffer_attr, buffer_dims
from tir_mlir.dialect.buffers import (
    AXIS_SEPARATORS,
    SCOPE,
    axis_separators_attr,
    axis_separators_of,
    buffer_attrs,
    scope_attr,
)
from tir_mlir.errors import ScheduleError
from tir_mlir.passes.schedule import cache_in_scope as _scoped
from tir_mlir.passes.schedule import cache_read_loc as _loc
from tir_mlir.analysis.structure import (
    blocks_accessing,
    blocks_under,
    comes_before,
    enclosing_loops,
    is_ancestor,
    is_declaration,
    parent_op,
)
from tir_mlir.analysis.buffer_util import (
    accesses,
    block_reads,
    block_writes,
    buffer_name,
    func_of,
    top_stmt,
)
from tir_mlir.suggest import did_you_mean


def buffer_index(block: Block, buffers: list, buffer, what: str, kind: str) -> int:
    """The position in `buffers` (the block's `kind` buffers) of `buffer`, given by index or
    by name (as TVM takes it)."""
    if isinstance(buffer, str):
        found = [k for k, b in enumerate(buffers) if buffer_name(b) == buffer]
        if not found:
            hint = did_you_mean(buffer, [buffer_name(b) for b in buffers])
            raise ScheduleError(
                f"{what}: block {block.name!r} does not {kind} a buffer named "
                f"{buffer!r}{hint}; its {kind} buffers: "
                f"{', '.join(buffer_name(b) for b in buffers) or 'none'}"
            )
        return found[0]
    if isinstance(buffer, bool) or not isinstance(buffer, int):
        raise ScheduleError(f"{what}: the buffer must be an index or a name, got {buffer!r}")
    pick_buffer(block, buffers, buffer, what, kind)
    return buffer


def pick_buffer(block: Block, buffers: list, index, what: str, kind: str) -> ir.Value:
    """buffers[index] (index: a position or a buffer name), or a ScheduleError naming the
    block and its `kind` ("read"/"write") buffers."""
    if isinstance(index, str):
        index = buffer_index(block, buffers, index, what, kind)
    if not 0 <= index < len(buffers):
        names = ", ".join(buffer_name(b) for b in buffers) or "none"
        raise ScheduleError(
            f"{what}: block {block.name!r} has {len(buffers)} "
            f"{kind} buffer(s) ({names}); "
            f"index {index} is out of range"
        )
    return buffers[index]


def _check_root(block: Block, what: str):
    p = top_stmt(block.op).parent
    if p is None or p.name != "func.func":
        raise ScheduleError(
            f"{what}: block {block.name!r} is nested in another block; "
            f"only root-level blocks can be cached"
        )


def cache_name(buf: ir.Value, scope: str) -> str:
    return f"{buffer_name(buf)}_{scope.replace('.', '_')}"


def free_block_name(func, name: str) -> str:
    """`name`, or `name_1`, `name_2`... when a block of `func` has it (a cache_read and a
    cache_write of one buffer in one scope would both name their copy `B_local`, and a
    program with two blocks of one name does not parse back)."""
    taken = {Block(op).name for op in blocks_under(func)}
    k, out = 0, name
    while out in taken:
        k += 1
        out = f"{name}_{k}"
    return out


def make_cache_alloc(
    func,
    buf: ir.Value,
    name: str,
    scope: str,
    loc,
    mtype: Optional[ir.MemRefType] = None,
    shape: Optional[Sequence[Int]] = None,
) -> ir.Value:
    """A `memref.alloc` like `buf` (or of `mtype`, or of `buf`'s dtype and `shape`) at the
    function root, after the existing root allocs (and, for a symbolic shape, after the
    definitions of its sizes)."""
    if shape is None and mtype is None:
        shape = buffer_shape(buf)
    if shape is not None and (mtype is None or is_dynamic(shape)):
        mtype = memref_type(shape, ir.MemRefType(buf.type).element_type)
    mtype = mtype or ir.MemRefType(buf.type)
    if shape is not None and is_dynamic(shape):
        alloc = root_alloc(func, mtype, name, scope, loc, shape)
    else:
        alloc = root_alloc(func, mtype, name, scope, loc)
    dtype = buffer_attrs(buf).get("tir.dtype")  # an unsigned parameter's too
    if dtype is not None:
        alloc.attributes["tir.dtype"] = dtype
    rank = len(ir.MemRefType(alloc.result.type).shape)
    dims = buffer_dims(buf)  # T.int64 dimensions stay T.int64 (a new rank: the first's)
    if dims and len(dims) != rank:
        dims = dims[:1] * rank
    dims_attr = buffer_attr(dims)
    if dims_attr is not None:
        alloc.attributes[INDEX_DTYPE] = dims_attr
    seps = axis_separators_of(buffer_attrs(buf))
    seps_attr = axis_separators_attr(seps) if all(x < rank for x in seps) else None
    if seps_attr is not None:
        alloc.attributes[AXIS_SEPARATORS] = seps_attr  # kept, as TVM
    return alloc.result


def root_alloc(
    func, mtype: ir.MemRefType, name: str, scope: str, loc, shape: Sequence[Int] = ()
) -> ir.Operation:
    """A `memref.alloc` named `name` in `scope` at the function root, after the existing root
    allocs; a symbolic `shape` (`mtype` has its `?`s) gives the dynamic sizes, made at the
    top level, and the alloc comes after them."""
    body = func.regions[0].blocks[0]
    allocs = [o for o in body.operations if o.operation.name == "memref.alloc"]
    sizes, after = size_operands(func, shape) if is_dynamic(shape) else ([], None)
    with ir.InsertionPoint(list(body.operations)[0]), loc:
        alloc = memref.AllocOp(mtype, sizes, [])
    if allocs:
        alloc.operation.move_after(allocs[-1].operation)
    if after is not None and comes_before(alloc.operation, after):
        alloc.operation.move_after(after)
    alloc.attributes["tir.name"] = ir.StringAttr.get(name)
    alloc.attributes[SCOPE] = scope_attr(scope)
    return alloc


def make_copy_nest(src: ir.Value, dst: ir.Value, name: str, loc, before: ir.Operation) -> Block:
    """for ax0, ...: block name: dst[v0, ...] = src[v0, ...], built before `before`."""
    shape = buffer_shape(src)
    return make_nest(
        name,
        shape,
        loc,
        before,
        lambda idx: memref.StoreOp(memref.LoadOp(src, idx).result, dst, idx),
        buffer_dims(src),
    )


def make_nest(name: str, shape, loc, before: ir.Operation, fill, dim_dtypes=None) -> Block:
    """for ax0, ... in grid(shape): block name (spatial v0, ...), body built by fill(iter vars).
    `dim_dtypes`: index dtype per dimension (the buffer's; default int32)."""
    ip = ir.InsertionPoint(before)
    loops = []
    dim_dtypes = list(dim_dtypes or ["int32"] * len(shape))
    with loc:
        for d, n in enumerate(shape):
            loop = Loop.build(f"ax{d}", n, index_dtype=dim_dtypes[d], loc=loc, ip=ip)
            loops.append(loop)
            ip = ir.InsertionPoint.at_block_terminator(loop.body)
        rank = len(shape)
        block = Block.build(
            name,
            [f"v{d}" for d in range(rank)],
            ["S"] * rank,
            [(0, n) for n in shape],
            ir.AffineMap.get_identity(rank),
            [l.iv for l in loops],
            index_dtypes=dim_dtypes,
            loc=loc,
            ip=ip,
        )
    with ir.InsertionPoint.at_block_terminator(block.body), loc:
        fill(list(block.iter_vars))
    return block


def _consumers(func, buf: ir.Value, consumer_blocks, what: str) -> list:
    """The blocks whose loads of `buf` are redirected: `consumer_blocks` (those of them that
    read it: TVM ignores the others), else every block reading it but not writing it (a
    reduction's read of its own output stays)."""
    if consumer_blocks is None:
        # TVM's consumers are the blocks of the root scope (a block's nest is redirected
        # whole; blocks inside a block that writes the buffer keep reading it)
        writers = blocks_accessing(func, [buf], stores=True, skip=None)
        return [
            Block(o)
            for o in blocks_accessing(func, [buf], stores=False, skip=None)
            if not any(o == w for w in writers)
        ]
    reading = [
        b for b in blocks_under(func) if any(k == "load" and v == buf for _, k, v in accesses(b))
    ]
    return [c for c in consumer_blocks if any(c.op == r for r in reading)]


def _writer_block(func, buf: ir.Value):
    return next(
        o for o in blocks_under(func) if any(k == "store" and v == buf for _, k, v in accesses(o))
    )


def _writer_top(func, buf: ir.Value):
    """The root-level statement holding the block that writes `buf`, or None (an input)."""
    for o in blocks_under(func):
        if any(k == "store" and v == buf for _, k, v in accesses(o)):
            return top_stmt(o)
    return None


def _check_single_writer(func, buf: ir.Value, who: str = "cache_read"):
    """TVM: a cached buffer with a producer has exactly one (root-level) writer block; e.g.
    the init and update blocks left by decompose_reduction are two."""
    # (the root-level blocks: those not nested in another block)
    n = len(blocks_accessing(func, [buf], stores=True, skip=None))
    if n > 1:
        raise ScheduleError(
            f"{who}: The buffer {buffer_name(buf)} is expected to be written "
            f"by single block, but got {n} blocks who write it"
        )


def _redirect_loads(blocks: Sequence[Block], old: ir.Value, new: ir.Value):
    for b in blocks:
        for op, kind, v in accesses(b.op):
            if kind == "load" and v == old:
                op.operands[0] = new


def cache_read(
    block: Block,
    read_buffer_index: int,
    storage_scope: str,
    consumer_blocks: Optional[Sequence[Block]] = None,
) -> Block:
    buf = pick_buffer(block, block_reads(block), read_buffer_index, "cache_read", "read")
    scope = _scoped.scope_of(block)
    if scope is not None and consumer_blocks is None:  # TVM caches inside the scope block
        return _scoped.cache_read(block, scope, buf, storage_scope, cache_name(buf, storage_scope))
    _check_root(block, "cache_read")
    func = func_of(block.op)
    consumers = _consumers(func, buf, consumer_blocks, "cache_read")
    _check_single_writer(func, buf)
    loc = block.op.location
    name = cache_name(buf, storage_scope)
    block_name = free_block_name(func, name)
    # like TVM: an input is copied at the start of the function body; a buffer written by a
    # block right before its first consumer after that writer
    stmts = [
        s.operation for s in func.regions[0].blocks[0].operations if not is_declaration(s.operation)
    ]
    writer = _writer_top(func, buf)
    first = stmts[0]
    if writer is not None and any(top_stmt(c.op) == writer for c in consumers):
        # TVM copies inside the shared loops, right after the writer (cache_read_loc.py)
        wblock = _writer_block(func, buf)
        found = _loc.location(func, wblock, [c.op for c in consumers])
        if found is None or found[0] is None:
            raise ScheduleError(
                f"cache_read: the writer of buffer {buffer_name(buf)!r} shares "
                f"a loop with a consumer that does not follow it there"
            )
        cache = make_cache_alloc(func, buf, name, storage_scope, loc)
        copy = _loc.copy_nest(found[0], wblock, buf, cache, block_name, loc, found[1])
        _redirect_loads(consumers, buf, cache)
        return copy
    if writer is not None:
        after = next(i for i, s in enumerate(stmts) if s == writer) + 1
        tops = [
            k
            for k, s in enumerate(stmts)
            if k >= after and any(top_stmt(c.op) == s for c in consumers)
        ]
        first = stmts[min(tops, default=after)]
    cache = make_cache_alloc(func, buf, name, storage_scope, loc)
    copy = make_copy_nest(buf, cache, block_name, loc, first)
    _redirect_loads(consumers, buf, cache)
    return copy


def _copy_back_anchor(writer, readers, consumers) -> ir.Operation:
    """The statement the copy back follows (as TVM): in the innermost loop around the writer
    that also holds every other reader of the buffer (else the function body), the last
    statement holding the writer or a block reading the cache."""
    scope = next(
        (
            lp
            for lp in reversed(enclosing_loops(writer))
            if readers and all(is_ancestor(lp, r) for r in readers)
        ),
        None,
    )
    own = [top_of(o, scope) for o in [writer] + consumers if scope is None or is_ancestor(scope, o)]
    region = list(
        (scope.regions[0] if scope is not None else func_of(writer).regions[0]).blocks[0].operations
    )
    pos = {s.operation: k for k, s in enumerate(region)}
    return max(own, key=lambda t: pos[t])


def top_of(op, scope) -> ir.Operation:
    """The ancestor of `op` (or op) directly in `scope`'s body (scope None: the function)."""
    op = op.operation if hasattr(op, "operation") else op
    while True:
        p = op.parent
        if p is None:
            raise ValueError(f"{op.name} is not inside a func.func")
        p = p.operation if hasattr(p, "operation") else p
        if (scope is None and p.name == "func.func") or (scope is not None and p == scope):
            return op
        op = p


def cache_write(
    block: Block,
    write_buffer_index: int,
    storage_scope: str,
    consumer_blocks: Optional[Sequence[Block]] = None,
) -> Block:
    buf = pick_buffer(block, block_writes(block), write_buffer_index, "cache_write", "write")
    scope = _scoped.scope_of(block)
    if scope is not None and consumer_blocks is None:  # TVM caches inside the scope block
        return _scoped.cache_write(block, scope, buf, storage_scope, cache_name(buf, storage_scope))
    _check_root(block, "cache_write")
    func = func_of(block.op)
    _check_single_writer(func, buf, "cache_write")
    consumers = (
        [] if consumer_blocks is None else _consumers(func, buf, consumer_blocks, "cache_write")
    )
    loc = block.op.location
    readers = [b.op for b in _consumers(func, buf, None, "cache_write") if b.op != block.op]
    originals = [r for r in readers if all(r != c.op for c in consumers)]
    shared = (
        _loc.location(func, block.op, originals)
        if any(top_stmt(r) == top_stmt(block.op) for r in originals)
        else None
    )
    if shared is None:
        anchor = _copy_back_anchor(block.op, readers, [c.op for c in consumers])
    name = cache_name(buf, storage_scope)
    block_name = free_block_name(func, name)
    cache = make_cache_alloc(func, buf, name, storage_scope, loc)
    for op, kind, v in accesses(block.op):
        if v == buf:
            op.operands[0 if kind == "load" else 1] = cache
    if shared is not None and shared[0] is not None:
        # a block still reading the original shares loops with the writer: copy back right
        # after the writer there, what it writes per iteration (TVM's place)
        copy = _loc.copy_nest(shared[0], block.op, cache, buf, block_name, loc, shared[1], cache)
        _redirect_loads(consumers, buf, cache)
        return copy
    if shared is not None:
        anchor = _copy_back_anchor(block.op, readers, [c.op for c in consumers])
    copy = make_copy_nest(cache, buf, block_name, loc, anchor)
    region_op = parent_op(anchor)
    assert region_op is not None  # the anchor is a statement in a function
    top_of(copy.op, None if region_op.name == "func.func" else region_op).move_after(anchor)
    _redirect_loads(consumers, buf, cache)
    return copy
