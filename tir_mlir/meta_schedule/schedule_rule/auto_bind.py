"""AutoBind (GPU): bind a top-level block's outer loops to blockIdx.x x threadIdx.x (TVM's
AutoBind, its BindBlockThreadIdx step by step).

A block already bound to blocks and threads, or tiled by MultiLevelTiling, is left alone.
Otherwise the outer spatial loops, up to the first loop that is not serial or holds
several statements, are fused (a unit loop is added when there is no spatial loop). When
threads are bound but blocks are not (CrossThreadReduction's sketches), the fused loops
above the first thread loop become blockIdx.x. Otherwise the fused loop is split: into
blocks x a thread count sampled among `thread_extents` no larger than its extent and the
target's max threads per block (one candidate: no sample; none: the extent itself), or,
when the extent exceeds `max_threadblocks` x the max threads per block (or is symbolic),
into `max_threadblocks` x max threads with the rest a serial loop inside.
"""

from typing import List, Optional, Sequence

from tir_mlir.errors import ScheduleError
from tir_mlir.meta_schedule.schedule_rule.schedule_rule import ScheduleRule

# a symbolic extent counts as larger than any block x thread product, as in TVM
_UNKNOWN = 2**63 - 1


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
        if "meta_schedule.tiling_structure" in sch.get(block).annotations:
            return [sch]
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
            if not _single_statement(view) and i_multi is None:
                i_multi = i + 1
            if sch.get_loop_iter_type(lp) == "S" and i_spatial == i - 1:
                i_spatial += 1
        if i_block is not None:
            return [sch]  # bound already (TVM refuses blocks bound without threads)
        i_multi = len(loops) if i_multi is None else i_multi
        try:
            if i_spatial == -1:
                loops = [sch.add_unit_loop(loops[0] if loops else block)] + loops
                i_spatial, i_multi = 0, i_multi + 1
                i_thread = None if i_thread is None else i_thread + 1
            if i_thread is not None:
                n = min(i_multi, i_thread, i_spatial + 1)
                outer = _fuse(sch, loops[:n]) if n else sch.add_unit_loop(loops[0])
                sch.bind(outer, "blockIdx.x")
                return [sch]
            self._bind_spatial(sch, _fuse(sch, loops[: min(i_multi, i_spatial + 1)]))
        except ScheduleError:
            pass
        return [sch]

    def _bind_spatial(self, sch, loop) -> None:
        """TVM's BindSpatialLoop."""
        limit = self.max_threads_per_block
        if limit <= 0:
            limit = self.target.max_threads_per_block if self.target is not None else 1024
        extent = sch.get(loop).extent
        extent = int(extent) if isinstance(extent, int) else _UNKNOWN
        if extent <= self.max_threadblocks * limit:
            bx, tx = sch.split(loop, [None, self._factor(sch, min(extent, limit))])
        else:
            rest, bx, tx = sch.split(loop, [None, self.max_threadblocks, limit])
            sch.reorder(bx, tx, rest)
        sch.bind(bx, "blockIdx.x")
        sch.bind(tx, "threadIdx.x")

    def _factor(self, sch, max_extent: int):
        """TVM's factor sampler: a thread count among `thread_extents` up to `max_extent`."""
        extents = [t for t in self.thread_extents if t <= max_extent]
        if not extents:
            return max_extent
        if len(extents) == 1:
            return extents[0]
        return sch.sample_categorical(extents, [1 / len(extents)] * len(extents))


def _fuse(sch, loops):
    # TVM fuses one loop too (renaming it `i_fused`); kept as it is here: with the extra
    # instruction the tuner's CUDA conv1d draws lose a candidate (tests/gpu/test_gpu_memory)
    return sch.fuse(*loops) if len(loops) > 1 else loops[0]


def _single_statement(view) -> bool:
    body = view.op.regions[0].blocks[0].operations
    return sum(1 for op in body if not op.name.endswith("yield")) == 1
