"""When a reduction block is worth splitting across workers: TVM's
NeedsRFactorOrCrossThreadReduction, shared by AddRFactor (CPU: partial sums in parallel or in
vector lanes) and CrossThreadReduction (GPU: partial sums per thread)."""

import math

from tir_mlir.errors import ScheduleError

from tir_mlir.meta_schedule.schedule_rule.multi_level_tiling import MultiLevelTiling


def needs_rfactor_or_cross_thread_reduction(sch, block, max_parallel_extent: int) -> bool:
    """A top-level reduction with trivial bindings, its loops all spatial or reduction (none
    bound to threads). A block MultiLevelTiling will tile qualifies only when its spatial
    extent is below its reduction extent and at most `max_parallel_extent` (otherwise the
    tiling finds enough parallelism); any other reduction always (TVM 0.21 tries even a
    reduction shorter than a warp: a 32-long argmax gets its cross-thread sketch)."""
    if not sch.is_top_level_block(block) or not sch.has_trivial_bindings(block):
        return False
    loops = sch.get_loops(block)
    kinds = [sch.get_loop_iter_type(lp) for lp in loops]
    if "R" not in kinds or set(kinds) - {"S", "R"}:
        return False
    if any(sch.get(lp).thread_binding for lp in loops):
        return False
    try:
        extents = [sch.get(lp).extent for lp in loops]
    except ScheduleError:  # bounds on outer loops (`range(i, n)`)
        return False
    if not all(isinstance(e, int) for e in extents):
        return False  # a symbolic extent: TVM's cumulative lengths are unknown, no rfactor
    spatial = math.prod(e for e, k in zip(extents, kinds) if k == "S")
    reduce = math.prod(e for e, k in zip(extents, kinds) if k == "R")
    if MultiLevelTiling().needs_tiling(sch, block):
        return not (spatial >= reduce or spatial > max_parallel_extent)
    return reduce > 1
