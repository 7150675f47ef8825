"""RandomComputeLocation: compute a producer block at a sampled loop of its consumers (or
leave it at the root), TVM's rule for blocks no other rule scheduled. A block marked
`meta_schedule.random_compute_producer` (by AddRFactor) has its single producer, the rfactor
block, placed the same way after it."""

from typing import List

from tir_mlir.errors import ScheduleError
from tir_mlir.meta_schedule.schedule_rule.schedule_rule import ScheduleRule

PRODUCER_KEY = "meta_schedule.random_compute_producer"


class RandomComputeLocation(ScheduleRule):
    def apply(self, sch, block) -> List:
        if not _movable(sch, block):
            return [sch]
        producer = None
        if PRODUCER_KEY in sch.get(block).annotations:
            producers = sch.get_producers(block)
            sch.unannotate(block, PRODUCER_KEY)
            producer = producers[0] if len(producers) == 1 else None
        sch = _compute_at_sampled(sch, block)
        if producer is not None and _movable(sch, producer):
            sch = _compute_at_sampled(sch, producer)
        return [sch]


def _movable(sch, block) -> bool:
    return (
        sch.is_top_level_block(block)
        and not sch.is_output_block(block)
        and "meta_schedule.tiling_structure" not in sch.get(block).annotations
        and bool(sch.get_loops(block))
        and bool(sch.get_consumers(block))
        and sch.num_compute_locations(block) > 0
    )


def _compute_at_sampled(sch, block):
    """`block` computed at a sampled location. When compute_at refuses the draw (a region
    it cannot cover; the schedule is left unchanged), the sketch keeps the block where it is
    with a second draw fixed to -1: both draws are resampled when the search replays it."""
    try:
        sch.compute_at(block, sch.sample_compute_location(block), preserve_unit_loops=True)
    except ScheduleError:
        sch.compute_at(
            block, sch.sample_compute_location(block, decision=-1), preserve_unit_loops=True
        )
    return sch
