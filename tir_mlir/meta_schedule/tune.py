"""tune_tir: TVM 0.21's entry point, `ms.tune_tir(mod, target, work_dir, max_trials_global)`.

One task per function of `mod`; each gets a TuneContext (space generator, search strategy,
its own seed derived from `seed`), the task scheduler runs the rounds, and the returned
database holds every measured trace (JSON files in work_dir unless a database is given).

It logs as TVM's tuner does, on the `tir_mlir.meta_schedule` logger: each round's phases and
summary at INFO, every measured candidate at DEBUG, all of it to `work_dir/tuning.log`, and
the INFO lines on stderr too when the program has configured no logging of its own.
"""

import contextlib
import copy
import logging
import os
import random
import sys
from typing import List, Optional, Tuple

from tir_mlir.context import get_context
from tir_mlir.meta_schedule.sizes import feature_size, sizes_runner
from tir_mlir.meta_schedule.tune_context import TuneContext
from tir_mlir.meta_schedule.tune_events import candidate_log, log
from tir_mlir.module import IRModule


def tune_tir(
    mod: IRModule,
    target,
    work_dir: str,
    max_trials_global: int,
    *,
    max_trials_per_task: Optional[int] = None,
    num_trials_per_iter: int = 64,
    builder="local",
    runner="local",
    database="json",
    cost_model="xgb",
    measure_callbacks="default",
    task_scheduler="gradient",
    space="post-order-apply",
    strategy="evolutionary",
    num_tuning_cores="physical",
    seed: Optional[int] = None,
    check_correctness: bool = True,
    observer=None,
    sizes=None,
    size_weights=None,
    **_tvm_only,
):
    """Tune every function of `mod` for `target`; returns the database. `num_tuning_cores`
    ("physical", "logical" or a number) is how many processes the search replays candidates
    in. `check_correctness` (tir-mlir only) runs each candidate on the unscheduled program's
    inputs first and rejects it unless it reproduces the outputs. `observer` (tir-mlir only,
    a tune_events.TuneObserver) hears the phases and every measured candidate instead of the
    console log. `sizes` (tir-mlir only; a symbolic function needs them): the values of its
    sizes to measure each candidate at (`[{"n": 128}, {"n": 1024}]`); its cost is the
    geometric mean of those times, weighted by `size_weights` (meta_schedule/sizes.py)."""
    from tir_mlir.meta_schedule import cost_model as cm
    from tir_mlir.meta_schedule import database as db
    from tir_mlir.meta_schedule import task_scheduler as ts
    from tir_mlir.meta_schedule.builder import LocalBuilder
    from tir_mlir.meta_schedule.runner import LocalRunner

    os.makedirs(work_dir, exist_ok=True)
    rng = random.Random(seed)
    threads = (
        os.cpu_count() if num_tuning_cores in ("physical", "logical") else int(num_tuning_cores)
    )
    tasks = [
        TuneContext(
            m,
            target,
            space_generator=_fresh(space),
            search_strategy=_fresh(strategy),
            task_name=name,
            rand_state=rng.randrange(1, 2**31),
            num_threads=threads,
        )
        for name, m in function_modules(mod)
    ]
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
        cost_model = cm.RandomModel(seed=seed)
    if isinstance(task_scheduler, str):
        task_scheduler = ts.create(task_scheduler)
    builder = LocalBuilder() if builder == "local" else builder
    runner = LocalRunner() if runner == "local" else runner
    if sizes is not None:
        runner = sizes_runner(mod, runner, sizes, size_weights, work_dir)
        extractor = getattr(cost_model, "extractor", None)
        if extractor is not None and hasattr(extractor, "size"):
            extractor.size = feature_size(sizes)
    with _logging_to(work_dir, console=observer is None):
        return task_scheduler.tune(
            tasks,
            [1.0] * len(tasks),
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


@contextlib.contextmanager
def _logging_to(work_dir: str, console: bool):
    """While tuning: the tuner's log, every measured candidate included, in
    `work_dir/tuning.log`, and its INFO lines on stderr when `console` and the program has
    configured no logging that would show them."""
    logger, candidates = log, candidate_log
    file = logging.FileHandler(os.path.join(work_dir, "tuning.log"), encoding="utf-8")
    file.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))
    added: List[Tuple[logging.Logger, logging.Handler]] = [(logger, file), (candidates, file)]
    if console and not logger.hasHandlers():
        added.append((logger, logging.StreamHandler(sys.stderr)))
    levels = [(logger, logger.level), (candidates, candidates.level)]
    if logger.getEffectiveLevel() > logging.INFO:
        logger.setLevel(logging.INFO)
    candidates.setLevel(logging.DEBUG)
    for lg, h in added:
        lg.addHandler(h)
    try:
        yield
    finally:
        for lg, h in added:
            lg.removeHandler(h)
        file.close()
        for lg, level in levels:
            lg.setLevel(level)


def _fresh(x):
    """Space generators and strategies hold per-task state: give each task its own."""
    return copy.deepcopy(x) if hasattr(x, "initialize_with_tune_context") else x


def function_modules(mod: IRModule):
    """(name, single-function module) per function of `mod`, the function keeping its name
    (what tune_tir tunes and records; `extract_tasks` renames each to `main` instead)."""
    names = list(mod.functions)
    if len(names) == 1:
        return [(names[0], mod)]
    out = []
    for name in names:
        m = mod.copy()
        with get_context():
            for other, op in m.functions.items():
                if other != name:
                    op.erase()
        out.append((name, m))
    return out
