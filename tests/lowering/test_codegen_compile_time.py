"""Programs LLVM once took minutes to compile: each builds within a generous limit, in its own
process (a hang must fail the test, not stall the suite), and computes the right numbers."""

import os
import subprocess
import sys
from pathlib import Path

DATA = Path(__file__).parent.parent / "data"

CHECK = """
import numpy as np, tir_mlir, sys
lib = tir_mlir.build(tir_mlir.parse(open(sys.argv[1]).read()), target="llvm")
a = np.random.default_rng(0).uniform(-2, 2, (256, 1024)).astype("float32")
b = np.zeros_like(a)
lib["softmax"](a, b)
e = np.exp(a - a.max(axis=1, keepdims=True))
np.testing.assert_allclose(b, e / e.sum(axis=1, keepdims=True), rtol=1e-4, atol=1e-7)
"""


def test_softmax_candidate_that_hung_loop_idiom_recognition(tmp_path):
    """A tuner candidate (the row sum recomputed per element, under an unrolled parallel
    loop): LLVM's LoopIdiomRecognize ran for minutes on its OpenMP body (llvm_ir.OPT_FLAGS)."""
    proc = subprocess.run(
        [sys.executable, "-c", CHECK, str(DATA / "softmax_sum_per_element.tir")],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "TIR_MLIR_CACHE": "0"},
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
