"""compute_root: move a block back to the function's top level with its full loop nest.

This is TE's `s[X].compute_root()`, which TensorIR has no primitive for: it undoes a
compute_at / reverse_compute_at. The block gets one loop per iter var over its whole domain
(`ax0`, `ax1`, ... unit loops kept, so the nest has one loop per iter var like a freshly
written block), placed at the function body level right before the top-level statement that
holds its first consumer (and after those holding its producers):

    for i in range(16):                     for ax0, ax1 in T.grid(16, 16):
        for ax0 in range(16):                   B[vi, vj] = A[vi, vj] * 2    # vi, vj = ax0, ax1
            B[vi, vj] = A[vi, vj] * 2  ->   for i in range(16):
        for j in range(16):                     for j in range(16):
            C[vi, vj] = B[vi, vj] + 1               C[vi, vj] = B[vi, vj] + 1

TE mapping: compute_root(stage) = attach at root; TE recomputes the bounds of the stage from
its consumers, here the block simply keeps its declared iter domain. A block already at the
root (its outermost loop holds only it) is left as it is, like TE's no-op.

Legality: the block is complete or reduction (no opaque iter vars) and the only writer of its
buffers; some top-level position is after all its producers and before all its consumers.
"""

from mlir import ir

from tir_mlir.dialect.ops import Block, body_ops
from tir_mlir.errors import ScheduleError
from tir_mlir.analysis.structure import blocks_under, enclosing_loops, func_of, op_of
from tir_mlir.passes.schedule.compute_at import check_single_writer, dataflow, place, position
from tir_mlir.analysis.region_cover import LoopSpace, cover


def compute_root(block) -> ir.Operation:
    """Returns the block op (recreated unless it was already at the root)."""
    block_op = op_of(block)
    blk = Block(block_op)
    who = f"compute_root: block {blk.name!r}"
    func = func_of(block_op)
    body = func.regions[0].blocks[0]
    loops = enclosing_loops(block_op)
    top = loops[0] if loops else block_op
    if op_of(top.parent) == func and blocks_under(top) in ([], [block_op]):
        return block_op
    if "O" in blk.iter_types:
        raise ScheduleError(
            f"{who}: the block has opaque iter vars (it must be a complete or reduction block)"
        )
    check_single_writer(block_op, func, who)
    producers, consumers = dataflow(block_op)
    stmts = body_ops(body)
    if stmts and stmts[-1].name == "func.return":
        stmts = stmts[:-1]
    pos = position(stmts, consumers, producers, -1, who)
    space = LoopSpace([])
    return place(block_op, body, stmts, pos, space, cover(space, blk, {}, preserve_unit_loops=True))
