"""ReplayTrace: every candidate is a design-space sketch replayed with fresh random decisions
(random search over the sketches' decisions)."""

from typing import Optional

from tir_mlir.meta_schedule.search_strategy.replay import Replay
from tir_mlir.schedule.schedule import Schedule


class ReplayTrace(Replay):
    def draw(self) -> Optional[Schedule]:
        return self.sample(self.rng.choice(self.design_spaces))
