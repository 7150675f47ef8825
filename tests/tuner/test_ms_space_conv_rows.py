"""The default CPU design space of the ResNet 3x3 conv2d (NCHW, 56 x 56 rows) holds register
tiles as wide as a whole output row: 56 lanes along x (three zmm and a ymm) under 4 filters
and 1 row, 16 vector registers of accumulators. Such tiles ran at torch's `conv2d` speed where
the tuner's best (8 lanes: 56 has no factor 16) ran 1.19x (issue 28, benchmarks/README.md).
Replayed with those decisions, the candidate vectorizes the whole row and computes numpy's
numbers."""

import sys
from pathlib import Path

import numpy as np
import pytest

import tir_mlir
from numpy_refs import conv2d_inputs, conv2d_numpy
from schedule_check import parse
from tir_mlir.meta_schedule.space_point import replay_space_point

sys.path.insert(0, str(Path(__file__).parent.parent.parent / "benchmarks"))
from programs import conv2d_tvmscript  # noqa: E402

C, HW, F = 16, 56, 16
# n, f 1x1x4x4, y 28x1x2x1, x 1x1x1x56, rc 1x16, ry, rx 1x3; unroll 64; pad under y_0
DECISIONS = [[1, 1, 1, 1], [1, 1, 4, 4], [28, 1, 2, 1], [1, 1, 1, 56], [1, 16], [1, 3], [1, 3]]
DECISIONS += [2, 2]


def test_default_space_holds_whole_row_tiles():
    mod = parse(conv2d_tvmscript(1, C, HW, F, 3))
    cand = replay_space_point(mod, "llvm -num-cores=2", DECISIONS)
    script = cand.mod.script()
    assert "for x_3 in T.vectorized(56):" in script
    assert "T.parallel(28" in script
    x, w, out = conv2d_inputs(C, HW, F)
    tir_mlir.build(cand.mod)["conv2d"](x, w, out)
    np.testing.assert_allclose(out, conv2d_numpy(x, w), rtol=1e-4, atol=1e-4)


def test_space_point_needs_one_decision_per_sample():
    mod = parse(conv2d_tvmscript(1, C, HW, F, 3))
    with pytest.raises(ValueError, match="9 sampling instructions, 8 decisions given"):
        replay_space_point(mod, "llvm -num-cores=2", DECISIONS[:-1])


def test_space_point_that_does_not_replay_says_why():
    mod = parse(conv2d_tvmscript(1, C, HW, F, 3))
    bad = [[1, 1, 1, 1], [1, 1, 4, 4], [28, 1, 2, 1], [1, 1, 1, 57], *DECISIONS[4:]]
    with pytest.raises(ValueError, match="does not replay"):
        replay_space_point(mod, "llvm -num-cores=2", bad)
