"""PerStoreFeature: the feature vectors of a candidate's scheduled program (one per storing
block, tir_mlir/meta_schedule/feature_extractor/store_features.py) and a fixed-size program vector for the model:
the vector of the block doing most work, the sum over blocks, and the block count."""

from typing import Dict, List, Optional

import numpy as np
from mlir import ir

from tir_mlir.context import get_context
from tir_mlir.dialect.buffers import arg_attrs
from tir_mlir.dialect.ops import str_attr
from tir_mlir.transforms.specialize import specialize_function
from tir_mlir.meta_schedule.feature_extractor.store_features import NAMES, module_features


class PerStoreFeature:
    """`size`: the values a symbolic program's sizes take in its features ({"n": 1024}; those
    it does not give are SIZE): the features of a program with symbolic extents are those of
    the program at one size (the tuner over sizes passes their geometric middle)."""

    feature_names = NAMES
    SIZE = 256

    def __init__(self, size: Optional[Dict[str, int]] = None):
        self.size = dict(size or {})

    def extract_from(self, context, candidates) -> List[np.ndarray]:
        """Per candidate, an array (blocks x features), like TVM's extractor."""
        with get_context():
            return [
                np.array(
                    module_features(self._static(c.sch.mod.module)) or [[0.0] * len(NAMES)],
                    dtype=np.float32,
                )
                for c in candidates
            ]

    def _static(self, module: ir.Module) -> ir.Module:
        """`module`, or a copy with its functions' sizes made constants."""
        funcs = [f for f in module.body.operations if f.operation.name == "func.func"]
        if not any(
            isinstance(a.type, ir.IndexType)
            for f in funcs
            for a in f.regions[0].blocks[0].arguments
        ):
            return module
        copy = ir.Module.parse(str(module))
        for f in copy.body.operations:
            f = f.operation
            if f.name != "func.func":
                continue
            names = [
                str_attr(d, "tir.name", "")
                for d, a in zip(arg_attrs(f), f.regions[0].blocks[0].arguments)
                if isinstance(a.type, ir.IndexType)
            ]
            specialize_function(f, {n: self.size.get(n, self.SIZE) for n in names})
        return copy

    def program_vectors(self, context, candidates) -> np.ndarray:
        """One row per candidate; a candidate replayed by a search worker brings its row
        (`features`, computed there by a copy of this extractor)."""
        known = [getattr(c, "features", None) for c in candidates]
        rows = iter(self._rows(context, [c for c, f in zip(candidates, known) if f is None]))
        return np.array(
            [f if f is not None else next(rows) for f in known], dtype=np.float32
        ).reshape(len(candidates), -1)

    def _rows(self, context, candidates) -> List[np.ndarray]:
        rows = []
        for per_block in self.extract_from(context, candidates):
            main = per_block[int(np.argmax(per_block[:, NAMES.index("flops")]))]
            rows.append(np.concatenate([main, per_block.sum(axis=0), [len(per_block)]]))
        return rows
