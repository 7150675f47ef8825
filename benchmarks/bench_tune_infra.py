"""The tuner's measuring machinery: what it costs per candidate, how the database scales, and
the local runner next to the Dask runner on a local cluster.

    python benchmarks/bench_tune_infra.py [--records 100000] [--candidates 8] [--kills 0]

1. Per-candidate overhead of build + run + commit, in steady state (workers started): the
   builder's wall time minus compiling the same candidate in this process, the runner's wall
   time minus the time spent in timed calls, and one SQLite commit. Target: overhead <=
   30% of the candidate's measured run time (repeat x max(min_repeat_ms, number x run time)) +
   50 ms.
2. SQLite database with --records records: open, len, query_best, get_top_k; the same records
   in TVM's two JSON files for comparison (opening parses every line).
3. The same candidates measured by LocalRunner and by DaskRunner on a LocalCluster of 2
   one-thread workers (skipped without the 'distributed' extra).
4. --kills N: kill -9 a writer N times at random points (tests run 20).
"""
import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import tir_mlir
from tir_mlir.meta_schedule.arg_info import ArgInfo
from tir_mlir.meta_schedule.builder import BuilderInput, LocalBuilder
from tir_mlir.meta_schedule.database import (JSONDatabase, SQLiteDatabase, TuningRecord)
from tir_mlir.meta_schedule.runner import EvaluatorConfig, LocalRunner, RunnerInput, make_reference
from tir_mlir.meta_schedule.target_key import canonical_target

sys.path.insert(0, str(Path(__file__).parent))
from programs import matmul_tvmscript  # noqa: E402

CONFIG = EvaluatorConfig(number=3, repeat=1, min_repeat_ms=40)


def candidates(mod, n):
    """`n` different schedules of a matmul: tile sizes of j and k."""
    out = []
    for factor in [2, 4, 8, 16, 32, 64, 128, 256][:n]:
        sch = tir_mlir.Schedule(mod)
        i, j, k = sch.get_loops(sch.get_block("C"))
        j0, j1 = sch.split(j, factors=[None, factor])
        sch.reorder(i, j0, k, j1)
        out.append(sch)
    return out


def overhead(mod, schedules, tmp):
    from tir_mlir.runtime.build import build
    builder = LocalBuilder(max_workers=1)
    (warm,) = builder.build([BuilderInput(mod)])          # start the workers
    runner = LocalRunner(evaluator_config=CONFIG, reference=make_reference(mod))
    runner.run([RunnerInput(warm.artifact_path)])[0].result()
    db = SQLiteDatabase(os.path.join(tmp, "overhead.sqlite"))
    w = db.commit_workload(mod)
    infos = ArgInfo.from_entry_func(mod)
    print("1. per-candidate overhead (ms)")
    print(f"{'candidate':>10} {'run ms':>8} {'build':>8} {'compile':>8} {'run wall':>9} "
          f"{'timed':>7} {'commit':>7} {'overhead':>9} {'target':>7}")
    for k, sch in enumerate(schedules):
        t0 = time.perf_counter()
        (res,) = builder.build([BuilderInput(sch.mod)])
        t1 = time.perf_counter()
        (fut,) = runner.run([RunnerInput(res.artifact_path, "cpu", infos)])
        result = fut.result()
        t2 = time.perf_counter()
        db.commit_tuning_record(TuningRecord(sch.trace, w, result.run_secs, "llvm", infos,
                                             result.error_msg))
        t3 = time.perf_counter()
        start = time.perf_counter()                      # the compile itself, in-process
        build(sch.mod, "llvm").export_library(os.path.join(tmp, f"direct{k}.so"))
        compile_s = time.perf_counter() - start
        run = min(result.run_secs)
        timed = CONFIG.repeat * max(CONFIG.min_repeat_ms / 1e3, CONFIG.number * run) + 2 * run
        over = (t1 - t0 - compile_s) + (t2 - t1 - timed) + (t3 - t2)
        target = 0.3 * timed + 0.050
        print(f"{k:>10} {run * 1e3:8.3f} {(t1 - t0) * 1e3:8.1f} {compile_s * 1e3:8.1f} "
              f"{(t2 - t1) * 1e3:9.1f} {timed * 1e3:7.1f} {(t3 - t2) * 1e3:7.2f} "
              f"{over * 1e3:9.1f} {target * 1e3:7.1f}{'' if over <= target else '  (over)'}")
    builder.shutdown()
    runner.shutdown()
    db.close()


