"""RandomComputeLocation: compute a producer block at a sampled loop of its consumers (or
leave it at the root), TVM's rule for blocks no other rule scheduled."""
from typing import List

from tir_mlir.meta_schedule.schedule_rule.schedule_rule import ScheduleRule


class RandomComputeLocation(ScheduleRule):
    def apply(self, sch, block) -> List:
        if (not sch.is_top_level_block(block) or sch.is_output_block(block)
                or "meta_schedule.tiling_structure" in sch.get(block).annotations
                or not sch.get_loops(block) or not sch.get_consumers(block)
                or sch.num_compute_locations(block) == 0):
            return [sch]
        loc = sch.sample_compute_location(block)
        sch.compute_at(block, loc, preserve_unit_loops=True)
        return [sch]
