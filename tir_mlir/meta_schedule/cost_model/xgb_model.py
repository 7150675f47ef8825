"""XGBModel: gradient-boosted trees on the program features, retrained online after every
batch of measurements (TVM's XGBModel). The target is the normalized throughput of a
candidate, best time / its time, in [0, 1] per task; failed candidates count as 0.

Needs xgboost (`pip install "tir-mlir[tune]"`, the xgboost-cpu wheel); without it the model
falls back to ridge regression on the same features and says so once.
"""

import warnings
from typing import List

import numpy as np

from tir_mlir.meta_schedule.cost_model.cost_model import CostModel, costs
from tir_mlir.meta_schedule.feature_extractor import PerStoreFeature


class XGBModel(CostModel):
    def __init__(
        self,
        extractor=None,
        num_warmup_samples: int = 8,
        seed: int = 43,
        num_boost_round: int = 200,
        max_depth: int = 6,
        learning_rate: float = 0.2,
    ):
        self.extractor = extractor or PerStoreFeature()
        self.num_warmup_samples = num_warmup_samples
        self.params = {
            "max_depth": max_depth,
            "eta": learning_rate,
            "gamma": 1e-3,
            "min_child_weight": 0,
            "objective": "reg:squarederror",
            "seed": seed,
            "nthread": 1,
            "verbosity": 0,
        }
        self.num_boost_round = num_boost_round
        self.xs: List[np.ndarray] = []
        self.ys: List[float] = []  # seconds (inf: failed)
        self.booster = None
        self._ridge = None
        self.rng = np.random.default_rng(seed)
        try:
            import xgboost

            self._xgb = xgboost
        except ImportError:
            self._xgb = None
            warnings.warn(
                "xgboost is not installed (pip install 'tir-mlir[tune]'): XGBModel "
                "falls back to ridge regression on the same features"
            )

    def update(self, context, candidates, results) -> None:
        if not candidates:
            return
        self.xs += list(self.extractor.program_vectors(context, candidates))
        self.ys += costs(results)
        finite = [y for y in self.ys if np.isfinite(y)]
        if len(finite) < 2:
            return
        best = min(finite)
        y = np.array([best / t if np.isfinite(t) else 0.0 for t in self.ys])
        x = np.array(self.xs)
        if self._xgb is not None:
            d = self._xgb.DMatrix(x, label=y)
            self.booster = self._xgb.train(self.params, d, self.num_boost_round)
        else:
            a = np.hstack([x, np.ones((len(x), 1))])
            self._ridge = np.linalg.solve(a.T @ a + 1e-2 * np.eye(a.shape[1]), a.T @ y)

    def can_rank(self) -> bool:
        """Trained, on at least num_warmup_samples successful measurements."""
        return len([y for y in self.ys if np.isfinite(y)]) >= self.num_warmup_samples and (
            self.booster is not None or self._ridge is not None
        )

    def predict(self, context, candidates):
        if not self.can_rank():
            return self.rng.uniform(0, 1, len(candidates))
        x = self.extractor.program_vectors(context, candidates)
        if self.booster is not None and self._xgb is not None:  # (a booster needs xgboost)
            return self.booster.predict(self._xgb.DMatrix(x))
        assert self._ridge is not None  # can_rank: trained one of the two
        return np.hstack([x, np.ones((len(x), 1))]) @ self._ridge

    def save(self, path: str) -> None:
        np.savez(path, xs=np.array(self.xs), ys=np.array(self.ys))

    def load(self, path: str) -> None:
        data = np.load(path)
        self.xs, self.ys = list(data["xs"]), list(data["ys"])
