"""Tuned kernels against the vendor libraries (issue 28's last bullet): the 1024 float32
matmul against numpy (OpenBLAS) and torch's `a @ b` (MKL/oneDNN), the ResNet 3x3 conv2d
(1x64x56x56, 64 filters, padding 1) against torch's `conv2d`, all with the same thread count:

    python benchmarks/bench_vendor.py --work-dir DIR [--trials 256] [--threads 2]
                                      [--only matmul1024,conv2d] [--rounds 40] [--cpu-time]

Each workload is tuned by `ms.tune_tir` into DIR/<workload> unless that database already
holds --trials records (so a re-measure does not re-tune). The best schedule's times in the
database (the tuner's measurements of it) are printed, then it is compiled,
checked against numpy, then every side is timed in this process, interleaved: each round
times ours, numpy's and torch's call once each (the mean of as many calls as fill
--min-ms); the best round of each is printed with the ratios ours/numpy and ours/torch and
the load average before and after. Before each side's turn the process waits until no
thread of it burns CPU: after a call the thread pools spin-wait for the next one (libomp's
workers for KMP_BLOCKTIME, 200 ms; OpenBLAS's ~150 ms; torch's not, measured here), and a side
timed while another's pool spins shares the cores with it (2 threads, quiet: the tuned matmul
timed right after numpy and torch ran 11.0 ms, 7.6 in the tuner's runner). `--cpu-time` (for
a loaded machine, where wall times are noise): one thread each, timed by the calling thread's
CPU time (every side then runs in it).

The matmul also times "space point": the default design space's tile that ran closest to the
libraries by hand (8 x 32 register tiles over all 1024 steps of k, 512 x 128 blocks of C, the
1024 x 128 B block packed once per block by `pack-panels`; tests/tuner/test_ms_space_packed.py
holds its shape), so the table tells a search that missed it from a space that lacks speed. So
does the conv2d: its "space point" is the tile of whole 56-lane rows under 4 filters
(CONV2D_POINT, replayed from the default design space; tests/tuner/test_ms_space_conv_rows.py
holds its shape). A markdown table of every workload ends the output.
"""

import argparse
import os
import sys
import time
from pathlib import Path


def _threads_first():
    """Every side gets the same threads (ours: OpenMP, numpy: OpenBLAS, torch: its pool); the
    BLAS libraries read them when loaded, so before numpy is imported."""
    p = argparse.ArgumentParser(add_help=False)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--cpu-time", action="store_true")
    a, _ = p.parse_known_args()
    n = 1 if a.cpu_time else a.threads
    for var in ("TVM_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = str(n)
    return n


THREADS = _threads_first()

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent))
from programs import conv2d_tvmscript, matmul_tvmscript  # noqa: E402

WORKLOADS = {
    "matmul1024": (lambda: matmul_tvmscript(1024), "matmul", 2 * 1024**3),
    "conv2d": (lambda: conv2d_tvmscript(1, 64, 56, 64, 3), "conv2d", 2 * 64 * 56 * 56 * 64 * 9),
}


def tuned_module(name, work_dir, trials, threads):
    """The best tuned schedule of `name` from DIR/<name>'s database, tuning first when it
    holds fewer than `trials` records."""
    import tir_mlir
    import tir_mlir.meta_schedule as ms

    make, _, _ = WORKLOADS[name]
    mod = tir_mlir.parse(make())
    target = f"llvm -num-cores={threads}"
    wdir = os.path.join(work_dir, name)
    records = os.path.join(wdir, "database_tuning_record.json")
    have = sum(1 for _ in open(records)) if os.path.exists(records) else 0
    if have < trials:
        start = time.perf_counter()
        ms.tune_tir(mod, target, wdir, max_trials_global=trials, seed=0)
        print(f"{name}: tuned {trials} trials in {time.perf_counter() - start:.0f} s", flush=True)
    db = ms.database.JSONDatabase(
        os.path.join(wdir, "database_workload.json"), records, allow_missing=False
    )
    sch = ms.tir_integration.compile_tir(db, mod, target)
    if sch is None:
        sys.exit(
            f"{wdir}: no record for {target!r} (tuned for another --threads?): use another --work-dir"
        )
    best = db.query_best(mod, target)
    if best is not None and best.run_secs:  # (to compare with the re-timing below)
        secs = ", ".join(f"{s * 1e3:.3f}" for s in best.run_secs)
        print(f"{name}: the tuner measured its pick at {secs} ms", flush=True)
    return mod, sch.mod


