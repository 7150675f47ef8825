"""Schedules that put `sch.vectorize` on a loop holding a reduction init, a `T.where` guard or a
strided access, built by tir-mlir and timed next to numpy (best of `--repeat` runs of
`time_evaluator`, and of the CPU time the process used, steadier on a loaded machine), and the
CPU time of TVM 0.21's build of the same schedule when TVM is importable. Results are checked
against numpy first.

    python benchmarks/bench_vectorize.py [--repeat 5]
"""

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

import tir_mlir

sys.path.insert(0, str(Path(__file__).parent))
from programs import matmul_tvmscript, tvm_target  # noqa: E402

ADD = """
@T.prim_func
def add(A: T.Buffer((256, {n}), "float32"), B: T.Buffer((256, {n}), "float32"),
        C: T.Buffer((256, {n}), "float32")):
    T.func_attr({{"global_symbol": "add", "tir.noalias": True}})
    for i, j in T.grid(256, {n}):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = A[vi, vj] + B[vi, vj]
"""
TRANSPOSE = """
@T.prim_func
def transpose(A: T.Buffer((512, 512), "float32"), B: T.Buffer((512, 512), "float32")):
    T.func_attr({"global_symbol": "transpose", "tir.noalias": True})
    for i, j in T.grid(512, 512):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vj, vi] * T.float32(2)
"""

PAD = """
@T.prim_func
def pad(A: T.Buffer((64, 56, 56), "float32"), B: T.Buffer((64, 58, 58), "float32")):
    T.func_attr({"global_symbol": "pad", "tir.noalias": True})
    for c, h, w in T.grid(64, 58, 58):
        with T.block("B"):
            vc, vh, vw = T.axis.remap("SSS", [c, h, w])
            B[vc, vh, vw] = T.if_then_else(1 <= vh and vh < 57 and 1 <= vw and vw < 57,
                                           A[vc, vh - 1, vw - 1], T.float32(0))
"""


def matmul_split(order, decompose=False):
    """Split j by 16, reorder to `order` (names i, j0, j1, k), vectorize j1."""

    def schedule(sch):
        c = sch.get_block("C")
        i, j, k = sch.get_loops(c)
        j0, j1 = sch.split(j, factors=[None, 16])
        loops = {"i": i, "j0": j0, "j1": j1, "k": k}
        sch.reorder(*[loops[x] for x in order])
        sch.vectorize(j1)
        if decompose:
            sch.decompose_reduction(c, loops[order[order.index("j1") - 1]])

    return schedule


def elementwise(sch):
    c = sch.get_block("C")
    i, j = sch.get_loops(c)
    _, j1 = sch.split(j, factors=[None, 16])
    sch.vectorize(j1)
    sch.parallel(i)


def fused(sch):
    sch.vectorize(sch.fuse(*sch.get_loops(sch.get_block("C"))))


def pad(sch):
    _, _, w = sch.get_loops(sch.get_block("B"))
    sch.vectorize(sch.split(w, factors=[None, 16])[1])


def _pad_np(a):
    return [np.pad(a, ((0, 0), (1, 1), (1, 1)))]


def transpose(sch):
    sch.vectorize(sch.get_loops(sch.get_block("B"))[1])


def _mm(n):
    return (matmul_tvmscript(n), [(n, n), (n, n), (n, n)], lambda a, b: [a @ b])


CASES = [  # name, (program, shapes, numpy), schedule
    ("matmul 256 i,k,j0,j1 (init in loop)", _mm(256), matmul_split("i k j0 j1".split())),
    ("matmul 256 i,j0,k,j1 (init in loop)", _mm(256), matmul_split("i j0 k j1".split())),
    ("matmul 256 i,j0,k,j1 decomposed", _mm(256), matmul_split("i j0 k j1".split(), True)),
    ("matmul 1000 i,k,j0,j1 (T.where)", _mm(1000), matmul_split("i k j0 j1".split())),
    ("matmul 1024 i,k,j0,j1 (init in loop)", _mm(1024), matmul_split("i k j0 j1".split())),
    (
        "add 256x1000 split 16 + parallel",
        (ADD.format(n=1000), [(256, 1000)] * 3, lambda a, b: [a + b]),
        elementwise,
    ),
    (
        "transpose*2 512 (strided loads)",
        (TRANSPOSE, [(512, 512)] * 2, lambda a: [a.T * 2]),
        transpose,
    ),
    (
        "add 256x1000 fused, one vectorized loop",
        (ADD.format(n=1000), [(256, 1000)] * 3, lambda a, b: [a + b]),
        fused,
    ),
    ("pad 64x56x56 (T.if_then_else, split 16)", (PAD, [(64, 56, 56), (64, 58, 58)], _pad_np), pad),
]

# TVM 0.21 aborts the whole process on these ("LLVM ERROR: Cannot implicitly convert a scalable
# size to a fixed-width size": its vectorizer on a 256000-lane loop).
TVM_ABORTS = {"add 256x1000 fused, one vectorized loop"}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f}")
    print("| schedule | tir-mlir ms | tir-mlir CPU ms | TVM CPU ms | numpy ms |")
    print("| --- | --- | --- | --- | --- |")
    rng = np.random.default_rng(0)
    for name, (text, shapes, reference), schedule in CASES:
        sch = tir_mlir.Schedule(tir_mlir.parse(text))
        schedule(sch)
        lib = tir_mlir.build(sch.mod)
        fname = sch.mod.module.body.operations[0].attributes["sym_name"].value
        arrays = [tir_mlir.nd.array(rng.standard_normal(s).astype("float32")) for s in shapes]
        outs = reference(*arrays[: len(shapes) - 1])
        lib[fname](*arrays)
        for got, want in zip(arrays[len(shapes) - len(outs) :], outs):
            np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-3)
        t = min(lib.time_evaluator(fname, number=3, repeat=args.repeat)(*arrays).results)
        cpu = _best(lib[fname].prepare(*arrays), args.repeat, time.process_time)
        ref = _best(lambda: reference(*arrays[: len(shapes) - 1]), args.repeat)
        theirs = (
            None
            if name in TVM_ABORTS
            else _tvm_cpu_time(text, schedule, fname, arrays, args.repeat)
        )
        tvm_col = f"{theirs * 1e3:.3f}" if theirs else "-"
        print(
            f"| {name} | {t * 1e3:.3f} | {cpu * 1e3:.3f} | {tvm_col} | {ref * 1e3:.3f} |",
            flush=True,
        )
    print(f"load average {os.getloadavg()[0]:.2f}")


def _tvm_cpu_time(text, schedule, fname, arrays, repeat):
    """CPU time of TVM 0.21's build of the same schedule (None without TVM)."""
    try:
        import tvm
    except ImportError:
        return None
    sch = tvm.tir.Schedule(tvm.script.from_source(text))
    schedule(sch)
    lib = tvm.compile(sch.mod, target=tvm_target())
    targs = [tvm.nd.array(a) for a in arrays]
    return _best(lambda: lib[fname](*targs), repeat, time.process_time)


def _best(fn, repeat, clock=time.perf_counter):
    """Best of `repeat` measurements of 3 calls (per call); `time.process_time` counts only
    the time this process ran (all its threads), which a loaded machine disturbs less."""
    fn()
    times = []
    for _ in range(repeat):
        start = clock()
        for _ in range(3):
            fn()
        times.append((clock() - start) / 3)
    return min(times)


if __name__ == "__main__":
    main()
