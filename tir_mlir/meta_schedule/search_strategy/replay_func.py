"""ReplayFunc: every candidate comes from running the space generator again (new random
choices in the rules and the schedule function), then the postprocessors."""

from typing import Optional

from tir_mlir.meta_schedule.search_strategy.replay import Replay
from tir_mlir.schedule.schedule import Schedule


class ReplayFunc(Replay):
    def draw(self) -> Optional[Schedule]:
        assert self.context is not None, "initialize_with_tune_context comes first"
        try:
            spaces = self.context.space_generator.generate_design_space(self.mod)
        except Exception as e:  # noqa: BLE001 - a failing sample rejects only itself
            self.failures[type(e).__name__] += 1
            return None
        return self.replay(self.rng.choice(spaces).trace)
