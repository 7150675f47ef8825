"""One kernel tuned for several sizes against kernels tuned for one size each:

    python benchmarks/bench_tune_sizes.py [--k 256] [--sizes 64,256,512] [--check 777]
                                          [--trials 16] [--work-dir /tmp/bench_tune_sizes]

The program is `C[n, k] = A[n, k] @ B[k, k]` with `n = T.int32()`. It is tuned once over
all of `--sizes` (`tune_tir(..., sizes=...)`: one symbolic kernel, cost = the geometric mean of
its times), and, for comparison, the same program specialized at each size is tuned
statically with the same trial count. Every kernel is then timed at each size and at the
`--check` sizes (the symbolic kernel as it is; a static kernel only at its own size), next to
the unscheduled symbolic program. Prints one row per size: ms of unscheduled / symbolic-tuned
/ static-tuned, and the ratios.
"""
import argparse
import os
import tempfile

import numpy as np

import tir_mlir
from tir_mlir import meta_schedule as ms
from tir_mlir.meta_schedule import tir_integration

SOURCE = """@T.prim_func
def matmul(a: T.handle, b: T.handle, c: T.handle):
    T.func_attr({{"tir.noalias": True}})
    n = T.int32()
    A = T.match_buffer(a, (n, {k}))
    B = T.match_buffer(b, ({k}, {k}))
    C = T.match_buffer(c, (n, {k}))
    for i, j, kk in T.grid(n, {k}, {k}):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, kk])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
"""


def best_module(db, mod):
    sch = tir_integration.compile_tir(db, mod, "llvm")
    return sch.mod if sch is not None else None


def time_ms(lib, n: int, k: int) -> float:
    rng = np.random.default_rng(0)
    a, b = rng.random((n, k), dtype="float32"), rng.random((k, k), dtype="float32")
    c = np.zeros((n, k), "float32")
    lib["matmul"](a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-3)
    return lib.time_evaluator("matmul", number=3, repeat=3)(a, b, c).median * 1e3


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--k", type=int, default=256)
    ap.add_argument("--sizes", default="64,256,512")
    ap.add_argument("--check", default="777")
    ap.add_argument("--trials", type=int, default=16)
    ap.add_argument("--work-dir", default=None)
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    checks = [int(s) for s in args.check.split(",") if s]
    work = args.work_dir or tempfile.mkdtemp(prefix="bench_tune_sizes_")
    mod = tir_mlir.parse(SOURCE.format(k=args.k))
    per_iter = min(args.trials, 16)
    db = ms.tune_tir(mod, "llvm", os.path.join(work, "symbolic"), args.trials,
                     num_trials_per_iter=per_iter, sizes=[{"n": n} for n in sizes], seed=0)
    symbolic = tir_mlir.build(best_module(db, mod))
    unscheduled = tir_mlir.build(mod)
    static = {}
    for n in sizes:
        fixed = mod.specialize({"n": n})
        sdb = ms.tune_tir(fixed, "llvm", os.path.join(work, f"static_{n}"), args.trials,
                          num_trials_per_iter=per_iter, seed=0)
        static[n] = tir_mlir.build(best_module(sdb, fixed))
    print(f"matmul n x {args.k} x {args.k}, {args.trials} trials each; tuned over n = "
          f"{sizes}")
    print(f"{'n':>6} {'unscheduled':>12} {'symbolic':>10} {'static':>10} "
          f"{'sym/static':>10} {'unsched/sym':>11}")
    for n in sizes + checks:
        u, s = time_ms(unscheduled, n, args.k), time_ms(symbolic, n, args.k)
        st = time_ms(static[n], n, args.k) if n in static else None
        ratio = f"{s / st:10.2f}" if st else f"{'-':>10}"
        stat = f"{st:10.3f}" if st else f"{'-':>10}"
        print(f"{n:>6} {u:12.3f} {s:10.3f} {stat} {ratio} {u / s:11.1f}")


if __name__ == "__main__":
    main()
