"""Schedules that put `sch.vectorize` on a loop holding a reduction init, a `T.where` guard or a
strided access, built by tir-mlir and timed next to numpy (best of `--repeat` runs of
`time_evaluator`). Results are checked against numpy first.

    python benchmarks/bench_vectorize.py [--repeat 5]
"""
import argparse
import os
import sys
from pathlib import Path

import numpy as np

import tir_mlir

sys.path.insert(0, str(Path(__file__).parent))
from programs import matmul_tvmscript  # noqa: E402

ADD = '''
@T.prim_func
def add(A: T.Buffer((256, {n}), "float32"), B: T.Buffer((256, {n}), "float32"),
        C: T.Buffer((256, {n}), "float32")):
    T.func_attr({{"global_symbol": "add", "tir.noalias": True}})
    for i, j in T.grid(256, {n}):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = A[vi, vj] + B[vi, vj]
'''
TRANSPOSE = '''
@T.prim_func
def transpose(A: T.Buffer((512, 512), "float32"), B: T.Buffer((512, 512), "float32")):
    T.func_attr({"global_symbol": "transpose", "tir.noalias": True})
    for i, j in T.grid(512, 512):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vj, vi] * T.float32(2)
'''


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
    ("add 256x1000 split 16 + parallel", (ADD.format(n=1000), [(256, 1000)] * 3,
                                          lambda a, b: [a + b]), elementwise),
    ("transpose*2 512 (strided loads)", (TRANSPOSE, [(512, 512)] * 2,
                                         lambda a: [a.T * 2]), transpose),
]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f}")
    print("| schedule | tir-mlir ms | numpy ms |")
    print("| --- | --- | --- |")
    rng = np.random.default_rng(0)
    for name, (text, shapes, reference), schedule in CASES:
        sch = tir_mlir.Schedule(tir_mlir.parse(text))
        schedule(sch)
        lib = tir_mlir.build(sch.mod)
        fname = sch.mod.module.body.operations[0].attributes["sym_name"].value
        arrays = [rng.standard_normal(s).astype("float32") for s in shapes]
        outs = reference(*arrays[:len(shapes) - 1])
        lib[fname](*arrays)
        for got, want in zip(arrays[len(shapes) - len(outs):], outs):
            np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-3)
        t = min(lib.time_evaluator(fname, number=3, repeat=args.repeat)(*arrays).results)
        ref = _best(lambda: reference(*arrays[:len(shapes) - 1]), args.repeat)
        print(f"| {name} | {t * 1e3:.3f} | {ref * 1e3:.3f} |", flush=True)
    print(f"load average {os.getloadavg()[0]:.2f}")


def _best(fn, repeat):
    import time
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


if __name__ == "__main__":
    main()
