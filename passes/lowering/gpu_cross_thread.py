"""Stage `gpu-lower-cross-thread-reduction` (tir level, GPU targets; TVM's
LowerCrossThreadReduction): a reduction whose iteration is spread over threads (a reduction iter
var bound to threadIdx loops) becomes a per-thread partial result, one allreduce across those
threads, and a write-back done once per output by the thread whose reduction ids are 0:

    for tx in thread_binding(N, "threadIdx.x"):     red = alloc((1,), scope="local")
      for k1 in range(M):                           for tx in thread_binding(N, "threadIdx.x"):
        block B: vi = S(i), vk = R(tx * M + k1)        red[0] = identity
          init: B[vi] = identity             =>        for k1 in range(M):
          B[vi] = B[vi] op A[vi, vk]                     block B: red[0] = red[0] op A[vi, vk]
                                                       red[0] = gpu.all_reduce op red[0]
                                                                  {reduce_threads = ["threadIdx.x"]}
                                                       block B_write_back: T.where(tx == 0)
                                                         B[vi] = red[0]

`gpu-lower-allreduce` later turns the `gpu.all_reduce` into warp shuffles and a shared-memory
step across warps. TVM's `rfactor` + `bind` schedule (the write-back block's reduction loop bound
to threads) is this same pattern.

Legality, else a BuildError at the outermost thread-bound reduction loop: the block is a
reduction `W[I] = W[I] op rhs` whose init stores op's identity (rfactor's recognizer: add, mul,
max, min); its reduction iter vars read no blockIdx loop (a reduction across thread blocks would
need atomics) and no loop outside the outermost thread-bound one; the thread-bound reduction
loops are directly nested, the loops inside them feed reduction iter vars only, and the block is
alone in all of them; no spatial iter var reads a thread-bound reduction loop.
Loops inside the outermost reduction loop may be serial reduction loops (each thread runs them
for its partial result) or thread-bound (spatial ones: their ids select the group).
"""

from typing import Dict

from mlir import ir
from mlir.dialects import gpu, memref

from tir_mlir.analysis.expr_tree import erase_unused
from tir_mlir.ir.affine_exprs import dims_of
from tir_mlir.dialect.ops import Block, Loop, body_ops
from tir_mlir.errors import ScheduleError
from tir_mlir.passes.lowering.common import (
    ancestors,
    build_error,
    constant_min,
    functions,
    index_const,
    walk,
)
from tir_mlir.passes.lowering.gpu_bindings import is_thread_bound
from tir_mlir.passes.lowering.memory_ops import LOADS, no_effects
from tir_mlir.passes.schedule.cache_read_write import make_cache_alloc
from tir_mlir.passes.schedule.rfactor import Reduction

# The update's combiner (rfactor's recognizer) -> gpu.all_reduce operation.
ALL_REDUCE_OPS = {
    "arith.addf": "add",
    "arith.addi": "add",
    "arith.mulf": "mul",
    "arith.muli": "mul",
    "arith.maximumf": "maximumf",
    "arith.maxnumf": "maxnumf",
    "arith.maxsi": "maxsi",
    "arith.minimumf": "minimumf",
    "arith.minnumf": "minnumf",
    "arith.minsi": "minsi",
}
# Marks a gpu.all_reduce that reduces over these thread tags only (not the whole block).
REDUCE_THREADS = "reduce_threads"


def loop_of(value):
    """The `affine.for` whose IV `value` is, else None."""
    if isinstance(value, ir.BlockArgument):
        owner = value.owner.owner
        if owner is not None and owner.name == "affine.for":
            return owner
    return None


class GpuLowerCrossThreadReduction:
    name = "gpu-lower-cross-thread-reduction"

    def __call__(self, module: ir.Module):
        for f in functions(module):
            for op in [o for o in walk(f) if o.name == Block.OP_NAME]:
                block = Block(op)
                plan = _plan(block)
                if plan is not None:
                    _rewrite(f, block, *plan)


