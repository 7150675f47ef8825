"""Call overhead: a 16x16 float32 add (a kernel of a few nanoseconds), called through
`time_evaluator` and through `lib["add"](...)`, by tir-mlir and by TVM 0.21 (when installed).

    python benchmarks/bench_call_overhead.py [--calls 200000]

Prints microseconds per call: the best of 5 rounds of --calls calls."""

import argparse
import os
import time

import numpy as np

TEXT = """
@T.prim_func
def add(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32"),
        C: T.Buffer((16, 16), "float32")):
    T.func_attr({"global_symbol": "add", "tir.noalias": True})
    for i, j in T.grid(16, 16):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = A[vi, vj] + B[vi, vj]
"""


def per_call(f, calls):
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(calls):
            f()
        best = min(best, (time.perf_counter() - start) / calls)
    return best * 1e6


def tir_mlir_times(calls):
    import tir_mlir

    lib = tir_mlir.build(tir_mlir.parse(TEXT))
    a, b, c = (np.random.rand(16, 16).astype(np.float32) for _ in range(3))
    lib["add"](a, b, c)
    assert np.allclose(c, a + b)
    evaluator = lib.time_evaluator("add", number=calls, repeat=5)
    return {
        "time_evaluator": evaluator(a, b, c).min * 1e6,
        'lib["add"](a, b, c)': per_call(lambda: lib["add"](a, b, c), calls),
    }


def tvm_times(calls):
    try:
        import tvm
    except ImportError:
        return None
    lib = tvm.build(tvm.script.from_source(TEXT), target="llvm")
    dev = tvm.cpu()
    a, b, c = (tvm.nd.array(np.random.rand(16, 16).astype(np.float32), dev) for _ in range(3))
    evaluator = lib.time_evaluator("add", dev, number=calls, repeat=5)
    f = lib["add"]
    return {
        "time_evaluator": evaluator(a, b, c).min * 1e6,
        'lib["add"](a, b, c)': per_call(lambda: f(a, b, c), calls),
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=200000)
    args = ap.parse_args()
    print("load average:", os.getloadavg())
    ours, theirs = tir_mlir_times(args.calls), tvm_times(args.calls)
    print(f"{'us per call':24}{'tir-mlir':>10}{'TVM 0.21':>10}")
    for k, v in ours.items():
        print(f"{k:24}{v:10.3f}" + (f"{theirs[k]:10.3f}" if theirs else ""))
    print("load average:", os.getloadavg())


if __name__ == "__main__":
    main()
