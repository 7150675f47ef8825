"""ReplayFunc: every candidate comes from running the space generator again (new random
choices in the rules and the schedule function), then the postprocessors."""
from typing import List, Optional

from tir_mlir.meta_schedule.search_strategy.search_strategy import (MeasureCandidate,
                                                                    SearchStrategy)


class ReplayFunc(SearchStrategy):
    def __init__(self, max_fail_count: int = 100):
        super().__init__()
        self.max_fail_count = max_fail_count

    def generate_measure_candidates(self) -> Optional[List[MeasureCandidate]]:
        n = self._budget()
        if n == 0:
            return None
        out, fails = [], 0
        while len(out) < n and fails < self.max_fail_count:
            try:
                spaces = self.context.space_generator.generate_design_space(self.mod)
            except Exception as e:   # noqa: BLE001 - a failing sample rejects only itself
                self.failures[type(e).__name__] += 1
                fails += 1
                continue
            sch = self.replay(self.rng.choice(spaces).trace)
            if sch is None:
                fails += 1
            else:
                out.append(MeasureCandidate(sch))
        return out or None
