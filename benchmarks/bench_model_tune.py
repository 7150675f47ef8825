"""Whole models tuned end to end: the recorded torch-mlir models (tests/data/linalg/*.mlir)
imported with `tir_mlir.from_linalg` and tuned as `tir-mlir tune model.mlir` does
(`meta_schedule.tune_model`: a task per distinct function, the gradient task scheduler, one
database), with a budget of `--trials-per-task` candidates per task:

    python benchmarks/bench_model_tune.py [--trials-per-task 64] [--only mlp,attention] [--threads 2]

Columns (microseconds): the imported model unscheduled, tuned (the database's best schedule
of every function, `compile_tir`), torch eager (2 threads, in a child process; the column says
why when torch is missing), and the tuning wall time in seconds. Every tir-mlir result is
checked against torch's recorded outputs before it is timed. resnet_block is a ResNet basic
block ((conv 3x3 -> batch norm -> ReLU) x 2 with the residual add). The recorded models import
as one function each, so each is one task.
"""
import argparse
import sys
import tempfile
import time
from pathlib import Path

from bench_bridge import DATA, fmt, load, others, time_tir

MODELS = ("mlp", "layernorm", "conv_relu", "attention", "resnet_block")


def tune(name, mod, trials_per_task, threads):
    """(the tuned module or None, tuning wall seconds, tasks)."""
    import tir_mlir.meta_schedule as ms
    from tir_mlir.meta_schedule.database import SQLiteDatabase
    from tir_mlir.meta_schedule.tune_model import tune_model
    target = f"llvm -num-cores={threads}"
    tasks = ms.extract_tasks(mod, target)
    with tempfile.TemporaryDirectory() as work:
        start = time.perf_counter()
        tune_model(DATA / f"{name}.mlir", mod, target, trials_per_task * len(tasks), work,
                   seed=0, trials_per_iter=min(64, trials_per_task),
                   echo=lambda line: print(line, file=sys.stderr))
        wall = time.perf_counter() - start
        db = SQLiteDatabase(Path(work) / "database.sqlite")
        sch = ms.tir_integration.compile_tir(db, mod, target)
        db.close()
    return (None if sch is None else sch.mod), wall, len(tasks)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--only", default=",".join(MODELS), help="models, comma-separated")
    p.add_argument("--trials-per-task", type=int, default=64)
    p.add_argument("--threads", type=int, default=2)
    a = p.parse_args()
    import tir_mlir
    names = a.only.split(",")
    torch_times = others("torch", names, a.threads)
    print(f"{'model':<12} {'tasks':>5} {'import us':>10} {'tuned us':>10} {'torch us':>10} "
          f"{'tune s':>8}")
    notes = []
    for name in names:
        text, inputs, expected, _ = load(name)
        mod = tir_mlir.from_linalg(text, str(DATA / f"{name}.mlir"))
        plain = time_tir(mod, inputs, expected, f"{name} imported")
        best, wall, tasks = tune(name, mod, a.trials_per_task, a.threads)
        fast = None if best is None else time_tir(best, inputs, expected, f"{name} tuned")
        torch_t = torch_times.get(name)
        if not isinstance(torch_t, float):
            notes.append(f"{name}: torch: {torch_t}")
        print(f"{name:<12} {tasks:>5} {fmt(plain)} {fmt(fast)} {fmt(torch_t)} {wall:8.1f}",
              flush=True)
    for note in notes:
        print(note)


if __name__ == "__main__":
    main()
