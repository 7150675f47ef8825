"""What ReplayTrace and ReplayFunc share: a round is the budget's worth of independent
random candidates, giving up after `max_fail_count` failed draws."""

from typing import List, Optional

from tir_mlir.meta_schedule.search_strategy.search_strategy import MeasureCandidate, SearchStrategy
from tir_mlir.schedule.schedule import Schedule


class Replay(SearchStrategy):
    def __init__(self, max_fail_count: int = 100):
        super().__init__()
        self.max_fail_count = max_fail_count

    def draw(self) -> Optional[Schedule]:
        """One random candidate, None (counted in `failures`) when the draw failed."""
        raise NotImplementedError

    def generate_measure_candidates(self) -> Optional[List[MeasureCandidate]]:
        n = self._budget()
        if n == 0:
            return None
        out, fails = [], 0
        while len(out) < n and fails < self.max_fail_count:
            sch = self.draw()
            if sch is None:
                fails += 1
            else:
                out.append(MeasureCandidate(sch))
        return out or None
