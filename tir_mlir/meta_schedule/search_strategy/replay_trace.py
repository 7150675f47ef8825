"""ReplayTrace: every candidate is a design-space sketch replayed with fresh random decisions
(random search over the sketches' decisions)."""
from typing import List, Optional

from tir_mlir.meta_schedule.search_strategy.search_strategy import (MeasureCandidate,
                                                                    SearchStrategy)


class ReplayTrace(SearchStrategy):
    def __init__(self, max_fail_count: int = 100):
        super().__init__()
        self.max_fail_count = max_fail_count

    def generate_measure_candidates(self) -> Optional[List[MeasureCandidate]]:
        n = self._budget()
        if n == 0:
            return None
        out, fails = [], 0
        while len(out) < n and fails < self.max_fail_count:
            sch = self.sample(self.rng.choice(self.design_spaces))
            if sch is None:
                fails += 1
            else:
                out.append(MeasureCandidate(sch))
        return out or None
