"""`tir-mlir tune` on a model: a module of several functions (or an imported linalg model),
tuned end to end. Its functions become tasks (`extract_tasks`: identical functions are one
task whose weight is how many they are), `tune_tasks` tunes them together with the gradient
task scheduler, one cost model and one database, and the display is one table for the model
(tune_model_progress.py) with the estimated end-to-end latency: the sum over tasks of weight
x best time.

Work directory (as for one function, tune_command.py):
    database.sqlite      every measured candidate of every task (SQLiteDatabase)
    reference_K.npz      task K's unscheduled inputs, outputs and time
    best_schedule.py     `def schedule(sch)` scheduling every function of the model by its
                         task's best record (`tir-mlir schedule|run --transform`)
    summary.json         per task: functions, weight, trials, best and unscheduled times
                         and whether the best is the unscheduled program; the estimated
                         end-to-end latency
    tuning.log           the tuner's log

`--resume` continues from the database: a task whose program (structural hash) and target are
in it counts its records as trials done and its search starts from its best records (a task
tuned in another model's work directory starts from them too when that database is given).
"""

import json
from pathlib import Path
from typing import Callable, Optional

from tir_mlir.errors import TIRError
from tir_mlir.meta_schedule.tune_model_progress import TaskRow, end_to_end, task_table
from tir_mlir.meta_schedule.unscheduled import is_unscheduled

_CREATED = ("database.sqlite", "database.sqlite-wal", "database.sqlite-shm")


class ModelResult:
    """What tuning a model found: `rows` (TaskRow per task), `tasks` (ExtractedTask per task),
    `best` (task name -> best TuningRecord or None) and `end_to_end_sec`."""

    def __init__(self, tasks, rows, best):
        self.tasks, self.rows, self.best = tasks, rows, best
        self.end_to_end_sec = end_to_end(rows)


