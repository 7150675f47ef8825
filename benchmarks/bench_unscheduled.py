"""Unscheduled programs built by tir-mlir, next to numpy (where it has the operation) and (when
importable) TVM 0.21's `tvm.compile` of the same TVMScript. Prints median times and ratios (> 1: tir-mlir is slower).

    python benchmarks/bench_unscheduled.py
"""

import importlib.util
import subprocess
import sys
from pathlib import Path

import numpy as np

import tir_mlir
from tir_mlir.runtime.run_program import flop_count, random_array
from tir_mlir.runtime.signature import signatures
from tir_mlir.context import get_context
from tir_mlir.interpreter import interpret

sys.path.insert(0, str(Path(__file__).parent))
from programs import matmul_tvmscript  # noqa: E402

PROGRAMS = Path(__file__).parent.parent / "tests" / "data" / "programs"


def _softmax_np(a):
    e = np.exp(a - a.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def _conv_np(a, w):
    pad = np.pad(a, ((0, 0), (0, 0), (1, 1), (1, 1)))
    win = np.lib.stride_tricks.sliding_window_view(pad, (3, 3), axis=(2, 3))
    return np.einsum("nchwyx,fcyx->nfhw", win, w, optimize=True)


CASES = [
    ("matmul 256", matmul_tvmscript(256), lambda a, b, c: np.matmul(a, b, out=c)),
    ("matmul 512", matmul_tvmscript(512), lambda a, b, c: np.matmul(a, b, out=c)),
    ("matmul 1024", matmul_tvmscript(1024), lambda a, b, c: np.matmul(a, b, out=c)),
    (
        "conv2d 16->32 14x14 3x3",
        (PROGRAMS / "conv2d_pad.tir").read_text(),
        lambda a, w, b: b.__setitem__(..., _conv_np(a, w)),
    ),
    (
        "softmax 64x128",
        (PROGRAMS / "softmax.tir").read_text(),
        lambda a, b: b.__setitem__(..., _softmax_np(a)),
    ),
] + [
    # the test suite's other programs, as written; checked against the interpreter
    (name, (PROGRAMS / f"{name}.tir").read_text(), None)
    for name in (
        "batch_matmul",
        "conv2d_nhwc",
        "depthwise_conv2d",
        "layernorm",
        "maxpool2d",
        "transpose_add",
        "int8_matmul",
    )
]


def median_time(fn, min_ms=200):
    import time

    fn()
    times = []
    for _ in range(5):
        n, start = 0, time.perf_counter()
        while (time.perf_counter() - start) * 1e3 < min_ms / 5 or n == 0:
            fn()
            n += 1
        times.append((time.perf_counter() - start) / n)
    return float(np.median(times))


def main():
    rng = np.random.default_rng(0)
    print(f"{'program':26s} {'tir-mlir ms':>12s} {'GFLOP/s':>8s} {'numpy ms':>9s} {'/numpy':>7s}")
    for title, text, reference in CASES:
        mod = tir_mlir.parse(text)
        with get_context():
            name, params = next(iter(signatures(mod.module).items()))
        arrays = [random_array(p.shape, p.dtype, rng) for p in params]
        lib = tir_mlir.build(mod)
        ours = lib.time_evaluator(name, number=3, repeat=5, min_repeat_ms=50)(*arrays).median
        ref = [a.copy() for a in arrays]
        lib[name](*arrays)
        if reference is None:
            interpret(mod, name, *ref)
        else:
            reference(*ref)
        np.testing.assert_allclose(arrays[-1], ref[-1], rtol=1e-3, atol=1e-3)
        flops = flop_count(mod.module, name)
        gf = f"{flops / ours / 1e9:8.2f}" if flops else f"{'-':>8s}"
        if reference is None:
            print(f"{title:26s} {ours * 1e3:12.3f} {gf} {'-':>9s} {'-':>7s}", flush=True)
            continue
        np_t = median_time(lambda: reference(*ref))
        print(
            f"{title:26s} {ours * 1e3:12.3f} {gf} {np_t * 1e3:9.3f} {ours / np_t:7.1f}", flush=True
        )
    if importlib.util.find_spec("tvm") is not None:
        print()
        subprocess.run(
            [
                sys.executable,
                str(Path(__file__).with_name("bench_vs_tvm.py")),
                "--unscheduled",
                *sys.argv[1:],
            ],
            check=True,
        )


if __name__ == "__main__":
    main()
