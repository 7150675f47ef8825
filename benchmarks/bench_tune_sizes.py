"""One kernel tuned for several sizes against kernels tuned for one size each:

    python benchmarks/bench_tune_sizes.py [--k 256] [--sizes 64,256,512] [--check 777]
                                          [--trials 16] [--work-dir DIR [--reuse]]
                                          [--skip-tvm | --tvm-from DIR]

The program is `C[n, k] = A[n, k] @ B[k, k]` with `n = T.int32()`. It is tuned once over
all of `--sizes` (`tune_tir(..., sizes=...)`: one symbolic kernel, cost = the geometric mean of
its times), and, for comparison, the same program specialized at each size is tuned
statically with the same trial count. Every kernel is then timed at each size and at the
`--check` sizes (the symbolic kernel as it is; a static kernel, tuned at every listed and
`--check` size, only at its own size), next to the unscheduled symbolic program. TVM 0.21's
MetaSchedule cannot tune a function with `n` (its `tune_tir` refuses it), so beside each row
stands TVM tuning the program specialized at that size with the same trials (`--skip-tvm`
leaves it out; `--tvm-from` re-times an earlier run's TVM databases), in its own process with
TVM_NUM_THREADS = cores. Prints one row per size: ms of
unscheduled / symbolic-tuned / static-tuned / TVM static-tuned, and the ratios; best of
`--repeat` timings each.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

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


def tuned(mod, work, trials, per_iter, reuse, **kw):
    """The tuning database of `mod` in `work`: tuned now, or (reuse) read as a run left it."""
    if reuse:
        return ms.database.JSONDatabase(
            os.path.join(work, "database_workload.json"),
            os.path.join(work, "database_tuning_record.json"),
            allow_missing=False,
        )
    return ms.tune_tir(mod, "llvm", work, trials, num_trials_per_iter=per_iter, seed=0, **kw)


def best_module(db, mod):
    sch = tir_integration.compile_tir(db, mod, "llvm")
    return sch.mod if sch is not None else None


def _inputs(n: int, k: int):
    rng = np.random.default_rng(0)
    a, b = rng.random((n, k), dtype="float32"), rng.random((k, k), dtype="float32")
    return a, b, np.zeros((n, k), "float32")


def time_ms(lib, n: int, k: int, repeat: int) -> float:
    a, b, c = _inputs(n, k)
    lib["matmul"](a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-3)
    return min(lib.time_evaluator("matmul", number=3, repeat=repeat)(a, b, c).results) * 1e3


def tvm_static_ms(
    k: int, n: int, trials: int, per_iter: int, repeat: int, work: str, reuse: bool = False
):
    """TVM 0.21 tuning the program specialized at n, timed like ours (its own process)."""
    import tvm
    from tvm import meta_schedule as tms

    sys.path.insert(0, str(Path(__file__).parent))
    from programs import tvm_target

    func = tvm.script.from_source(SOURCE.format(k=k))
    fixed = tvm.IRModule(
        {"matmul": func.specialize({func.params[0]: tvm.tir.decl_buffer((n, k), "float32")})}
    )
    target = tvm.target.Target(f"{tvm_target()} -num-cores={os.cpu_count()}")
    start = time.perf_counter()
    if reuse:
        db = tms.database.JSONDatabase(work_dir=work, allow_missing=False)
    else:
        db = tms.tune_tir(
            fixed, target, work, max_trials_global=trials, num_trials_per_iter=per_iter
        )
    wall = time.perf_counter() - start
    # TVM at its best: the tuned schedule built for the host CPU and for generic x86-64 (its
    # generic build is sometimes the faster one), the faster kept.
    tuned = tms.tir_integration.compile_tir(db, fixed, target).mod
    a, b, c = _inputs(n, k)
    best = float("inf")
    for build_target in (target, tvm.target.Target(f"llvm -num-cores={os.cpu_count()}")):
        lib = tvm.build(tuned, target=build_target)
        args = [tvm.nd.array(x) for x in (a, b, c)]
        lib["matmul"](*args)
        np.testing.assert_allclose(args[2].numpy(), a @ b, rtol=1e-3)
        times = lib.time_evaluator("matmul", tvm.cpu(), number=3, repeat=repeat)(*args).results
        best = min(best, min(times))
    return best * 1e3, wall


def tvm_isolated(k, n, trials, per_iter, repeat, work, reuse):
    """tvm_static_ms in a fresh interpreter: TVM's LLVM never shares a process with ours."""
    cmd = [
        sys.executable,
        __file__,
        "--tvm-worker",
        str(n),
        "--k",
        str(k),
        "--trials",
        str(trials),
        "--repeat",
        str(repeat),
        "--work-dir",
        work,
    ] + ["--reuse"] * reuse
    proc = subprocess.run(
        cmd,
        capture_output=True,
        text=True,
        env={**os.environ, "TVM_NUM_THREADS": str(os.cpu_count())},
    )
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    if proc.returncode != 0 or not lines:
        print(
            f"TVM at n = {n} failed (exit {proc.returncode}): "
            f"{(proc.stderr or proc.stdout).strip()[-1500:]}",
            file=sys.stderr,
        )
        return None
    return json.loads(lines[-1])["ms"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--k", type=int, default=256)
    ap.add_argument("--sizes", default="64,256,512")
    ap.add_argument("--check", default="777")
    ap.add_argument("--trials", type=int, default=16)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--skip-tvm", action="store_true")
    ap.add_argument("--work-dir", default=None)
    ap.add_argument(
        "--reuse",
        action="store_true",
        help="time the databases a run left in --work-dir instead of tuning",
    )
    ap.add_argument(
        "--tvm-from",
        default=None,
        help="re-time TVM's databases of an earlier run's --work-dir instead of tuning TVM "
        "again (TVM's side does not depend on tir-mlir's code)",
    )
    ap.add_argument("--tvm-worker", type=int, help=argparse.SUPPRESS)  # internal: one TVM run
    args = ap.parse_args()
    per_iter = min(args.trials, 16)
    if args.tvm_worker:
        ms_, wall = tvm_static_ms(
            args.k, args.tvm_worker, args.trials, per_iter, args.repeat, args.work_dir, args.reuse
        )
        print(json.dumps({"ms": ms_, "wall": wall}))
        return
    sizes = [int(s) for s in args.sizes.split(",")]
    checks = [int(s) for s in args.check.split(",") if s]
    if args.reuse and not args.work_dir:
        ap.error("--reuse needs the --work-dir of an earlier run")
    work = args.work_dir or tempfile.mkdtemp(prefix="bench_tune_sizes_")
    load0, start = os.getloadavg()[0], time.perf_counter()
    mod = tir_mlir.parse(SOURCE.format(k=args.k))
    db = tuned(
        mod,
        os.path.join(work, "symbolic"),
        args.trials,
        per_iter,
        args.reuse,
        sizes=[{"n": n} for n in sizes],
    )
    symbolic = tir_mlir.build(best_module(db, mod))
    unscheduled = tir_mlir.build(mod)
    static = {}
    for n in sizes + checks:
        fixed = mod.specialize({"n": n})
        sdb = tuned(fixed, os.path.join(work, f"static_{n}"), args.trials, per_iter, args.reuse)
        static[n] = tir_mlir.build(best_module(sdb, fixed))
    tvm = (
        {}
        if args.skip_tvm
        else {
            n: tvm_isolated(
                args.k,
                n,
                args.trials,
                per_iter,
                args.repeat,
                os.path.join(args.tvm_from or work, f"tvm_{n}"),
                args.reuse or args.tvm_from is not None,
            )
            for n in sizes + checks
        }
    )
    rows = []
    for n in sizes + checks:
        u, s = time_ms(unscheduled, n, args.k, 1), time_ms(symbolic, n, args.k, args.repeat)
        rows.append((n, u, s, time_ms(static[n], n, args.k, args.repeat), tvm.get(n)))
    print(
        f"# {time.strftime('%Y-%m-%d %H:%M')} UTC, {os.cpu_count()} cores, load average "
        f"{load0:.2f} -> {os.getloadavg()[0]:.2f}, {time.perf_counter() - start:.0f} s"
    )
    print(
        f"matmul n x {args.k} x {args.k}, {args.trials} trials each; symbolic kernel tuned "
        f"over n = {sizes}; ms, best of {args.repeat}"
    )
    print(
        f"{'n':>6} {'unscheduled':>12} {'symbolic':>10} {'static':>10} {'TVM static':>10} "
        f"{'sym/static':>10} {'sym/TVM':>8} {'unsched/sym':>11}"
    )
    for n, u, s, st, tv in rows:
        tvs = f"{tv:10.3f}" if tv else f"{'-':>10}"
        tvr = f"{s / tv:8.2f}" if tv else f"{'-':>8}"
        print(f"{n:>6} {u:12.3f} {s:10.3f} {st:10.3f} {tvs} {s / st:10.2f} {tvr} {u / s:11.1f}")


if __name__ == "__main__":
    main()
