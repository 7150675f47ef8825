"""AddRFactor: a reduction worth splitting (TVM's conditions, reduction_needs.py: little
spatial parallelism for a tiled reduction, or any long reduction that is not tiled, such as
a row max or sum) gets its fused reduction loops split in two by a sampled tile and an
rfactor at either part, so partial results run in parallel or in vector lanes (TVM's
AddRFactor). The rfactor block is put after the block's spatial loops (TVM's factor axis),
and the block is marked `meta_schedule.random_compute_producer` so RandomComputeLocation
also places the new producer. The unchanged schedule is kept as a sketch too."""

from typing import List, Optional

from tir_mlir.errors import ScheduleError
from tir_mlir.meta_schedule.schedule_rule.reduction_needs import (
    needs_rfactor_or_cross_thread_reduction,
)
from tir_mlir.meta_schedule.schedule_rule.random_compute_location import PRODUCER_KEY
from tir_mlir.meta_schedule.schedule_rule.schedule_rule import ScheduleRule


class AddRFactor(ScheduleRule):
    def __init__(self, max_jobs_per_core: int = 16, max_innermost_factor: Optional[int] = None):
        self.max_jobs_per_core = max_jobs_per_core
        self.max_innermost_factor = max_innermost_factor or 1 << 30

    def apply(self, sch, block) -> List:
        cores = self.target.num_cores if self.target is not None else 1
        if self.max_jobs_per_core <= 0 or not needs_rfactor_or_cross_thread_reduction(
            sch, block, self.max_jobs_per_core * cores
        ):
            return [sch]
        loops = sch.get_loops(block)
        kinds = [sch.get_loop_iter_type(lp) for lp in loops]
        if kinds != sorted(kinds, key=lambda k: k == "R"):
            return [sch]  # reduction loops must be the innermost ones
        out = [sch]
        for part in (0, 1):
            s = sch.copy()
            try:
                red = [lp for lp, k in zip(loops, kinds) if k == "R"]
                fused = s.fuse(*red) if len(red) > 1 else red[0]
                tiles = s.sample_perfect_tile(
                    fused, n=2, max_innermost_factor=self.max_innermost_factor
                )
                split = s.split(fused, tiles)
                s.rfactor(split[part], kinds.count("S"))
                s.annotate(block, PRODUCER_KEY, 1)
            except ScheduleError:
                continue
            out.append(s)
        return out
