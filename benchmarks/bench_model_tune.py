"""Whole models tuned end to end: the recorded torch-mlir models (tests/data/linalg/*.mlir)
imported with `tir_mlir.from_linalg` and tuned as `tir-mlir tune model.mlir` does
(`meta_schedule.tune_model`: a task per distinct function, the gradient task scheduler, one
database), with a budget of `--trials-per-task` candidates per task, beside TVM 0.21's Relax
pipeline tuned by its MetaSchedule at the same budget per task:

    python benchmarks/bench_model_tune.py [--trials-per-task 64] [--only mlp,attention]
        [--threads 2] [--rounds 3] [--work DIR]

Columns (microseconds per call, calls from Python): the imported model unscheduled, tuned
(the database's best schedule of every function, `compile_tir`), torch eager, TVM (the same
PyTorch module, weights and inputs through `torch.export` and
`relax.frontend.torch.from_exported_program`, tuned as `static_shape_tuning_pipeline` does
with `max_trials_per_task` = the budget, built for `llvm -mcpu=<host> -num-cores=<threads>`,
run by Relax's VM: benchmarks/tvm_relax_model.py), then both tuners' task counts and tuning
wall times in seconds. Every result is checked against torch's recorded outputs before it is
timed; a column that cannot run says why below the table. torch and TVM run in child
processes (TVM's LLVM cannot share a process with tir_mlir's MLIR bindings, and tir-mlir's
idle OpenMP threads would spin on their cores), TVM_NUM_THREADS = `--threads` for tir-mlir
and TVM. Everything is tuned first; then `--rounds` interleaved rounds time every column, and
each reports its best (minimum) over the rounds. `--work DIR` keeps both tuners' results
(tir-mlir's databases in DIR/tir/NAME, TVM's libraries in DIR/tvm) and reuses them on the
next run instead of tuning again. resnet_block is a ResNet basic block ((conv 3x3 -> batch
norm -> ReLU) x 2 with the residual add). The recorded models import into tir-mlir as one
function each (one task); Relax splits them into its fused operators (several tasks).
"""

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

from bench_bridge import (
    DATA,
    child_results,
    fmt,
    header,
    imported,
    keep_faster,
    load,
    others,
    tir_timer,
)

MODELS = ("mlp", "layernorm", "conv_relu", "attention", "resnet_block")
HERE = Path(__file__).resolve().parent


def tune(name, mod, trials_per_task, threads, work: Path):
    """(the tuned module or None, tuning wall seconds, tasks); reuses work's database."""
    import tir_mlir.meta_schedule as ms
    from tir_mlir.meta_schedule.database import SQLiteDatabase
    from tir_mlir.meta_schedule.tune_model import tune_model

    target = f"llvm -num-cores={threads}"
    tasks = ms.extract_tasks(mod, target)
    done = work / "wall.json"
    if not done.exists():
        start = time.perf_counter()
        tune_model(
            DATA / f"{name}.mlir",
            mod,
            target,
            trials_per_task * len(tasks),
            work,
            seed=0,
            trials_per_iter=min(64, trials_per_task),
            echo=lambda line: print(line, file=sys.stderr),
        )
        done.write_text(json.dumps(time.perf_counter() - start))
    db = SQLiteDatabase(str(work / "database.sqlite"))
    sch = ms.tir_integration.compile_tir(db, mod, target)
    db.close()
    return (None if sch is None else sch.mod), json.loads(done.read_text()), len(tasks)


def tvm(mode, names, work: Path, trials_per_task, threads) -> dict:
    """Run tvm_relax_model.py in a child process: name -> its result or why it failed."""
    args = [HERE / "tvm_relax_model.py", mode, work, "--only", ",".join(names)]
    args += ["--trials-per-task", trials_per_task, "--threads", threads]
    return child_results(f"tvm {mode}", names, [str(x) for x in args])


def tvm_tuned(names, work: Path, trials_per_task, threads) -> dict:
    """name -> {"tasks", "tune_s", ...} or why TVM could not build it; tunes what work lacks."""
    todo = [n for n in names if not (work / f"{n}.json").exists()]
    fresh = tvm("tune", todo, work, trials_per_task, threads) if todo else {}
    return {
        n: json.loads((work / f"{n}.json").read_text())
        if (work / f"{n}.json").exists()
        else fresh.get(n, "not tuned")
        for n in names
    }


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--only", default=",".join(MODELS), help="models, comma-separated")
    p.add_argument("--trials-per-task", type=int, default=64)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--rounds", type=int, default=3, help="interleaved timing rounds")
    p.add_argument("--work", type=Path, help="keep (and reuse) both tuners' results here")
    a = p.parse_args()
    names = a.only.split(",")
    started = header()
    os.environ["TVM_NUM_THREADS"] = str(a.threads)
    temp = None
    if a.work is None:
        temp = tempfile.TemporaryDirectory()
        a.work = Path(temp.name)
    (a.work / "tvm").mkdir(parents=True, exist_ok=True)
    rows = {name: {} for name in names}
    timers, notes = {}, []
    for name in names:
        mod, inputs, expected = imported(name)
        timers[name, "import"] = tir_timer(mod, inputs, expected, f"{name} imported")
        best, wall, tasks = tune(name, mod, a.trials_per_task, a.threads, a.work / "tir" / name)
        rows[name].update(tasks=tasks, tune_s=wall)
        if best is not None:
            timers[name, "tuned"] = tir_timer(best, inputs, expected, f"{name} tuned")
    for name, r in tvm_tuned(names, a.work / "tvm", a.trials_per_task, a.threads).items():
        if isinstance(r, dict):
            rows[name].update(tvm_tasks=r["tasks"], tvm_tune_s=r["tune_s"])
        else:
            rows[name]["tvm"] = r
    built = [n for n in names if "tvm_tasks" in rows[n]]
    for _ in range(a.rounds):
        for kind, results in (
            ("torch", others("torch", names, a.threads)),
            ("tvm", tvm("time", built, a.work / "tvm", 0, a.threads) if built else {}),
        ):
            for name, t in results.items():
                keep_faster(rows[name], kind, t)
        for (name, kind), timer in timers.items():
            rows[name][kind] = min(rows[name].get(kind, float("inf")), timer())
    notes += [
        f"{name}: {c}: {t}"
        for name, row in rows.items()
        for c, t in row.items()
        if isinstance(t, str)
    ]
    print(f"{started} -> {load()}")
    print(
        f"{a.threads} threads, {a.trials_per_task} trials per task, best of {a.rounds} "
        f"interleaved rounds; microseconds per call, tuning wall time in seconds"
    )
    print(
        f"{'model':<13}{'import':>10}{'tuned':>10}{'torch':>10}{'tvm':>10}"
        f"{'tasks':>6}{'tune s':>8}{'tvm tasks':>10}{'tvm tune s':>11}"
    )
    for name in names:
        r = rows[name]
        print(
            f"{name:<13}"
            + "".join(fmt(r.get(c)) for c in ("import", "tuned", "torch", "tvm"))
            + f"{r['tasks']:>6}{r['tune_s']:8.0f}{r.get('tvm_tasks', '-'):>10}"
            + (f"{r['tvm_tune_s']:11.0f}" if "tvm_tune_s" in r else f"{'-':>11}")
        )
    for n in notes:
        print(n)
    if temp is not None:
        temp.cleanup()


if __name__ == "__main__":
    main()
