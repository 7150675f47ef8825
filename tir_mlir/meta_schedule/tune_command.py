"""`tir-mlir tune`: tune one function of a program, with a durable database in the work
directory, a progress display, resuming, and the best schedule written as a script.

Work directory:
    database.sqlite      every measured candidate (SQLiteDatabase)
    reference.npz        the unscheduled program's inputs and outputs (candidates must match)
    best_schedule.py     the fastest valid record as `def schedule(sch)`
    tuning_curve.png     best GFLOP/s over trials and wall time (with matplotlib)
"""
import os
import time
from pathlib import Path
from typing import Callable, Optional

from tir_mlir.errors import TIRError


def single_function(mod, func_name):
    """A copy of `mod` holding only `func_name` (the tuner tunes one function)."""
    if list(mod) == [func_name]:
        return mod
    copy = mod.copy()
    for name, op in copy.functions.items():
        if name != func_name:
            op.erase()
    return copy


def make_runner(kind: str, address: Optional[str], reference: Optional[str], timeout_sec):
    from tir_mlir.meta_schedule.runner import LocalRunner
    if kind == "local":
        return LocalRunner(timeout_sec=timeout_sec, reference=reference)
    from tir_mlir.meta_schedule.runner.dask_runner import DaskRunner
    if address is None:
        raise TIRError("--runner dask needs the scheduler's address (--address tcp://HOST:8786)")
    return DaskRunner(address, timeout_sec=timeout_sec, reference=reference)


def tune(path, mod, target: str, trials: int, work_dir, func_name: Optional[str] = None,
         resume: bool = False, runner: str = "local", address: Optional[str] = None,
         check: bool = True, timeout_sec: float = 30.0, seed: Optional[int] = None,
         strategy: str = "evolutionary", trials_per_iter: int = 64,
         echo: Callable[[str], None] = print):
    """Run the tuner on `mod` (read from `path`); returns the best record (or None). On
    Ctrl-C it stops the workers, reports what was measured and exits with status 130."""
    from tir_mlir.meta_schedule import tune_tir
    from tir_mlir.meta_schedule.arg_info import entry_func_name
    from tir_mlir.meta_schedule.builder import LocalBuilder
    from tir_mlir.meta_schedule.database import SQLiteDatabase
    from tir_mlir.meta_schedule.runner import make_reference
    from tir_mlir.meta_schedule.runner.reference import is_reference
    from tir_mlir.meta_schedule.target_key import canonical_target
    from tir_mlir.meta_schedule.tune_progress import Progress, ProgressDatabase
    from tir_mlir.runtime.run_program import flop_count
    try:
        func_name = entry_func_name(mod, func_name)
    except KeyError as e:
        raise TIRError(str(e.args[0])) from None
    mod = single_function(mod, func_name)
    work_dir = Path(work_dir)
    work_dir.mkdir(parents=True, exist_ok=True)
    db_path = work_dir / "database.sqlite"
    if db_path.exists() and not resume:
        raise TIRError(f"{work_dir} already holds a tuning database: pass --resume to continue "
                       f"it, or choose another --work-dir")
    database = SQLiteDatabase(db_path)
    workload = database.commit_workload(mod)
    key = canonical_target(target)
    done = [r for r in database.get_all_tuning_records()
            if r.workload == workload and r.target == key]
    valid = [r.mean_sec for r in done if r.is_valid]
    flops = flop_count(mod.module, func_name)
    if done:
        echo(f"resuming: {len(done)} trials in {db_path} ({len(valid)} valid)")
    reference = None
    if check:
        reference = str(work_dir / "reference.npz")
        if not is_reference(reference):
            make_reference(mod, reference, func_name)
    builder = LocalBuilder(timeout_sec=timeout_sec)
    measure = make_runner(runner, address, reference, timeout_sec)
    progress = Progress(trials, flops, len(done), min(valid) if valid else None)
    # the curve's time axis: from this session's start, or from the first stored record
    start = min([time.time()] + [r.timestamp for r in done])
    interrupted = False
    try:
        remaining = trials - len(done)
        if remaining > 0:
            tune_tir(mod, target, str(work_dir), max_trials_global=remaining,
                     num_trials_per_iter=min(trials_per_iter, remaining), builder=builder,
                     runner=measure, database=ProgressDatabase(database, progress),
                     strategy=strategy, seed=seed, check_correctness=check)
    except KeyboardInterrupt:
        interrupted = True
    finally:
        progress.close()
        builder.shutdown(kill=interrupted)
        measure.shutdown(kill=interrupted)
    best = database.query_best(mod, target)
    if interrupted:
        echo(f"interrupted: {len(database)} measured candidates kept in {db_path}; "
             f"--resume continues")
    _report(work_dir, database, workload, key, best, path, func_name, flops, start, echo)
    database.close()
    if interrupted:
        raise SystemExit(130)       # the shell's status for Ctrl-C, after a clean stop
    return best


def _report(work_dir, database, workload, key, best, path, func_name, flops, start, echo):
    from tir_mlir.meta_schedule.tune_report import plot_curve, write_best_schedule
    records = [r for r in database.get_all_tuning_records()
               if r.workload == workload and r.target == key]
    failed = sum(not r.is_valid for r in records)
    if best is None:
        echo(f"no valid candidate among {len(records)} trials ({failed} failed)")
        return
    write_best_schedule(work_dir / "best_schedule.py", best, path, func_name, flops)
    speed = f"{best.mean_sec * 1e3:.4f} ms"
    if flops:
        speed += f" ({flops / best.mean_sec / 1e9:.2f} GFLOP/s)"
    echo(f"best: {speed} after {len(records)} trials ({failed} failed); "
         f"schedule: {work_dir / 'best_schedule.py'}")
    note = plot_curve(work_dir / "tuning_curve.png", records, flops, start)
    echo(note or f"tuning curve: {work_dir / 'tuning_curve.png'}")
