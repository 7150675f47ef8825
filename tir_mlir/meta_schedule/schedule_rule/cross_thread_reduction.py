"""CrossThreadReduction (GPU): a reduction with little spatial work for its reduction work
gets a second sketch where its reduction loops are fused, split by a sampled thread count and
the inner part bound to threadIdx.x, so the block's threads share each reduction (lowered to
warp shuffles, docs/gpu.md). When the block can be computed at its consumer (TVM's conditions:
the consumers share a loop, the consumer is not a tiling candidate), it is moved under the
consumer's outer spatial loop with its result in shared memory, and the consumer's innermost
loop is bound to the same threads (or, where the consumer is bound already, its thread count
is the trace's split factor for that loop: the sampled variable itself, so every candidate keeps
one thread count per kernel). The unchanged schedule stays a sketch too. TVM's
CrossThreadReduction.
"""

from typing import List, Sequence

from tir_mlir.errors import ScheduleError
from tir_mlir.meta_schedule.schedule_rule.multi_level_tiling import MultiLevelTiling
from tir_mlir.meta_schedule.schedule_rule.reduction_needs import (
    needs_rfactor_or_cross_thread_reduction,
)
from tir_mlir.meta_schedule.schedule_rule.schedule_rule import ScheduleRule


class CrossThreadReduction(ScheduleRule):
    def __init__(self, thread_extents: Sequence[int] = (4, 8, 16, 32, 64, 128, 256, 512)):
        self.thread_extents = list(thread_extents)

    def apply(self, sch, block) -> List:
        if not self._needs(sch, block):
            return [sch]
        limit = self.target.max_threads_per_block if self.target is not None else 1024
        extents = [t for t in self.thread_extents if t <= limit]
        if not extents:
            return [sch]
        s = sch.copy()
        try:
            threads = s.sample_categorical(extents, [1 / len(extents)] * len(extents))
            target = _compute_target(s, block)
            if target is not None:
                loop, consumer, innermost = target
                bound = _thread_x_loop(s, consumer)
                if bound is None:
                    # compared before the split consumes `innermost`
                    at_innermost = s.get_sref(innermost) == s.get_sref(loop)
                    outer, inner = s.split(innermost, [None, threads])
                    s.bind(inner, "threadIdx.x")
                    if at_innermost:
                        loop = outer
                else:
                    threads = _thread_x_factor(s, bound)
                s.set_scope(block, 0, "shared")  # first, so compute_at covers all threads
                s.compute_at(block, loop, preserve_unit_loops=True)
            fused = _fuse_reduction_loops(s, block)
            _, inner = s.split(fused, [None, threads])
            s.bind(inner, "threadIdx.x")
        except ScheduleError:
            return [sch]
        return [sch, s]

    def _needs(self, sch, block) -> bool:
        limit = self.target.max_threads_per_block if self.target is not None else 1024
        return needs_rfactor_or_cross_thread_reduction(sch, block, limit)


def _thread_x_loop(sch, block):
    return next(
        (lp for lp in sch.get_loops(block) if sch.get(lp).thread_binding == "threadIdx.x"), None
    )


def _thread_x_factor(sch, bound):
    """The thread count of the consumer's threadIdx.x loop `bound` as the trace has it: the
    split factor that made the loop, a sampled variable where it is one (AutoBind's), so a
    candidate that samples another count splits the reduction by the same one (TVM's
    GetThreadIdxExtentFromTrace); else the loop's extent."""
    target = sch.get_sref(bound)
    for inst in reversed(sch.trace.insts):
        if inst.name != "split":
            continue
        outs = inst.output_list()
        for k, out in enumerate(outs):
            try:
                same = sch.get_sref(out) == target
            except ScheduleError:  # a loop gone since (fused, split again)
                continue
            if same:
                factor = inst.args["factors"][k]
                return factor if factor is not None else sch.get(bound).extent
    return sch.get(bound).extent


def _compute_target(sch, block):
    """(loop to compute the block at, its first consumer, that consumer's innermost loop), or
    None when the block cannot join its consumers (TVM's GetComputeTargetLoopAndBlock)."""
    consumers = sch.get_consumers(block)
    if not consumers or MultiLevelTiling().needs_tiling(sch, consumers[0]):
        return None
    nests = [[sch.get_sref(lp) for lp in sch.get_loops(c)] for c in consumers]
    common = 0
    while all(len(n) > common and n[common] == nests[0][common] for n in nests):
        common += 1
    if len(consumers) > 1 and common == 0:
        return None  # consumers in separate nests
    lca = nests[0][common - 1] if len(consumers) > 1 else None
    block_loops = sch.get_loops(block)
    target_loops = sch.get_loops(consumers[0])
    pos = min(len(block_loops), len(target_loops)) - 1
    for k in range(min(len(block_loops), len(target_loops))):
        if sch.get_loop_iter_type(block_loops[k]) != "S":
            pos = k - 1
            break
        if lca is not None and sch.get_sref(target_loops[k]) == lca:
            pos = k
            break
    if pos < 0:
        return None
    return target_loops[pos], consumers[0], target_loops[-1]


def _fuse_reduction_loops(sch, block):
    """Reorder the block's reduction loops innermost and fuse them into one."""
    loops = sch.get_loops(block)
    kinds = [sch.get_loop_iter_type(lp) for lp in loops]
    first = kinds.index("R")
    spatial = [lp for lp, k in zip(loops[first:], kinds[first:]) if k == "S"]
    reduce = [lp for lp, k in zip(loops[first:], kinds[first:]) if k == "R"]
    if spatial:
        sch.reorder(*(spatial + reduce))
    return sch.fuse(*reduce) if len(reduce) > 1 else reduce[0]
