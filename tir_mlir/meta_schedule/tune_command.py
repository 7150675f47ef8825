"""`tir-mlir tune`: tune one function of a program, with a durable database in the work
directory, a progress display, resuming, and the best schedule written as a script.

Work directory:
    database.sqlite      every measured candidate (SQLiteDatabase)
    reference.npz        the unscheduled program's inputs and outputs (candidates must match)
    reference_n128.npz   with --sizes (a symbolic function): one such file per size
                         and its time (the curve's baseline)
    best_schedule.py     the fastest valid record as `def schedule(sch)`
    tuning_curve.png     every trial and the best so far, over trials and wall time
                         (with matplotlib)
    tuning.log           the tuner's log: each round's phases, every measured candidate

A run that stops before its first trial is recorded (a bad runner address, an unscheduled
program that cannot serve as the reference, Ctrl-C) removes the database it created, so
that running it again needs no --resume.
"""

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


def make_runner(
    kind: str,
    address: Optional[str],
    reference: Optional[str],
    timeout_sec,
    tls: Optional[tuple] = None,
):
    """`tls`: (CA file, certificate, key) for a Dask cluster started with TLS."""
    from tir_mlir.meta_schedule.runner import LocalRunner

    if tls and kind != "dask":
        raise TIRError("--tls-ca-file/--tls-cert/--tls-key are for --runner dask")
    if kind == "local":
        return LocalRunner(timeout_sec=timeout_sec, reference=reference)
    from tir_mlir.meta_schedule.runner.dask_runner import DaskRunner, tls_security

    if address is None:
        raise TIRError("--runner dask needs the scheduler's address (--address tcp://HOST:8786)")
    security = tls_security(*tls) if tls else None
    return DaskRunner(address, timeout_sec=timeout_sec, reference=reference, security=security)


def tune(
    path,
    mod,
    target: str,
    trials: int,
    work_dir,
    func_name: Optional[str] = None,
    resume: bool = False,
    runner: str = "local",
    address: Optional[str] = None,
    check: bool = True,
    timeout_sec: float = 30.0,
    seed: Optional[int] = None,
    strategy: str = "evolutionary",
    trials_per_iter: int = 64,
    echo: Callable[[str], None] = print,
    sizes=None,
    weights=None,
    tls: Optional[tuple] = None,
):
    """Run the tuner on `mod` (read from `path`); returns the best record (or None). On
    Ctrl-C it stops the workers, reports what was measured and exits with status 130.
    `sizes`/`weights`: tune a symbolic function over those sizes (meta_schedule/sizes.py;
    the reference inputs are then one file per size). `tls`: (CA file, certificate, key) for
    a Dask cluster started with TLS (make_runner)."""
    from tir_mlir.meta_schedule.arg_info import entry_func_name
    from tir_mlir.meta_schedule.builder import LocalBuilder
    from tir_mlir.meta_schedule.database import SQLiteDatabase

    try:
        func_name = entry_func_name(mod, func_name)
    except KeyError as e:
        raise TIRError(str(e.args[0])) from None
    mod = single_function(mod, func_name)
    work_dir = Path(work_dir)
    work_dir.mkdir(parents=True, exist_ok=True)
    db_path = work_dir / "database.sqlite"
    if db_path.exists() and not resume:
        raise TIRError(
            f"{work_dir} already holds a tuning database: pass --resume to continue "
            f"it, or choose another --work-dir"
        )
    reference = str(work_dir / "reference.npz") if check and sizes is None else None
    measure = make_runner(runner, address, reference, timeout_sec, tls)
    builder = LocalBuilder(timeout_sec=timeout_sec)
    created = not db_path.exists()
    database = SQLiteDatabase(db_path)
    interrupted = False
    try:
        return _tune(
            path,
            mod,
            target,
            trials,
            work_dir,
            func_name,
            check,
            seed,
            strategy,
            trials_per_iter,
            echo,
            database,
            builder,
            measure,
            reference,
            sizes,
            weights,
        )
    except (KeyboardInterrupt, SystemExit):
        interrupted = True
        raise
    finally:
        builder.shutdown(kill=interrupted)
        measure.shutdown(kill=interrupted)
        empty = len(database) == 0
        database.close()
        if created and empty:  # stopped before its first trial: nothing to resume
            for name in (
                "database.sqlite",
                "database.sqlite-wal",
                "database.sqlite-shm",
                "reference.npz",
            ):
                (work_dir / name).unlink(missing_ok=True)


