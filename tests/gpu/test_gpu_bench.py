"""benchmarks/bench_gpu.py without a GPU: a clean exit with the reason, and a dry mode that
builds every kernel to PTX (assembled by ptxas when it is installed)."""

import subprocess
import sys
from pathlib import Path

import pytest

from tir_mlir.runtime import cuda

BENCH = Path(__file__).resolve().parent.parent.parent / "benchmarks" / "bench_gpu.py"


def _run(*args):
    return subprocess.run(
        [sys.executable, str(BENCH), *args], capture_output=True, text=True, timeout=300
    )


@pytest.mark.skipif(cuda.gpu_available(), reason="a GPU is present: the benchmark would run")
def test_exits_cleanly_without_a_gpu():
    p = _run()
    assert p.returncode == 0, p.stderr
    assert "no NVIDIA GPU" in p.stdout


def test_dry_mode_builds_every_kernel():
    p = _run("--dry", "--arch", "sm_80")
    assert p.returncode == 0, p.stdout + p.stderr
    names = [line.split()[0] for line in p.stdout.splitlines()]
    assert names == ["matmul_f32", "matmul_f16", "matmul_bf16", "softmax", "row_sum", "conv2d"]
    if "ptxas:" in p.stdout:
        assert "stack" not in p.stdout.split("matmul_f16")[0]  # the f32 tile in registers


def _bench():
    import importlib.util

    spec = importlib.util.spec_from_file_location("bench_gpu", BENCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("name", ["matmul_f32", "row_sum", "softmax", "conv2d"])
def test_bench_schedules_compute_the_op_in_the_simulator(name):
    """The benchmark's own schedules, at small sizes, run in the SIMT simulator vs numpy."""
    import numpy as np
    import tir_mlir
    from gpu_sim import simulate
    from tir_mlir.passes.lowering.pipeline import lower

    b, rng, S = _bench(), np.random.default_rng(0), tir_mlir.Schedule
    if name == "matmul_f32":
        sch = b.matmul_f32_schedule(S(b.matmul_f32(128)))
        x, y = rng.random((128, 128), np.float32), rng.random((128, 128), np.float32)
        args, expect = [x, y, np.zeros((128, 128), np.float32)], x @ y
    elif name == "row_sum":
        sch = b.row_sum_schedule(S(b.row_sum(4, 512)))
        x = rng.random((4, 512), np.float32)
        args, expect = [x, np.zeros(4, np.float32)], x.sum(1)
    elif name == "softmax":
        sch = b.gpu_schedules.softmax(S(b.softmax(4, 512)), threads=256)
        x = rng.random((4, 512), np.float32)
        e = np.exp(x - x.max(1, keepdims=True))
        args, expect = [x, np.zeros_like(x)], e / e.sum(1, keepdims=True)
    else:
        sch = b.conv2d_schedule(S(b.conv2d(1, 4, 8, 8, 8)))
        x, w = rng.random((1, 4, 10, 10), np.float32), rng.random((8, 4, 3, 3), np.float32)
        ref = np.zeros((1, 8, 8, 8), np.float32)
        for r in range(3):
            for s in range(3):
                ref += np.einsum("nchw,kc->nkhw", x[:, :, r : r + 8, s : s + 8], w[:, :, r, s])
        args, expect = [x, w, np.zeros((1, 8, 8, 8), np.float32)], ref
    simulate(lower(sch.mod.module, "cuda", "gpu"), *args)
    np.testing.assert_allclose(args[-1], expect, rtol=1e-4, atol=1e-4)
