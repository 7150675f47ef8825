"""AddRFactor: when a reduction has too little spatial parallelism (spatial extent below
max_jobs_per_core x cores), split its fused reduction loops in two by a sampled tile and
rfactor at either part, so the partial sums can run in parallel (TVM's AddRFactor). The
unchanged schedule is kept as a sketch too."""
import math
from typing import List, Optional

from tir_mlir.errors import ScheduleError
from tir_mlir.meta_schedule.schedule_rule.schedule_rule import ScheduleRule


class AddRFactor(ScheduleRule):
    def __init__(self, max_jobs_per_core: int = 16, max_innermost_factor: Optional[int] = None):
        self.max_jobs_per_core = max_jobs_per_core
        self.max_innermost_factor = max_innermost_factor or 1 << 30

    def apply(self, sch, block) -> List:
        if not sch.is_top_level_block(block) or not sch.has_trivial_bindings(block):
            return [sch]
        loops = sch.get_loops(block)
        kinds = [sch.get_loop_iter_type(lp) for lp in loops]
        if "R" not in kinds or kinds != sorted(kinds, key=lambda k: k == "R") or \
                set(kinds) - {"S", "R"}:
            return [sch]           # reduction loops must be the innermost ones
        cores = self.target.num_cores if self.target is not None else 1
        spatial = math.prod(sch.get(lp).extent for lp, k in zip(loops, kinds) if k == "S")
        if self.max_jobs_per_core <= 0 or spatial >= self.max_jobs_per_core * cores:
            return [sch]
        out = [sch]
        for part in (0, 1):
            s = sch.copy()
            try:
                red = [lp for lp, k in zip(loops, kinds) if k == "R"]
                fused = s.fuse(*red) if len(red) > 1 else red[0]
                tiles = s.sample_perfect_tile(fused, n=2,
                                              max_innermost_factor=self.max_innermost_factor)
                split = s.split(fused, tiles)
                rf = s.rfactor(split[part], 0)
                s.annotate(rf, "meta_schedule.random_compute_producer", 1)
            except ScheduleError:
                continue
            out.append(s)
        return out
