"""AutoBind (GPU): a top-level block whose loops are not bound to threads gets its outer
spatial loops fused and split into blockIdx.x x threadIdx.x, the thread count sampled
among `thread_extents` (at most the target's max threads per block) and the block count
capped by `max_threadblocks` with a serial outer loop (TVM's AutoBind). A block with threads
bound but no blocks (CrossThreadReduction's sketches) gets its outer spatial loops fused and
bound to blockIdx.x."""

from typing import List, Optional, Sequence

from tir_mlir.errors import ScheduleError
from tir_mlir.meta_schedule.schedule_rule.schedule_rule import ScheduleRule


class AutoBind(ScheduleRule):
    def __init__(
        self,
        max_threadblocks: int = 256,
        thread_extents: Optional[Sequence[int]] = None,
        max_threads_per_block: int = -1,
    ):
        self.max_threadblocks = max_threadblocks
        self.thread_extents = list(thread_extents or [32, 64, 128, 256, 512, 1024])
        self.max_threads_per_block = max_threads_per_block

    def apply(self, sch, block) -> List:
        if not sch.is_top_level_block(block):
            return [sch]
        loops = sch.get_loops(block)
        tags = [sch.get(lp).thread_binding or "" for lp in loops]
        if any(t.startswith("blockIdx") for t in tags):
            return [sch]
        if any(t.startswith("threadIdx") for t in tags):
            return self._bind_blocks(sch, block, loops, tags)
        if not loops:
            return [sch]
        outer = []
        for lp in loops:
            if sch.get_loop_iter_type(lp) != "S":
                break
            outer.append(lp)
        if not outer:
            return [sch]
        limit = self.max_threads_per_block
        if limit <= 0:
            limit = self.target.max_threads_per_block if self.target is not None else 1024
        extents = [t for t in self.thread_extents if t <= limit] or [1]
        try:
            fused = sch.fuse(*outer) if len(outer) > 1 else outer[0]
            threads = sch.sample_categorical(extents, [1 / len(extents)] * len(extents))
            extent = sch.get(fused).extent
            # a symbolic extent (`n * 16`) may need more blocks than the limit: as TVM
            blocks = -(-extent // sch.get(threads)) if isinstance(extent, int) else None
            if blocks is None or blocks > self.max_threadblocks:
                _, bx, tx = sch.split(fused, [None, self.max_threadblocks, threads])
            else:
                bx, tx = sch.split(fused, [None, threads])
            sch.bind(bx, "blockIdx.x")
            sch.bind(tx, "threadIdx.x")
        except ScheduleError:
            pass
        return [sch]

    def _bind_blocks(self, sch, block, loops, tags) -> List:
        """Threads bound (CrossThreadReduction), blocks not: the outer spatial loops above
        the first thread loop become blockIdx.x (a unit loop when there is none)."""
        outer = []
        for lp, tag in zip(loops, tags):
            if tag or sch.get_loop_iter_type(lp) != "S" or len(sch.get_child_blocks(lp)) > 1:
                break
            outer.append(lp)
        try:
            if outer:
                fused = sch.fuse(*outer) if len(outer) > 1 else outer[0]
            else:
                fused = sch.add_unit_loop(loops[0])
            sch.bind(fused, "blockIdx.x")
        except ScheduleError:
            pass
        return [sch]
