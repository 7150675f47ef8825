"""Auto-tuning, tir-mlir's meta schedule against TVM 0.21's, same programs, same trial
budget, same machine (host CPU target, TVM_NUM_THREADS = cores):

    python benchmarks/bench_tune.py [--trials 256] [--per-iter 64] [--only matmul1024,...]
                                    [--population 512] [--skip-tvm]

For each workload (1024 and 512 float32 matmul, NCHW conv2d 1x64x56x56 with 64 3x3
filters, a 256x1024 softmax) both tuners run `tune_tir`, the best schedule is compiled
(`compile_tir`) and timed outside the tuner; printed: GFLOP/s, trials, tuning wall time, and
when tir-mlir's tuning first measured a program at least as fast as TVM's final one
(its database's timestamps, against TVM's final time measured outside its tuner).
TVM runs in its own process (`--tvm-worker`), so neither tuner shares a process, thread pool
or LLVM instance with the other.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import tir_mlir
import tir_mlir.meta_schedule as ms

sys.path.insert(0, str(Path(__file__).parent))
from programs import (
    conv2d_tvmscript,
    matmul_tvmscript,
    softmax_tvmscript,  # noqa: E402
    tvm_target,
)

WORKLOADS = {
    "matmul1024": (lambda: matmul_tvmscript(1024), "matmul", 2 * 1024**3),
    "matmul512": (lambda: matmul_tvmscript(512), "matmul", 2 * 512**3),
    "conv2d": (lambda: conv2d_tvmscript(1, 64, 56, 64, 3), "conv2d", 2 * 64 * 56 * 56 * 64 * 9),
    "softmax": (lambda: softmax_tvmscript(256, 1024), "softmax", 5 * 256 * 1024),
}


def _args(mod_src, func, rng):
    """Random inputs, zero outputs, from the unscheduled program's buffers."""
    from tir_mlir.meta_schedule.arg_info import ArgInfo

    infos = ArgInfo.from_entry_func(tir_mlir.parse(mod_src))
    return [tir_mlir.nd.array(rng.uniform(-1, 1, i.shape).astype(i.dtype)) for i in infos]


def _median_secs(fn, repeat=5, min_ms=100):
    times = []
    for _ in range(repeat):
        n, start = 0, time.perf_counter()
        while n == 0 or (time.perf_counter() - start) * 1e3 < min_ms:
            fn()
            n += 1
        times.append((time.perf_counter() - start) / n)
    return statistics.median(times)


def tune_ours(src, func, trials, per_iter, population, cores, work_dir):
    mod = tir_mlir.parse(src)
    target = f"llvm -num-cores={cores}"
    start, unix_start = time.perf_counter(), time.time()
    db = ms.tune_tir(
        mod,
        target,
        work_dir,
        max_trials_global=trials,
        num_trials_per_iter=per_iter,
        seed=0,
        strategy=ms.search_strategy.EvolutionarySearch(population_size=population),
    )
    wall = time.perf_counter() - start
    curve, best = [], float("inf")  # (seconds since the start, best mean time so far)
    for r in db.get_all_tuning_records():
        if r.is_valid and r.mean_sec < best:
            best = r.mean_sec
            curve.append((r.timestamp - unix_start, best))
    sch = ms.tir_integration.compile_tir(db, mod, target)
    lib = tir_mlir.build(sch.mod)
    args = _args(src, func, np.random.default_rng(0))
    ref = [a.copy() for a in args]
    tir_mlir.build(mod)[func](*ref)
    lib[func](*args)
    np.testing.assert_allclose(args[-1], ref[-1], rtol=1e-3, atol=1e-3)
    call = lib[func].prepare(*args) if hasattr(lib[func], "prepare") else (lambda: lib[func](*args))
    return _median_secs(call), len(db), wall, curve


def reached(curve, secs):
    """When the tuning first measured a program at least as fast as `secs` (None: never)."""
    return next((t for t, best in curve if best <= secs), None)


