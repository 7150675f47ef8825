"""TE's `parallel` / `bind(..., blockIdx.*)` on a reduction axis, done the legal TensorIR way.

Old TE accepted both and emitted code where the iterations race on the output. TensorIR (and
TVM 0.21's `tir.Schedule`) refuses them. Here the reduction is first factored on that loop
(`rfactor`): the `X_rf` block, which now owns the loop, computes one partial per iteration, so
the loop is data parallel there and gets the asked kind; block `X` becomes the write-back that
reduces the partials. On the GPU the write-back must run in a kernel too: its spatial loops are
fused onto blockIdx.x and its reduction loop onto threadIdx.x (a cross-thread reduction; split
first when it has more iterations than a thread block has threads).
"""

from tir_mlir.dialect.ops import Block, Loop
from tir_mlir.errors import ScheduleError
from tir_mlir.analysis import structure as analysis

MAX_THREADS = 1024  # threads of a CUDA thread block


def is_reduction_loop(sch, loop) -> bool:
    return analysis.loop_iter_type(sch.get(loop).op) == "R"


def parallel_reduction(te_sched, loop, thread_axis=None):
    """rfactor on `loop`, then make it parallel (thread_axis None) or bind it to the blockIdx
    `thread_axis`. Runs on a copy of the schedule, kept only if every step succeeds, so a
    refusal leaves the TE schedule as it was."""
    sch = te_sched.sch.copy()
    blocks = analysis.blocks_under(sch.get(loop).op)
    names = [Block(b).name for b in blocks]
    try:
        # rfactor leaves the loop handles on the write-back's loops (as TVM) and drops those
        # bound to reduction iters; the TE stage's axes now stand for their copies in the rf
        # nest, which owns the loop
        old = [lp.sid for lp in sch.get_loops(sch.get_block(names[0]))]
        rf_loops = sch.get_loops(sch.rfactor(loop, 0))
        rf_loop = rf_loops[old.index(loop.sid)]
        if thread_axis is None:
            sch.parallel(rf_loop)
        else:
            sch.bind(rf_loop, thread_axis)
            for name in names:
                _bind_write_back(sch, sch.get_block(name))
    except ScheduleError as e:
        what = "parallel" if thread_axis is None else f"bind to {thread_axis}"
        raise ScheduleError(
            f"{what} on reduction loop {Loop(te_sched.sch.get(loop).op).name!r}"
            f" needs rfactor on it, which was refused: {e}"
        ) from None
    te_sched.sch = sch
    for key, lp in list(te_sched._loops.items()):
        if lp.sid in old:
            te_sched._loops[key] = rf_loops[old.index(lp.sid)]


def _bind_write_back(sch, block):
    """Spatial loops of the write-back -> one blockIdx.x loop, its reduction loop ->
    threadIdx.x. Only the loops that hold the write-back alone are its own."""
    own = [
        lp
        for lp in sch.get_loops(block)
        if analysis.blocks_under(sch.get(lp).op) == [sch.get(block).op]
    ]
    spatial = [lp for lp in own if analysis.loop_iter_type(sch.get(lp).op) == "S"]
    reduce = [lp for lp in own if analysis.loop_iter_type(sch.get(lp).op) == "R"]
    if len(reduce) != 1:
        raise ScheduleError(
            f"write-back block {Block(sch.get(block).op).name!r} has "
            f"{len(reduce)} reduction loops of its own, expected 1"
        )
    if own != spatial + reduce:
        sch.reorder(*spatial, *reduce)
    if spatial:
        sch.bind(sch.fuse(*spatial) if len(spatial) > 1 else spatial[0], "blockIdx.x")
    red = reduce[0]
    extent = Loop(sch.get(red).op).extent
    if not isinstance(extent, int) or extent > MAX_THREADS:  # a symbolic extent may be more
        red = sch.split(red, [None, MAX_THREADS])[1]
    sch.bind(red, "threadIdx.x")