def database_scale(mod, schedules, tmp, n):
    print(f"\n2. databases with {n} records")
    w_trace = [s.trace for s in schedules]
    key = canonical_target("llvm")
    infos = ArgInfo.from_entry_func(mod)
    path = os.path.join(tmp, "big.sqlite")
    db = SQLiteDatabase(path)
    w = db.commit_workload(mod)
    recs = [TuningRecord(w_trace[k % len(w_trace)], w, [1e-3 + (k * 7919 % n) * 1e-9], key,
                         infos, timestamp=k) for k in range(n)]
    t = time.perf_counter()
    for k in range(0, n, 1000):
        db.commit_tuning_records(recs[k:k + 1000])
    print(f"   SQLite: commit {n} records in batches of 1000: {time.perf_counter() - t:.2f} s")
    db.close()
    t = time.perf_counter()
    db = SQLiteDatabase(path)
    opened = time.perf_counter() - t
    t = time.perf_counter()
    count = len(db)
    counted = time.perf_counter() - t
    t = time.perf_counter()
    best = db.query_best(mod, "llvm")
    queried = time.perf_counter() - t
    t = time.perf_counter()
    top = db.get_top_k(w, 10, key)
    topk = time.perf_counter() - t
    print(f"   SQLite: open {opened * 1e3:.1f} ms, len ({count}) {counted * 1e3:.1f} ms, "
          f"query_best {queried * 1e3:.1f} ms (incl. hashing the program), "
          f"get_top_k(10) {topk * 1e3:.1f} ms; best {best.run_secs[0]:.6f} s, {len(top)} top")
    db.close()
    jpaths = os.path.join(tmp, "w.json"), os.path.join(tmp, "r.json")
    jdb = JSONDatabase(*jpaths)
    jdb.commit_workload(mod)
    from tir_mlir.meta_schedule.database.json_database import _record_to_json
    with open(jpaths[1], "w") as f:                     # written in one go, not line by line
        import json
        for r in recs:
            f.write(json.dumps([0, _record_to_json(r)]) + "\n")
    t = time.perf_counter()
    jdb = JSONDatabase(*jpaths)
    print(f"   JSON (TVM's format): open {time.perf_counter() - t:.2f} s ({len(jdb)} records)")


def local_vs_dask(mod, schedules):
    print("\n3. the same candidates: LocalRunner vs DaskRunner (LocalCluster, 2 workers x 1 thread)")
    try:
        import distributed
    except ImportError:
        print("   skipped: the 'distributed' extra (dask) is not installed")
        return
    from tir_mlir.meta_schedule.runner import DaskRunner
    built = LocalBuilder(max_workers=2).build([BuilderInput(s.mod) for s in schedules])
    ref = make_reference(mod)
    inputs = [RunnerInput(b.artifact_path, "cpu", None, ref) for b in built]
    local = LocalRunner(evaluator_config=CONFIG)
    local.run(inputs[:1])[0].result()                    # start the worker
    t = time.perf_counter()
    lres = [f.result() for f in local.run(inputs)]
    lwall = time.perf_counter() - t
    local.shutdown()
    t = time.perf_counter()
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=None,
                                  silence_logs=40) as cluster, distributed.Client(cluster) as c:
        started = time.perf_counter() - t
        runner = DaskRunner(c, evaluator_config=CONFIG)
        runner.run(inputs[:2])[0].result()
        t = time.perf_counter()
        dres = [f.result() for f in runner.run(inputs)]
        dwall = time.perf_counter() - t
    for name, res, wall in (("local", lres, lwall), ("dask", dres, dwall)):
        ok = [min(r.run_secs) for r in res if r.run_secs]
        print(f"   {name:>5}: {len(ok)}/{len(res)} measured in {wall:.2f} s, "
              f"best {min(ok) * 1e3:.3f} ms")
    print(f"   (cluster start {started:.1f} s; the two dask workers share this machine's cores, "
          f"so their timings interfere)")


def kills(n, tmp):
    sys.path.insert(0, str(Path(__file__).parent.parent / "tests"))
    from test_ms_database import check_kill_survival
    t = time.perf_counter()
    total = check_kill_survival(Path(tmp) / "kill.sqlite", n, seed=1)
    print(f"\n4. kill -9 x {n}: every reported batch kept, none torn; {total} records "
          f"({time.perf_counter() - t:.1f} s)")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--records", type=int, default=100000)
    ap.add_argument("--candidates", type=int, default=6)
    ap.add_argument("--n", type=int, default=256, help="matmul size")
    ap.add_argument("--kills", type=int, default=0)
    args = ap.parse_args()
    print(f"load average: {os.getloadavg()}")
    mod = tir_mlir.parse(matmul_tvmscript(args.n))
    schedules = candidates(mod, args.candidates)
    with tempfile.TemporaryDirectory() as tmp:
        overhead(mod, schedules, tmp)
        database_scale(mod, schedules, tmp, args.records)
        local_vs_dask(mod, schedules)
        if args.kills:
            kills(args.kills, tmp)
    print(f"load average: {os.getloadavg()}")


if __name__ == "__main__":
    main()
