"""ScheduleFn: a design space written as one schedule function with sampling in it.

`fn(sch)` schedules in place (returning None), or returns one schedule or a list."""

import random
from typing import Callable, List

from tir_mlir.meta_schedule.space_generator.space_generator import SpaceGenerator
from tir_mlir.schedule.schedule import Schedule


class ScheduleFn(SpaceGenerator):
    def __init__(
        self, sch_fn: Callable, sch_rules=None, postprocs="from-target", mutator_probs="from-target"
    ):
        super().__init__(sch_rules or [], postprocs, mutator_probs)
        self.sch_fn = sch_fn
        self._rng = random.Random()

    def initialize_with_tune_context(self, context) -> None:
        super().initialize_with_tune_context(context)
        self._rng = random.Random(context.rand_state)

    def generate_design_space(self, mod) -> List[Schedule]:
        sch = Schedule(mod, seed=self._rng.randrange(1, 2**31))
        out = self.sch_fn(sch)
        if out is None:
            return [sch]
        if isinstance(out, Schedule):
            return [out]
        return list(out)
