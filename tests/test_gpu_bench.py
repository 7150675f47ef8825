"""benchmarks/bench_gpu.py without a GPU: a clean exit with the reason, and a dry mode that
builds every kernel to PTX (assembled by ptxas when it is installed)."""
import subprocess
import sys
from pathlib import Path

import pytest

from tir_mlir.runtime import cuda

BENCH = Path(__file__).resolve().parent.parent / "benchmarks" / "bench_gpu.py"


def _run(*args):
    return subprocess.run([sys.executable, str(BENCH), *args], capture_output=True, text=True,
                          timeout=300)


@pytest.mark.skipif(cuda.gpu_available(), reason="a GPU is present: the benchmark would run")
def test_exits_cleanly_without_a_gpu():
    p = _run()
    assert p.returncode == 0, p.stderr
    assert "no NVIDIA GPU" in p.stdout


def test_dry_mode_builds_every_kernel():
    p = _run("--dry", "--arch", "sm_80")
    assert p.returncode == 0, p.stdout + p.stderr
    names = [line.split()[0] for line in p.stdout.splitlines()]
    assert names == ["matmul_f32", "matmul_f16", "matmul_bf16", "softmax", "row_sum",
                     "conv2d"]
    if "ptxas:" in p.stdout:
        assert "stack" not in p.stdout.split("matmul_f16")[0]   # the f32 tile in registers
