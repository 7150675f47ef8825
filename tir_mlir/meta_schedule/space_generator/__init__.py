"""Space generators: how the design space (the sketches) of a program is made."""

from tir_mlir.meta_schedule.space_generator.post_order_apply import PostOrderApply
from tir_mlir.meta_schedule.space_generator.schedule_fn import ScheduleFn
from tir_mlir.meta_schedule.space_generator.space_generator import (
    PySpaceGenerator,
    SpaceGenerator,
    generate_design_space,
)
from tir_mlir.meta_schedule.space_generator.space_generator_union import SpaceGeneratorUnion

__all__ = [
    "PostOrderApply",
    "PySpaceGenerator",
    "ScheduleFn",
    "SpaceGenerator",
    "SpaceGeneratorUnion",
    "generate_design_space",
]