def tune_model(
    path,
    mod,
    target: str,
    trials: int,
    work_dir,
    resume: bool = False,
    runner: str = "local",
    address: Optional[str] = None,
    check: bool = True,
    timeout_sec: float = 30.0,
    seed: Optional[int] = None,
    strategy: str = "evolutionary",
    trials_per_iter: int = 64,
    echo: Callable[[str], None] = print,
    tls: Optional[tuple] = None,
    stream=None,
    cost_model="xgb",
) -> ModelResult:
    """Tune every function of `mod` (read from `path`) for `target` with `trials` trials in
    all (those in the database count with `resume`); `stream`: where the display goes
    (default stderr). Ctrl-C stops cleanly with status 130, keeping what was measured."""
    from tir_mlir.meta_schedule.builder import LocalBuilder
    from tir_mlir.meta_schedule.database import SQLiteDatabase
    from tir_mlir.meta_schedule.tune_command import make_runner

    work_dir = Path(work_dir)
    work_dir.mkdir(parents=True, exist_ok=True)
    db_path = work_dir / "database.sqlite"
    if db_path.exists() and not resume:
        raise TIRError(
            f"{work_dir} already holds a tuning database: pass --resume to continue "
            f"it, or choose another --work-dir"
        )
    measure = make_runner(runner, address, None, timeout_sec, tls)
    builder = LocalBuilder(timeout_sec=timeout_sec)
    created = not db_path.exists()
    database = SQLiteDatabase(str(db_path))
    interrupted = False
    try:
        return _tune(
            path,
            mod,
            target,
            trials,
            work_dir,
            check,
            seed,
            strategy,
            trials_per_iter,
            echo,
            database,
            builder,
            measure,
            stream,
            cost_model,
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
            for name in _CREATED:
                (work_dir / name).unlink(missing_ok=True)


def _records(database, task, key):
    workload = database.commit_workload(task.mod)
    return [
        r for r in database.get_all_tuning_records() if r.workload == workload and r.target == key
    ]


def _rows(database, tasks, key) -> list[TaskRow]:
    rows = []
    for t in tasks:
        records = _records(database, t, key)
        valid = [r for r in records if r.is_valid]
        unscheduled = [r.mean_sec for r in valid if is_unscheduled(r.trace)]
        rows.append(
            TaskRow(
                t.task_name,
                float(t.weight),
                len(records),
                min(r.mean_sec for r in valid) if valid else None,
                unscheduled[0] if unscheduled else None,
            )
        )
    return rows


def _tune(
    path,
    mod,
    target,
    trials,
    work_dir,
    check,
    seed,
    strategy,
    trials_per_iter,
    echo,
    database,
    builder,
    measure,
    stream,
    cost_model,
):
    from tir_mlir.meta_schedule.extracted_task import extract_tasks
    from tir_mlir.meta_schedule.target_key import canonical_target
    from tir_mlir.meta_schedule.task_tuning import extracted_tasks_to_tune_contexts, tune_tasks
    from tir_mlir.meta_schedule.stop_on_interrupt import StopOnInterrupt
    from tir_mlir.meta_schedule.tune_events import Observers
    from tir_mlir.meta_schedule.tune_model_progress import ModelProgress

    key = canonical_target(target)
    extracted = extract_tasks(mod, target)
    rows = _rows(database, extracted, key)
    done = sum(r.trials for r in rows)
    echo(
        f"{_count(len(mod), 'function')}, {_count(len(extracted), 'task')}: "
        + ", ".join(f"{t.task_name} x{t.weight}" for t in extracted)
    )
    if done:
        echo(f"resuming: {done} trials in {work_dir / 'database.sqlite'}")
    progress = ModelProgress(rows, trials, stream=stream)
    remaining = trials - done
    try:
        if remaining > 0:
            contexts, weights = extracted_tasks_to_tune_contexts(
                extracted, str(work_dir), strategy=strategy, seed=seed
            )
            with StopOnInterrupt() as stop:
                tune_tasks(
                    tasks=contexts,
                    task_weights=weights,
                    work_dir=str(work_dir),
                    max_trials_global=remaining,
                    num_trials_per_iter=min(trials_per_iter, remaining),
                    builder=builder,
                    runner=measure,
                    database=database,
                    cost_model=cost_model,
                    task_scheduler="gradient",
                    check_correctness=check,
                    observer=Observers([progress, stop]),
                )
    except KeyboardInterrupt:
        progress.close()
        if len(database) == 0:
            echo("interrupted before the first trial: nothing kept")
            raise SystemExit(130) from None
        builder.shutdown(kill=True)
        measure.shutdown(kill=True)
        echo(
            f"interrupted: {len(database)} measured candidates kept in "
            f"{work_dir / 'database.sqlite'}; --resume continues"
        )
        _report(path, mod, extracted, database, key, work_dir, echo)
        raise SystemExit(130) from None
    progress.close()
    return _report(path, mod, extracted, database, key, work_dir, echo)


def _report(path, mod, extracted, database, key, work_dir, echo) -> ModelResult:
    """Print the final table; write best_schedule.py and summary.json."""
    from tir_mlir.meta_schedule.tune_report import baseline_of

    rows = _rows(database, extracted, key)
    best = {}
    for t in extracted:
        valid = [r for r in _records(database, t, key) if r.is_valid]
        best[t.task_name] = min(valid, key=lambda r: r.mean_sec) if valid else None
    echo(task_table(rows))
    script = work_dir / "best_schedule.py"
    _write(
        script,
        model_schedule_script(extracted, best, str(path), key, end_to_end(rows), str(script), mod),
    )
    summary = {
        "source": str(path),
        "target": key,
        "end_to_end_ms": _ms(end_to_end(rows)),
        "tasks": [
            {
                "task": t.task_name,
                "functions": t.func_names,
                "weight": t.weight,
                "trials": r.trials,
                "best_ms": _ms(r.best_sec),
                "best_is_unscheduled": r.best_is_unscheduled,
                # measured like the candidates; else (a GPU task) the reference's one call
                "unscheduled_ms": _ms(
                    r.unscheduled_sec
                    if r.unscheduled_sec is not None
                    else baseline_of(_reference(work_dir, k))
                ),
            }
            for k, (t, r) in enumerate(zip(extracted, rows))
        ],
    }
    _write(work_dir / "summary.json", json.dumps(summary, indent=1) + "\n")
    echo(f"schedule: {script}; summary: {work_dir / 'summary.json'}")
    return ModelResult(extracted, rows, best)


def _count(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _reference(work_dir: Path, k: int) -> Optional[str]:
    path = work_dir / f"reference_{k}.npz"
    return str(path) if path.exists() else None


def _ms(sec: Optional[float]) -> Optional[float]:
    return None if sec is None else sec * 1e3


def _write(path: Path, text: str) -> None:
    tmp = Path(str(path) + ".tmp")
    tmp.write_text(text)
    tmp.replace(path)


def _replay_error(steps, mod, name: str) -> Optional[str]:
    """Why the schedule script lines `steps` do not apply to function `name` of `mod`
    (alone), or None when they do."""
    from tir_mlir.module import IRModule
    from tir_mlir.schedule.schedule import Schedule

    namespace: dict = {}
    try:
        exec(
            compile(
                "\n".join(["def schedule(sch):", *steps, "  pass", ""]), "<best_schedule>", "exec"
            ),
            namespace,
        )
        namespace["schedule"](Schedule(IRModule({name: mod[name]})))
    except Exception as e:  # whatever the replay raises: the script must not
        return f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
    return None


def model_schedule_script(
    extracted,
    best,
    source: str,
    target: str,
    end_to_end_sec: Optional[float],
    script_path: str = "best_schedule.py",
    mod=None,
) -> str:
    """`def schedule(sch)` applying each task's best trace to every function it stands for
    (the trace, recorded on the task's `main`, names the function instead); a task with no
    valid record leaves its functions unscheduled, and so does a function of `mod` (when
    given) the trace does not replay on (an equal function whose buffers are named apart:
    the trace's cache blocks are named after the tuned function's buffers)."""
    from tir_mlir.meta_schedule.tune_report import _line

    total = "-" if end_to_end_sec is None else f"{end_to_end_sec * 1e3:.4f} ms"
    body = []
    for t in extracted:
        record = best.get(t.task_name)
        if record is None:
            body.append(
                f"  # task {_line(t.task_name)}: no valid schedule measured, left unscheduled"
            )
            continue
        body.append(
            f"  # task {_line(t.task_name)} (weight {t.weight}): {record.mean_sec * 1e3:.4f} ms"
        )
        if not record.trace.insts:
            body.append("  # the unscheduled program was the fastest: left unscheduled")
            continue
        lines = [line for line in str(record.trace).splitlines() if line.startswith("  ")]
        for name in t.func_names:
            named = "func_name=" + json.dumps(name)
            steps = [line.replace('func_name="main"', named) for line in lines]
            error = None if mod is None else _replay_error(steps, mod, name)
            if error is None:
                body += [f"  # {_line(name)}", *steps]
            else:  # an equal function under other buffer names names its caches apart
                body.append(
                    f"  # {_line(name)}: left unscheduled, the schedule of "
                    f"{_line(t.task_name)} does not replay on it ({_line(error)})"
                )
    return "\n".join(
        [
            f"# The fastest schedules `tir-mlir tune` measured for the model {_line(source)}",
            f"# on {_line(target)}: estimated end-to-end latency {total}.",
            (
                f"# Apply it (from the folder tuning ran in): tir-mlir schedule {_line(source)} "
                f"--transform {_line(script_path)}"
            ),
            "def schedule(sch):",
            *body,
            *([] if any(not b.lstrip().startswith("#") for b in body) else ["  pass"]),
            "",
        ]
    )
