"""tune_tasks (TVM 0.21's `ms.tune_tasks`): several tasks tuned together by one task
scheduler, sharing one database and one cost model, each task's time weighted by how often
the model runs it; `extracted_tasks_to_tune_contexts` makes the tasks from `extract_tasks`.
Tasks tuned before (the same program and target in the database) resume from their records:
their trials count, and the evolutionary search starts from their best."""

import os
import random
from collections.abc import Sequence

from tir_mlir.meta_schedule.tune import _fresh, _logging_to
from tir_mlir.meta_schedule.tune_context import TuneContext


def extracted_tasks_to_tune_contexts(
    extracted_tasks,
    work_dir: str,
    space="post-order-apply",
    strategy="evolutionary",
    num_tuning_cores="physical",
    seed: int | None = None,
) -> tuple[list[TuneContext], list[float]]:
    """One TuneContext per extracted task (its own copy of `space` and `strategy`, its own
    seed drawn from `seed`) and the tasks' weights."""
    os.makedirs(work_dir, exist_ok=True)
    rng = random.Random(seed)
    threads = (
        os.cpu_count() if num_tuning_cores in ("physical", "logical") else int(num_tuning_cores)
    )
    tasks = [
        TuneContext(
            t.mod,
            t.target,
            space_generator=_fresh(space),
            search_strategy=_fresh(strategy),
            task_name=t.task_name,
            rand_state=rng.randrange(1, 2**31),
            num_threads=threads,
        )
        for t in extracted_tasks
    ]
    return tasks, [float(t.weight) for t in extracted_tasks]


def tune_tasks(
    *,
    tasks: Sequence[TuneContext],
    task_weights: Sequence[float],
    work_dir: str,
    max_trials_global: int,
    max_trials_per_task: int | None = None,
    num_trials_per_iter: int = 64,
    builder="local",
    runner="local",
    database="json",
    cost_model="xgb",
    measure_callbacks="default",
    task_scheduler="gradient",
    module_equality: str = "structural",
    check_correctness: bool = True,
    observer=None,
):
    """Tune `tasks` together; returns the database (JSON files in `work_dir` unless one is
    given). `module_equality` is TVM's parameter; only "structural" is supported."""
    from tir_mlir.meta_schedule import cost_model as cm
    from tir_mlir.meta_schedule import database as db
    from tir_mlir.meta_schedule import task_scheduler as ts
    from tir_mlir.meta_schedule.builder import LocalBuilder
    from tir_mlir.meta_schedule.runner import LocalRunner

    if module_equality != "structural":
        raise ValueError(f"module_equality={module_equality!r}: only 'structural' is supported")
    if len(task_weights) != len(tasks):
        raise ValueError(f"{len(tasks)} tasks but {len(task_weights)} weights")
    os.makedirs(work_dir, exist_ok=True)
    if database == "json":
        database = db.JSONDatabase(
            os.path.join(work_dir, "database_workload.json"),
            os.path.join(work_dir, "database_tuning_record.json"),
        )
    elif database == "memory":
        database = db.MemoryDatabase()
    if cost_model == "xgb":
        cost_model = cm.XGBModel()
    elif cost_model == "random":
        cost_model = cm.RandomModel()
    if isinstance(task_scheduler, str):
        task_scheduler = ts.create(task_scheduler)
    builder = LocalBuilder() if builder == "local" else builder
    runner = LocalRunner() if runner == "local" else runner
    with _logging_to(work_dir, console=observer is None):
        return task_scheduler.tune(
            list(tasks),
            [float(w) for w in task_weights],
            max_trials_global,
            max_trials_per_task or max_trials_global,
            num_trials_per_iter,
            builder,
            runner,
            measure_callbacks,
            database,
            cost_model,
            check_correctness=check_correctness,
            work_dir=work_dir,
            observer=observer,
        )