def space_point(sch):
    """The 1024 matmul as MultiLevelTiling's SSRSRS sketch samples it with i 2x1x64x8,
    j 1x8x4x32, k 1x1024 and no write cache, after the postprocessors (parallel, vectorize,
    decompose_reduction)."""
    b = sch.get_block("C", func_name="matmul")
    i, j, k = sch.get_loops(b)
    i0, i1, i2, i3 = sch.split(i, factors=[2, 1, 64, 8])
    j0, j1, j2, j3 = sch.split(j, factors=[1, 8, 4, 32])
    k0, k1 = sch.split(k, factors=[1, 1024])
    sch.reorder(i0, j0, i1, j1, k0, i2, j2, k1, i3, j3)
    sch.parallel(sch.fuse(i0, j0, i1, j1))
    sch.vectorize(j3)
    sch.decompose_reduction(b, k0)


# The conv2d's tile in the default design space that ran at torch's speed (1 thread): n 1x1x1x1,
# f 1x4x4x4, y 28x1x2x1, x 1x1x1x56 (a whole row, 56 lanes, under 4 filters: 16 vector
# registers), rc 4x16, ry and rx 1x3; unroll 64; pad computed at its 5th location (under the
# loops fused into the parallel one)
CONV2D_POINT = [[1, 1, 1, 1], [1, 4, 4, 4], [28, 1, 2, 1], [1, 1, 1, 56], [4, 16], [1, 3], [1, 3]]
CONV2D_POINT += [2, 5]


def settle(max_secs=2.0, window=0.02, quiet_windows=3):
    """Wait until the other threads of this process are idle: `quiet_windows` windows of
    `window` seconds in a row in which the process burns less than a tenth of the window in CPU
    while the caller sleeps (one is not enough on a loaded machine, where a spinning thread may
    not be scheduled for a window), or `max_secs`."""
    end, quiet = time.perf_counter() + max_secs, 0
    while quiet < quiet_windows and time.perf_counter() < end:
        start = time.process_time()
        time.sleep(window)
        quiet = quiet + 1 if time.process_time() - start < window / 10 else 0


def _mean_secs(fn, min_ms, clock=time.perf_counter):
    n, start = 0, clock()
    while n == 0 or (clock() - start) * 1e3 < min_ms:
        fn()
        n += 1
    return (clock() - start) / n