def _plan(block: Block):
    """(reduction, thread-bound reduction loops outer first, the other reduction loops inside
    them, location) for a cross-thread reduction, after moving the thread-bound loops of the
    nest from the outermost reduction loop down outermost (spatial ones first);
    None for any other block; a BuildError (before any change) for unsupported forms."""
    dims, kinds = block.dims, block.iter_types
    r_pos, s_pos = set(), set()
    for kind, expr in zip(kinds, block.bindings.results):
        (r_pos if kind == "R" else s_pos).update(dims_of(expr))
    r_loops = []  # (ops are compared with ==: they are not hashable)
    for p in sorted(r_pos):
        lp = loop_of(dims[p])
        if lp is not None and lp not in r_loops:
            r_loops.append(lp)
    threads = [lp for lp in r_loops if is_thread_bound(lp)]
    if not threads:
        return None
    chain = [p for p in ancestors(block.op) if p.name == "affine.for"]  # innermost first
    outer = max(threads, key=chain.index)
    where = (
        f"block '{block.name}' reduces across threads (loop '{Loop(outer).name}' bound "
        f"to {Loop(outer).thread})"
    )

    def refuse(why):
        return build_error(outer, f"{where}, but {why}")

    for lp in threads:
        if not _thread(lp).startswith("threadIdx."):
            raise refuse(
                f"loop '{Loop(lp).name}' bound to {_thread(lp)} spreads it over "
                f"thread blocks (that would need atomics): bind reduction loops to "
                f"threadIdx only"
            )
    try:
        red = Reduction(block)
    except ScheduleError as e:
        raise refuse(e.message.removeprefix("rfactor: ")) from None
    top = max(r_loops, key=chain.index)
    nest = chain[: chain.index(top) + 1][::-1]  # from the outermost reduction loop
    ids = []  # thread-bound spatial loops in it
    for lp in nest:
        view = Loop(lp)
        used = {p for p, d in enumerate(dims) if d == view.iv}
        if len(body_ops(view.body)) != 1:
            raise refuse(f"loop '{view.name}' holds more than the block")
        if any(use.owner != block.op for use in view.iv.uses):
            raise refuse(f"loop '{view.name}' is used by more than the block's bindings")
        if is_thread_bound(lp) and lp not in threads:
            if not used & s_pos:
                raise refuse(
                    f"loop '{view.name}' bound to {view.thread} sits among the "
                    f"reduction loops but feeds no iter var"
                )
            ids.append(lp)
        elif used & s_pos:
            raise refuse(f"loop '{view.name}' feeds a spatial iter var inside the reduction loops")
    _hoist(block, nest, ids + threads)
    inner = nest[len(ids) :]
    return red, inner[: len(threads)], inner[len(threads) :], outer.location


def _thread(lp) -> str:
    """The thread tag of a thread-bound loop."""
    thread = Loop(lp).thread
    assert thread is not None, "a loop bound to no thread"
    return thread


def _hoist(block: Block, loops, first):
    """Reorder the perfect nest `loops` (outer first, each the only child of the previous,
    their IVs used by the block's dims only) so that `first` come outermost: each position
    takes the header (bounds and attributes) of the loop moved there. A thread-bound loop is
    an id, not an iteration, so this does not change what the nest computes."""
    order = first + [lp for lp in loops if lp not in first]
    headers = [{n: lp.attributes[n] for n in lp.attributes} for lp in order]
    where: Dict[int, int] = {}  # old loop position -> new position
    for new, lp in enumerate(order):
        where[loops.index(lp)] = new
    ivs = [Loop(lp).iv for lp in loops]
    dims = [ivs[where[ivs.index(d)]] if d in ivs else d for d in block.dims]
    for lp, header in zip(loops, headers):
        for name in [n for n in lp.attributes if n not in header]:
            del lp.attributes[name]
        for name, attr in header.items():
            lp.attributes[name] = attr
    for k, d in enumerate(dims):
        block.op.operands[k] = d


