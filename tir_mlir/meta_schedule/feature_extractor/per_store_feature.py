"""PerStoreFeature: the feature vectors of a candidate's scheduled program (one per storing
block, passes/schedule/store_features.py) and a fixed-size program vector for the model:
the vector of the block doing most work, the sum over blocks, and the block count."""
from typing import List

import numpy as np

from tir_mlir.context import get_context
from tir_mlir.passes.schedule.store_features import NAMES, module_features


class PerStoreFeature:
    feature_names = NAMES

    def extract_from(self, context, candidates) -> List[np.ndarray]:
        """Per candidate, an array (blocks x features), like TVM's extractor."""
        with get_context():
            return [np.array(module_features(c.sch.mod.module) or [[0.0] * len(NAMES)],
                             dtype=np.float32) for c in candidates]

    def program_vectors(self, context, candidates) -> np.ndarray:
        """One row per candidate; a candidate replayed by a search worker brings its row
        (`features`, computed there by a copy of this extractor)."""
        known = [getattr(c, "features", None) for c in candidates]
        rows = iter(self._rows(context, [c for c, f in zip(candidates, known) if f is None]))
        return np.array([f if f is not None else next(rows) for f in known],
                        dtype=np.float32).reshape(len(candidates), -1)

    def _rows(self, context, candidates) -> List[np.ndarray]:
        rows = []
        for per_block in self.extract_from(context, candidates):
            main = per_block[int(np.argmax(per_block[:, NAMES.index("flops")]))]
            rows.append(np.concatenate([main, per_block.sum(axis=0), [len(per_block)]]))
        return rows
