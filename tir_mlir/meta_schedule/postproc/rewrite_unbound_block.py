"""RewriteUnboundBlock (GPU, TVM's postprocessor): every outermost block not already under
both a blockIdx and a threadIdx loop gets its outer loops bound, as TVM's
BindBlockThreadIdx does: the leading spatial loops (up to the first loop that is not serial
or whose body holds several statements, and before a threadIdx loop) are fused (a unit loop
added when there is none) and split into blockIdx.x x threadIdx.x, the thread count
min(extent, the target's max threads per block); a fused extent over `max_threadblocks` x
that limit, or a symbolic one (`n * 64`), is split in three, the blockIdx.x and threadIdx.x
parts moved outside the rest.
Blocks MultiLevelTiling tiled are left alone; with threads but no blocks bound, the fused
loops become blockIdx.x."""

from tir_mlir.dialect.ops import Block, Loop
from tir_mlir.errors import ScheduleError
from tir_mlir.meta_schedule.postproc.postproc import Postproc, blocks

TILED = "meta_schedule.tiling_structure"


class RewriteUnboundBlock(Postproc):
    def __init__(self, max_threadblocks: int = 256):
        self.max_threadblocks = max_threadblocks

    def apply(self, sch) -> bool:
        limit = self.target.max_threads_per_block if self.target is not None else 1024
        for func, name in blocks(sch):
            block = sch.get_block(name, func)
            if not sch.is_top_level_block(block) or TILED in sch.get_annotations(block):
                continue
            try:
                _bind_block(sch, block, self.max_threadblocks, limit)
            except ScheduleError:
                # a binding the schedule refuses (e.g. a block that is not a complete or a
                # reduction block under the fused loop): this candidate is rejected, as TVM
                # counts a postprocessor that throws as its failure
                return False
        return True


def _bind_block(sch, block, max_threadblocks: int, max_threads: int) -> None:
    loops = sch.get_loops(block)
    i_block = i_thread = i_multi = None
    i_spatial = -1
    for i, lp in enumerate(loops):
        view = sch.get(lp)
        tag = view.thread_binding or ""
        if tag.startswith("blockIdx") and i_block is None:
            i_block = i
        if tag.startswith("threadIdx") and i_thread is None:
            i_thread = i
        if str(view.kind) != "serial" and i_multi is None:
            i_multi = i
        if _children(view.op) != 1 and i_multi is None:
            i_multi = i + 1
        if sch.get_loop_iter_type(lp) == "S" and i_spatial == i - 1:
            i_spatial += 1
    if i_multi is None:
        i_multi = len(loops)
    if i_thread is not None and i_block is not None:
        return
    if i_block is not None:
        return  # blocks bound, threads not: TVM refuses; left as it is
    if i_spatial == -1:
        unit = sch.add_unit_loop(loops[0] if loops else block)
        loops = [unit, *loops]
        i_spatial = 0
        i_thread = None if i_thread is None else i_thread + 1
        i_multi += 1
    if i_thread is not None:
        fused = sch.fuse(*loops[: min(i_multi, i_thread, i_spatial + 1)])
        sch.bind(fused, "blockIdx.x")
        return
    n = min(i_multi, i_spatial + 1)
    fused = sch.fuse(*loops[:n])  # one loop too, as TVM (it is renamed `i_fused`)
    extent = sch.get(fused).extent
    if isinstance(extent, int) and extent <= max_threadblocks * max_threads:
        bx, tx = sch.split(fused, [None, min(extent, max_threads)])
    else:  # (a symbolic extent too, as TVM: its size is not known to fit)
        rest, bx, tx = sch.split(fused, [None, max_threadblocks, max_threads])
        sch.reorder(bx, tx, rest)
    sch.bind(bx, "blockIdx.x")
    sch.bind(tx, "threadIdx.x")


def _children(loop_op) -> int:
    """How many statements (loops, blocks) the loop's body holds directly."""
    body = loop_op.regions[0].blocks[0]
    return sum(1 for o in body.operations if Loop.is_loop(o) or Block.is_block(o))