def _rewrite(f, block: Block, red: Reduction, threads, serial, loc):
    innermost = Loop(threads[-1])
    etype = ir.MemRefType(red.buffer.type).element_type
    buf = make_cache_alloc(
        f, red.buffer, f"{block.name}_red", "local", loc, ir.MemRefType.get([1], etype)
    )
    term = list(innermost.body.operations)[-1]
    with loc:
        with ir.InsertionPoint.at_block_begin(innermost.body):
            zero = index_const(0, loc)
            memref.StoreOp(red.init_const.clone().result, buf, [zero])
        with ir.InsertionPoint(term):
            part = memref.LoadOp(buf, [zero]).result
            kind = ALL_REDUCE_OPS[red.combiner.name]
            total = gpu.AllReduceOp(part, op=ir.Attribute.parse(f"#gpu<all_reduce_op {kind}>"))
            total.attributes[REDUCE_THREADS] = ir.ArrayAttr.get(
                [ir.StringAttr.get(_thread(lp)) for lp in threads]
            )
            memref.StoreOp(total.result, buf, [zero])
            _write_back(block, red, buf, threads, serial, term)
    _in_thread(block, red, buf)


def _in_thread(block: Block, red: Reduction, buf):
    """The block now accumulates into `buf[0]`: no init, the update reads and writes buf."""
    new = _copy_header(block, block.name, block.dims, block.predicate, ir.InsertionPoint(block.op))
    _move_body(block.body, new)
    loc, self_load = red.store.location, red.self_load
    assert self_load is not None, "a Reduction has the update's load of the buffer"
    with ir.InsertionPoint(self_load), loc:
        cur = memref.LoadOp(buf, [index_const(0, loc)]).result
    self_load.results[0].replace_all_uses_with(cur)
    with ir.InsertionPoint(red.store), loc:
        memref.StoreOp(red.store.operands[0], buf, [index_const(0, loc)])
    red.store.erase()
    erase_unused(reversed(body_ops(new.body)), _dead_if_unused)
    block.op.erase()


def _write_back(block: Block, red: Reduction, buf, threads, serial, before):
    """`W[I] = buf[0]` by the threads whose reduction ids are at their minimum: a copy of the
    block with the serial reduction loops' IVs (out of scope here) set to their minimum."""
    loc = block.op.location
    firsts = {Loop(lp).iv: index_const(constant_min(Loop(lp)), loc) for lp in serial}
    dims = [firsts.get(d, d) for d in block.dims]
    n = len(dims)
    r_dims = {p for p, d in enumerate(block.dims) if loop_of(d) in threads + serial}
    cons = []
    if block.predicate is not None:
        cons = [
            (c.expr, c.is_eq) for c in block.predicate.constraints if not dims_of(c.expr) & r_dims
        ]
    for p, d in enumerate(block.dims):
        if loop_of(d) in threads:
            cons.append((ir.AffineDimExpr.get(p) - constant_min(Loop(loop_of(d))), True))
    pred = ir.IntegerSet.get(n, 0, [e for e, _ in cons], [q for _, q in cons])
    wb = _copy_header(block, f"{block.name}_write_back", dims, pred, ir.InsertionPoint(before))
    copy = block.op.clone(ip=ir.InsertionPoint(before))
    _move_body(Block(copy).body, wb)
    copy.erase()
    store = [o for o in body_ops(wb.body) if o.name == "memref.store"][0]
    with ir.InsertionPoint(store), loc:
        store.operands[0] = memref.LoadOp(buf, [index_const(0, loc)]).result
    erase_unused(reversed(body_ops(wb.body)), _dead_if_unused)


def _copy_header(block: Block, name, dims, predicate, ip) -> Block:
    """An empty block (no init) with `block`'s iter vars over `dims`."""
    return Block.build(
        name,
        block.iter_names,
        block.iter_types,
        block.domains,
        block.bindings,
        dims,
        predicate=predicate,
        annotations=block.annotations or None,
        index_dtypes=block.index_dtypes,
        loc=block.op.location,
        ip=ip,
    )


def _move_body(src: ir.Block, dst: Block):
    """Move the ops of `src` (terminator excepted) into `dst`'s body, iter vars mapped."""
    for old, new in zip(src.arguments, dst.body.arguments):
        old.replace_all_uses_with(new)
    term = list(dst.body.operations)[-1].operation
    for o in body_ops(src):
        o.move_before(term)


def _dead_if_unused(op: ir.Operation) -> bool:
    """The ops of the old update that may go once unused: its arithmetic, indices and loads."""
    return no_effects(op) or op.name in LOADS