def contenders(name, mod, tuned, target):
    """{side: no-argument callable}, each checked against numpy first."""
    import torch

    import tir_mlir
    from tir_mlir.meta_schedule.space_point import replay_space_point
    from tir_mlir.runtime import aligned

    rng = np.random.default_rng(0)
    fn = WORKLOADS[name][1]
    lib = tir_mlir.build(tuned)[fn]
    if name == "matmul1024":
        a, b = (aligned.copy(rng.uniform(-1, 1, (1024, 1024)).astype("float32")) for _ in "ab")
        c = aligned.copy(np.zeros((1024, 1024), "float32"))
        lib(a, b, c)
        np.testing.assert_allclose(c, a @ b, rtol=1e-3, atol=1e-3)
        ta, tb, tc = torch.from_numpy(a), torch.from_numpy(b), torch.empty(1024, 1024)
        nc = np.empty_like(c)
        sch = tir_mlir.Schedule(mod)
        space_point(sch)
        point = tir_mlir.build(sch.mod)[fn]
        pc = aligned.copy(np.zeros((1024, 1024), "float32"))
        point(a, b, pc)
        np.testing.assert_allclose(pc, a @ b, rtol=1e-3, atol=1e-3)
        return {
            "tir-mlir": lib.prepare(a, b, c),
            "space point": point.prepare(a, b, pc),
            "numpy": lambda: np.matmul(a, b, out=nc),
            "torch": lambda: torch.matmul(ta, tb, out=tc),
        }
    x = aligned.copy(rng.uniform(-1, 1, (1, 64, 56, 56)).astype("float32"))
    w = aligned.copy(rng.uniform(-1, 1, (64, 64, 3, 3)).astype("float32"))
    out = aligned.copy(np.zeros((1, 64, 56, 56), "float32"))
    lib(x, w, out)
    tx, tw = torch.from_numpy(x), torch.from_numpy(w)
    conv = torch.nn.functional.conv2d
    with torch.no_grad():
        want = conv(tx, tw, padding=1).numpy()
    np.testing.assert_allclose(out, want, rtol=1e-3, atol=1e-3)
    point = tir_mlir.build(replay_space_point(mod, target, CONV2D_POINT).mod)[fn]
    pout = aligned.copy(np.zeros((1, 64, 56, 56), "float32"))
    point(x, w, pout)
    np.testing.assert_allclose(pout, want, rtol=1e-3, atol=1e-3)

    def torch_conv():
        with torch.no_grad():
            conv(tx, tw, padding=1)

    return {
        "tir-mlir": lib.prepare(x, w, out),
        "space point": point.prepare(x, w, pout),
        "torch": torch_conv,
    }


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--work-dir", required=True)
    p.add_argument("--trials", type=int, default=256)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--only", default=",".join(WORKLOADS))
    p.add_argument("--rounds", type=int, default=40)
    p.add_argument("--min-ms", type=float, default=50.0)
    p.add_argument("--cpu-time", action="store_true")
    a = p.parse_args()
    import torch

    torch.set_num_threads(THREADS)
    clock = time.thread_time if a.cpu_time else time.perf_counter
    table = []
    for name in a.only.split(","):
        mod, tuned = tuned_module(name, a.work_dir, a.trials, a.threads)
        sides = contenders(name, mod, tuned, f"llvm -num-cores={a.threads}")
        load0 = os.getloadavg()[0]
        best = {s: float("inf") for s in sides}
        for _ in range(a.rounds):
            for s, call in sides.items():
                settle()
                best[s] = min(best[s], _mean_secs(call, a.min_ms, clock))
        load1 = os.getloadavg()[0]
        flops = WORKLOADS[name][2]
        how = "1 thread, CPU time" if a.cpu_time else f"{THREADS} threads, wall time"
        print(
            f"{name} (tuned for {a.threads} cores; {how}; {a.rounds} rounds; load {load0:.2f} -> {load1:.2f})"
        )
        for s, secs in best.items():
            ratio = "" if s == "tir-mlir" else f"  ours/{s} {best['tir-mlir'] / secs:.3f}"
            print(f"  {s:11s} {secs * 1e3:8.3f} ms {flops / secs / 1e9:7.1f} GFLOP/s{ratio}")
        sys.stdout.flush()
        table.append((name, best))
    _print_table(table, a)


def _print_table(table, a):
    """Every workload's times and our ratios to each library, as a markdown table."""
    how = "1 thread, CPU time" if a.cpu_time else f"{THREADS} threads, wall time"
    print(f"\n| {a.trials} trials, {how} | ms | x numpy | x torch |\n| --- | --- | --- | --- |")
    for name, best in table:
        libs = [s for s in ("numpy", "torch") if s in best]
        for s, secs in best.items():
            cells = [f"{secs / best[lib]:.3f}" if lib in libs else "" for lib in ("numpy", "torch")]
            print(f"| {name} {s} | {secs * 1e3:.2f} | {' | '.join(cells)} |")


if __name__ == "__main__":
    main()
