"""A GELU (tanh and erf forms) over 1024 x 1024 float32 with the bias block inlined, the inner
loop split by 16 and vectorized, the outer parallel: tir-mlir with the `vector-tanh-erf` stage
(inline tanh/erf) against tir-mlir without it (one libm call per element), both built in this
process and timed in alternating rounds, plus TVM 0.21's build of the same schedule when TVM is
importable. Outputs are checked against numpy first. Wall ms per call (best of 5 calls per
round, median over rounds) and the median of the per-round ratios; the load average is printed.

    python benchmarks/bench_gelu.py [--rounds 7]
"""

import argparse
import math
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

import tir_mlir
from tir_mlir.passes.lowering import pipeline

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parent.parent / "tests" / "support"))
from programs import tvm_target  # noqa: E402
from schedule_everyday import bias_activation  # noqa: E402

N, M = 1024, 1024


def schedule(sch):
    sch.compute_inline(sch.get_block("bias"))
    i, j = sch.get_loops(sch.get_block("act"))
    sch.vectorize(sch.split(j, factors=[None, 16])[1])
    sch.parallel(i)


def build(text, with_stage):
    """tir-mlir's build, with or without the vector-tanh-erf stage in the CPU pipeline."""
    saved = pipeline.STAGE_NAMES["cpu"]
    if not with_stage:
        pipeline.STAGE_NAMES["cpu"] = [s for s in saved if s[1] != "vector-tanh-erf"]
    try:
        sch = tir_mlir.Schedule(tir_mlir.parse(text))
        schedule(sch)
        return tir_mlir.build(sch.mod)["main"]
    finally:
        pipeline.STAGE_NAMES["cpu"] = saved


def build_tvm(text, arrays):
    """A call of TVM's build on `arrays` (copied to TVM once), None without TVM."""
    try:
        import tvm
    except ImportError:
        return None
    sch = tvm.tir.Schedule(tvm.script.from_source(text))
    schedule(sch)
    f = tvm.compile(sch.mod, target=tvm_target())["main"]
    targs = [tvm.nd.array(x) for x in arrays]
    return lambda: f(*targs)


def reference(act, x):
    if act == "gelu_erf":
        return x * 0.5 * (1 + np.vectorize(math.erf)(x * 0.70710678))
    return x * 0.5 * (1 + np.tanh(0.7978846 * (x + 0.044715 * x**3)))


def best(fn, calls=5):
    ts = []
    for _ in range(calls):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return min(ts)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=7)
    args = ap.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f}")
    print("| activation | libm calls ms | inline ms | ratio (median of rounds) | TVM ms |")
    print("| --- | --- | --- | --- | --- |")
    rng = np.random.default_rng(0)
    a = (rng.standard_normal((N, M)) * 3).astype(np.float32)
    bias = rng.standard_normal(M).astype(np.float32)
    acts = ("gelu_tanh", "gelu_erf")
    texts = {act: bias_activation(N, M, act) for act in acts}
    # Every tir-mlir build before TVM's: with TVM's LLVM loaded, MLIR's translation to LLVM IR
    # crashed in this process.
    ours = {
        act: {"before": build(texts[act], False), "after": build(texts[act], True)} for act in acts
    }
    theirs = {act: build_tvm(texts[act], [a, bias, np.zeros_like(a)]) for act in acts}
    for act in acts:
        want = reference(act, (a + bias).astype(np.float64))
        calls = {}
        for name, f in ours[act].items():
            out = np.zeros_like(a)
            f(a, bias, out)
            np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5)
            calls[name] = lambda f=f, out=out: f(a, bias, out)
        if theirs[act] is not None:
            calls["tvm"] = theirs[act]
        times = {name: [] for name in calls}
        for _ in range(args.rounds):
            for name, call in calls.items():
                times[name].append(best(call))
        ratio = statistics.median(b / f for b, f in zip(times["before"], times["after"]))
        tvm_col = f"{statistics.median(times['tvm']) * 1e3:.3f}" if "tvm" in times else "-"
        print(
            f"| {act} | {statistics.median(times['before']) * 1e3:.3f} | "
            f"{statistics.median(times['after']) * 1e3:.3f} | {ratio:.2f}x | {tvm_col} |",
            flush=True,
        )
    print(f"load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