def tune_tvm(src, func, trials, per_iter, cores, work_dir):
    import tvm
    from tvm import meta_schedule as tms

    mod = tvm.script.from_source(src)
    target = tvm.target.Target(f"{tvm_target()} -num-cores={cores}")
    start = time.perf_counter()
    db = tms.tune_tir(mod, target, work_dir, max_trials_global=trials, num_trials_per_iter=per_iter)
    wall = time.perf_counter() - start
    sch = tms.tir_integration.compile_tir(db, mod, target)
    lib = tvm.compile(sch.mod, target=target)
    args = [tvm.nd.array(a) for a in _args(src, func, np.random.default_rng(0))]
    return _median_secs(lambda: lib[func](*args)), len(db.get_all_tuning_records()), wall


def tune_tvm_isolated(name, trials, per_iter, cores, work_dir):
    """tune_tvm in a fresh interpreter; None (with its error printed) when TVM is missing
    or the run failed."""
    cmd = [
        sys.executable,
        __file__,
        "--tvm-worker",
        name,
        "--trials",
        str(trials),
        "--per-iter",
        str(per_iter),
        "--work-dir",
        work_dir,
    ]
    proc = subprocess.run(
        cmd, capture_output=True, text=True, env={**os.environ, "TVM_NUM_THREADS": str(cores)}
    )
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    if proc.returncode != 0 or not lines:
        print(
            f"TVM run for {name} failed (exit {proc.returncode}): "
            f"{(proc.stderr or proc.stdout).strip()[-2000:]}",
            file=sys.stderr,
        )
        return None
    r = json.loads(lines[-1])
    return r["secs"], r["trials"], r["wall"]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--trials", type=int, default=256)
    p.add_argument("--per-iter", type=int, default=64)
    p.add_argument("--population", type=int, default=512)
    p.add_argument("--only", default=",".join(WORKLOADS))
    p.add_argument("--skip-tvm", action="store_true")
    p.add_argument("--tvm-worker", help=argparse.SUPPRESS)  # internal: one TVM run
    p.add_argument("--work-dir", help=argparse.SUPPRESS)
    a = p.parse_args()
    cores = os.cpu_count()
    os.environ.setdefault("TVM_NUM_THREADS", str(cores))
    if a.tvm_worker:
        make, func, _ = WORKLOADS[a.tvm_worker]
        secs, n, wall = tune_tvm(make(), func, a.trials, a.per_iter, cores, a.work_dir)
        print(json.dumps({"secs": secs, "trials": n, "wall": wall}))
        return
    print(
        f"trials {a.trials}, {a.per_iter} per round, {cores} cores, "
        f"load average {os.getloadavg()[0]:.2f}"
    )
    print(
        f"{'workload':12s} {'tuner':9s} {'GFLOP/s':>9s} {'ms':>9s} {'trials':>7s} "
        f"{'wall s':>8s}  reached TVM's result after"
    )
    for name in a.only.split(","):
        make, func, flops = WORKLOADS[name]
        src = make()
        with tempfile.TemporaryDirectory() as d:
            secs, n, wall, curve = tune_ours(
                src, func, a.trials, a.per_iter, a.population, cores, d + "/ours"
            )
            tvm_row = (
                None
                if a.skip_tvm
                else tune_tvm_isolated(name, a.trials, a.per_iter, cores, d + "/tvm")
            )
        when = ""
        if tvm_row is not None:
            t = reached(curve, tvm_row[0])
            when = "never" if t is None else f"{t:.1f} s ({t / tvm_row[2]:.2f} of TVM's wall)"
        for tuner, row, note in (("tir-mlir", (secs, n, wall), when), ("TVM 0.21", tvm_row, "")):
            if row is not None:
                print(
                    f"{name:12s} {tuner:9s} {flops / row[0] / 1e9:9.2f} {row[0] * 1e3:9.3f} "
                    f"{row[1]:7d} {row[2]:8.1f}  {note}",
                    flush=True,
                )
    print(f"load average at the end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
