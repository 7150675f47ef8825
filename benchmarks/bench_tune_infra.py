"""The tuner's measuring machinery: what it costs per candidate, how the database scales, and
the local runner next to the Dask runner on a local cluster.

    python benchmarks/bench_tune_infra.py [--records 100000] [--candidates 8] [--kills 0]

1. Per-candidate overhead of build + run + commit, in steady state (workers started): the
   round trip of the program text to a worker process (what the builder adds to the compile
   itself, which is shown as "build"), the runner's wall time beyond the time its timed calls
   need, and one SQLite commit. Target: overhead <=
   30% of the candidate's measured run time (repeat x max(min_repeat_ms, number x run time)) +
   50 ms.
2. SQLite database with --records records: open, len, query_best, get_top_k; the same records
   in TVM's two JSON files for comparison (opening parses every line).
3. The same tuning run (tune_tir, replay-trace, seeded) measured by LocalRunner and by
   DaskRunner on a LocalCluster of 2 one-thread workers (skipped without 'distributed').
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
from tir_mlir.meta_schedule.database import JSONDatabase, SQLiteDatabase, TuningRecord
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
    from tir_mlir.meta_schedule.process_pool import ProcessPool

    builder = LocalBuilder(max_workers=1)
    (warm,) = builder.build([BuilderInput(mod)])  # start the workers
    runner = LocalRunner(evaluator_config=CONFIG, reference=make_reference(mod))
    runner.run([RunnerInput(warm.artifact_path)])[0].result()
    pool = ProcessPool(1)
    pool.submit("builtins:len", ("",)).result()
    db = SQLiteDatabase(os.path.join(tmp, "overhead.sqlite"))
    w = db.commit_workload(mod)
    infos = ArgInfo.from_entry_func(mod)
    print(
        "1. per-candidate overhead (ms): the worker round trip of the program text, the "
        "runner's wall time beyond its timed calls, the commit"
    )
    print(
        f"{'candidate':>10} {'run ms':>8} {'build':>8} {'trip':>6} {'run wall':>9} "
        f"{'timed':>7} {'commit':>7} {'overhead':>9} {'target':>7}"
    )
    for k, sch in enumerate(schedules):
        text = sch.mod.mlir()
        t0 = time.perf_counter()
        (res,) = builder.build([BuilderInput(sch.mod)])
        t1 = time.perf_counter()
        (fut,) = runner.run([RunnerInput(res.artifact_path, "cpu", infos)])
        result = fut.result()
        t2 = time.perf_counter()
        db.commit_tuning_record(
            TuningRecord(sch.trace, w, result.run_secs, "llvm", infos, result.error_msg)
        )
        t3 = time.perf_counter()
        trip = min(_timed(lambda: pool.submit("builtins:len", (text,)).result()) for _ in range(5))
        run = min(result.run_secs)
        # what the runner must spend: warm-up, the check run, then the timed repeats
        timed = CONFIG.repeat * max(CONFIG.min_repeat_ms / 1e3, CONFIG.number * run) + 2 * run
        over = trip + (t2 - t1 - timed) + (t3 - t2)
        target = 0.3 * timed + 0.050
        print(
            f"{k:>10} {run * 1e3:8.3f} {(t1 - t0) * 1e3:8.1f} {trip * 1e3:6.1f} "
            f"{(t2 - t1) * 1e3:9.1f} {timed * 1e3:7.1f} {(t3 - t2) * 1e3:7.2f} "
            f"{over * 1e3:9.1f} {target * 1e3:7.1f}{'' if over <= target else '  (over)'}"
        )
    pool.shutdown()
    builder.shutdown()
    runner.shutdown()
    db.close()


def _timed(fn):
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def database_scale(mod, schedules, tmp, n):
    print(f"\n2. databases with {n} records")
    w_trace = [s.trace for s in schedules]
    key = canonical_target("llvm")
    infos = ArgInfo.from_entry_func(mod)
    path = os.path.join(tmp, "big.sqlite")
    db = SQLiteDatabase(path)
    w = db.commit_workload(mod)
    recs = [
        TuningRecord(
            w_trace[k % len(w_trace)], w, [1e-3 + (k * 7919 % n) * 1e-9], key, infos, timestamp=k
        )
        for k in range(n)
    ]
    t = time.perf_counter()
    for k in range(0, n, 1000):
        db.commit_tuning_records(recs[k : k + 1000])
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
    print(
        f"   SQLite: open {opened * 1e3:.1f} ms, len ({count}) {counted * 1e3:.1f} ms, "
        f"query_best {queried * 1e3:.1f} ms (incl. hashing the program), "
        f"get_top_k(10) {topk * 1e3:.1f} ms; best {best.run_secs[0]:.6f} s, {len(top)} top"
    )
    db.close()
    jpaths = os.path.join(tmp, "w.json"), os.path.join(tmp, "r.json")
    jdb = JSONDatabase(*jpaths)
    jdb.commit_workload(mod)
    from tir_mlir.meta_schedule.database.json_database import record_to_json

    with open(jpaths[1], "w") as f:  # written in one go, not line by line
        import json

        for r in recs:
            f.write(json.dumps([0, record_to_json(r)]) + "\n")
    t = time.perf_counter()
    jdb = JSONDatabase(*jpaths)
    opened = time.perf_counter() - t
    t = time.perf_counter()
    jdb.query_best(mod, "llvm")
    first = time.perf_counter() - t
    t = time.perf_counter()
    jdb.query_best(mod, "llvm")
    print(
        f"   JSON (TVM's format): open {opened:.2f} s ({len(jdb)} records), first query_best "
        f"{first:.2f} s (reads every run time), then {time.perf_counter() - t:.3f} s"
    )


def local_vs_dask(mod, trials):
    print(
        f"\n3. the same tuning run ({trials} trials, replay-trace, seed 0): LocalRunner vs "
        f"DaskRunner (LocalCluster, 2 workers x 1 thread)"
    )
    try:
        import distributed
    except ImportError:
        print("   skipped: the 'distributed' extra (dask) is not installed")
        return
    import tir_mlir.meta_schedule as ms
    from tir_mlir.meta_schedule.database import MemoryDatabase
    from tir_mlir.meta_schedule.runner import DaskRunner

    def tune(runner, tmp):
        db = MemoryDatabase()
        start = time.perf_counter()
        ms.tune_tir(
            mod,
            "llvm",
            tmp,
            max_trials_global=trials,
            num_trials_per_iter=8,
            strategy="replay-trace",
            cost_model="random",
            database=db,
            seed=0,
            runner=runner,
            builder=LocalBuilder(max_workers=2),
        )
        wall = time.perf_counter() - start
        recs = db.get_all_tuning_records()
        ok = [r.mean_sec for r in recs if r.is_valid]
        return wall, len(ok), len(recs), min(ok) if ok else float("nan")

    with tempfile.TemporaryDirectory() as tmp:
        rows = [("local",) + tune(LocalRunner(evaluator_config=CONFIG), tmp)]
        t = time.perf_counter()
        with (
            distributed.LocalCluster(
                n_workers=2, threads_per_worker=1, dashboard_address=None, silence_logs=40
            ) as cluster,
            distributed.Client(cluster) as client,
        ):
            started = time.perf_counter() - t
            rows.append(("dask",) + tune(DaskRunner(client, evaluator_config=CONFIG), tmp))
    for name, wall, ok, n, best in rows:
        print(f"   {name:>5}: {ok}/{n} valid, {wall:.1f} s, best {best * 1e3:.3f} ms")
    print(
        f"   (cluster start {started:.1f} s, not included; the dask workers share this "
        f"machine's cores with the builds and each other, so their timings interfere)"
    )


def kills(n, tmp):
    tests = Path(__file__).parent.parent / "tests"
    sys.path[:0] = [str(tests / "tuner"), str(tests / "support")]
    from test_ms_database import check_kill_survival

    t = time.perf_counter()
    total = check_kill_survival(Path(tmp) / "kill.sqlite", n, seed=1)
    print(
        f"\n4. kill -9 x {n}: every reported batch kept, none torn; {total} records "
        f"({time.perf_counter() - t:.1f} s)"
    )


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--records", type=int, default=100000)
    ap.add_argument("--candidates", type=int, default=6)
    ap.add_argument("--n", type=int, default=256, help="matmul size")
    ap.add_argument("--kills", type=int, default=0)
    ap.add_argument("--trials", type=int, default=16, help="trials of the tuning run (3.)")
    ap.add_argument("--sections", default="1,2,3", help="which of 1,2,3 to run")
    args = ap.parse_args()
    print(f"load average: {os.getloadavg()}")
    mod = tir_mlir.parse(matmul_tvmscript(args.n))
    schedules = candidates(mod, args.candidates)
    with tempfile.TemporaryDirectory() as tmp:
        sections = args.sections.split(",")
        if "1" in sections:
            overhead(mod, schedules, tmp)
        if "2" in sections:
            database_scale(mod, schedules, tmp, args.records)
        if "3" in sections:
            local_vs_dask(mod, args.trials)
        if args.kills:
            kills(args.kills, tmp)
    print(f"load average: {os.getloadavg()}")


if __name__ == "__main__":
    main()
