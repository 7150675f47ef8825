"""RandomModel: scores candidates at random (a baseline; TVM's RandomModel)."""

import numpy as np

from tir_mlir.meta_schedule.cost_model.cost_model import CostModel


class RandomModel(CostModel):
    def __init__(self, seed=None, path=None, max_range=100):
        self.rng = np.random.default_rng(seed)
        self.max_range = max_range

    def can_rank(self) -> bool:
        return False

    def update(self, context, candidates, results) -> None:
        pass

    def predict(self, context, candidates):
        return self.rng.uniform(0, self.max_range, len(candidates))