def _tune(
    path,
    mod,
    target,
    trials,
    work_dir,
    func_name,
    check,
    seed,
    strategy,
    trials_per_iter,
    echo,
    database,
    builder,
    measure,
    reference,
    sizes=None,
    weights=None,
):
    from tir_mlir.meta_schedule.tune import tune_tir
    from tir_mlir.meta_schedule.runner import make_reference
    from tir_mlir.meta_schedule.runner.reference import is_reference
    from tir_mlir.meta_schedule.target_key import canonical_target
    from tir_mlir.meta_schedule.tune_progress import Progress
    from tir_mlir.meta_schedule.stop_on_interrupt import StopOnInterrupt
    from tir_mlir.meta_schedule.tune_events import Observers
    from tir_mlir.runtime.run_program import flop_count

    db_path = work_dir / "database.sqlite"
    workload = database.commit_workload(mod)
    key = canonical_target(target)
    done = [
        r for r in database.get_all_tuning_records() if r.workload == workload and r.target == key
    ]
    valid = [r.mean_sec for r in done if r.is_valid]
    flops = None if sizes is not None else flop_count(mod.module, func_name)
    if done:
        echo(f"resuming: {len(done)} trials in {db_path} ({len(valid)} valid)")
    if check and reference is not None and not is_reference(reference):
        make_reference(mod, reference, func_name)
    progress = Progress(trials, flops, len(done), min(valid) if valid else None)
    # the curve's time axis: from this session's start, or from the first stored record
    start = min([time.time()] + [r.timestamp for r in done])
    try:
        remaining = trials - len(done)
        if remaining > 0:
            with StopOnInterrupt() as stop:
                tune_tir(
                    mod,
                    target,
                    str(work_dir),
                    max_trials_global=remaining,
                    num_trials_per_iter=min(trials_per_iter, remaining),
                    builder=builder,
                    runner=measure,
                    database=database,
                    strategy=strategy,
                    seed=seed,
                    check_correctness=check,
                    observer=Observers([progress, stop]),
                    sizes=sizes,
                    size_weights=weights,
                )
    except KeyboardInterrupt:
        progress.close()
        if len(database) == 0:
            echo("interrupted before the first trial: nothing kept")
            raise SystemExit(130) from None
        builder.shutdown(kill=True)
        measure.shutdown(kill=True)
        echo(
            f"interrupted: {len(database)} measured candidates kept in {db_path}; "
            f"--resume continues"
        )
        _report(
            work_dir,
            database,
            workload,
            key,
            path,
            func_name,
            flops,
            start,
            echo,
            target,
            reference,
        )
        raise SystemExit(130) from None  # the shell's status for Ctrl-C, after a clean stop
    progress.close()
    return _report(
        work_dir, database, workload, key, path, func_name, flops, start, echo, target, reference
    )


def _report(
    work_dir, database, workload, key, path, func_name, flops, start, echo, target, reference
):
    """Say what was found, write best_schedule.py and tuning_curve.png; the best record."""
    from tir_mlir.meta_schedule.tune_report import baseline_of, plot_curve, write_best_schedule
    from tir_mlir.meta_schedule.unscheduled import is_unscheduled

    records = [
        r for r in database.get_all_tuning_records() if r.workload == workload and r.target == key
    ]
    valid = [r for r in records if r.is_valid]
    best = min(valid, key=lambda r: r.mean_sec) if valid else None
    failed = len(records) - len(valid)
    if best is None:
        why = (
            "" if records else f": no schedule could be sampled, {work_dir / 'tuning.log'} says why"
        )
        echo(f"no valid candidate among {len(records)} trials ({failed} failed){why}")
        return None
    write_best_schedule(work_dir / "best_schedule.py", best, path, func_name, flops)
    speed = f"{best.mean_sec * 1e3:.4f} ms"
    if flops:
        speed += f" ({flops / best.mean_sec / 1e9:.2f} GFLOP/s)"
    if not best.trace.insts:
        speed += ", the unscheduled program: no schedule measured was faster"
    echo(
        f"best: {speed} after {len(records)} trials ({failed} failed); "
        f"schedule: {work_dir / 'best_schedule.py'}"
    )
    # the unscheduled program as the task scheduler measured it, like every candidate;
    # else (a GPU task) the reference's one call
    unscheduled = [r.mean_sec for r in valid if is_unscheduled(r.trace)]
    note = plot_curve(
        work_dir / "tuning_curve.png",
        records,
        flops,
        start,
        title=f"{func_name} ({path}) on {key}",
        baseline=unscheduled[0] if unscheduled else baseline_of(reference),
    )
    echo(note or f"tuning curve: {work_dir / 'tuning_curve.png'}")
    return best
