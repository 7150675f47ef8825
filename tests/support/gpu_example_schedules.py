"""examples/gpu_schedules.py (the documented GPU schedules) applied to the GPU tests' programs:
the reduction, memory and meta-schedule GPU rule tests share them."""

import sys
from pathlib import Path

import tir_mlir

ROOT = Path(__file__).resolve().parent.parent.parent
DATA = ROOT / "tests" / "data" / "gpu"
sys.path.insert(0, str(ROOT / "examples"))
import gpu_schedules  # noqa: E402  (examples/gpu_schedules.py)


def softmax_schedule():
    """TVM's classic softmax schedule (examples/gpu_schedules.py): a block per row; each
    reduction split by 64 with the inner loop bound to threadIdx.x (the serial part outside
    it), results in shared memory."""
    return gpu_schedules.softmax(tir_mlir.Schedule(tir_mlir.load(DATA / "softmax_te.tir"))).mod


def tiled_matmul(n, threads=16, per_thread=4, k_tile=16):
    """examples/gpu_schedules.py's SIMT matmul on an n x n x n matmul."""
    src = (DATA / "matmul.tir").read_text().replace("256", str(n))
    return gpu_schedules.tiled_matmul(
        tir_mlir.Schedule(tir_mlir.parse(src)), threads, per_thread, k_tile
    )
