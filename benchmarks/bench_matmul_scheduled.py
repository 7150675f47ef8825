"""A hand-scheduled 1024x1024 float32 matmul: the ONE schedule in schedules/matmul_1024.py
applied to the same TVMScript by tir-mlir and (when importable) TVM 0.21, next to numpy.
Prints GFLOP/s; runs are interleaved and each figure is the median of `--repeat` rounds.

    python benchmarks/bench_matmul_scheduled.py [--n 1024] [--repeat 7]
"""

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

import tir_mlir

sys.path.insert(0, str(Path(__file__).parent))
from programs import matmul_tvmscript, tvm_target  # noqa: E402
from schedules.matmul_1024 import schedule  # noqa: E402


def scheduled(n):
    sch = tir_mlir.Schedule(tir_mlir.parse(matmul_tvmscript(n)))
    schedule(sch)
    return sch.mod


def _timer(fn, min_ms=100):
    """Seconds per call: calls repeated until min_ms elapsed."""

    def measure():
        n, start = 0, time.perf_counter()
        while n == 0 or (time.perf_counter() - start) * 1e3 < min_ms:
            fn()
            n += 1
        return (time.perf_counter() - start) / n

    return measure


def runners(n, rng):
    a, b = (tir_mlir.nd.array(rng.uniform(-1, 1, (n, n)).astype("float32")) for _ in range(2))
    want = a @ b
    out = {}
    c = tir_mlir.nd.empty((n, n), "float32")
    lib = tir_mlir.build(scheduled(n))
    lib["matmul"](a, b, c)
    np.testing.assert_allclose(c, want, rtol=1e-3, atol=1e-3)
    out["tir-mlir"] = _timer(lib["matmul"].prepare(a, b, c))
    c2 = np.zeros((n, n), "float32")
    out["numpy"] = _timer(lambda: np.matmul(a, b, out=c2))
    try:
        import tvm
    except ImportError:
        return out
    sch = tvm.tir.Schedule(tvm.script.from_source(matmul_tvmscript(n)))
    schedule(sch)
    tlib = tvm.compile(sch.mod, target=tvm_target())
    targs = [tvm.nd.array(x) for x in (a, b, np.zeros((n, n), "float32"))]
    tlib["matmul"](*targs)
    np.testing.assert_allclose(targs[2].numpy(), want, rtol=1e-3, atol=1e-3)
    out["tvm"] = _timer(lambda: tlib["matmul"](*targs))
    return out


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--n", type=int, default=1024)
    p.add_argument("--repeat", type=int, default=7)
    args = p.parse_args()
    fns = runners(args.n, np.random.default_rng(0))
    times = {k: [] for k in fns}
    for _ in range(args.repeat):
        for k, f in fns.items():
            times[k].append(f())
    flops = 2 * args.n**3
    print(f"matmul {args.n}x{args.n}x{args.n} float32, load average {os.getloadavg()[0]:.2f}")
    for k, ts in times.items():
        med = statistics.median(ts)
        print(
            f"  {k:9s} {med * 1e3:9.3f} ms  {flops / med / 1e9:7.1f} GFLOP/s  "
            f"(min {flops / max(ts) / 1e9:.1f}, max {flops / min(ts) / 1e9:.1f})"
        )


if __name__ == "__main__":
    main()
