"""The task scheduler: the tuning loop over one or more tasks (TuneContexts).

Each step picks a task (`next_task_id`, the policy of a subclass), asks its search strategy
for candidates, builds and measures them, notifies the strategy and runs the measure
callbacks (by default, TVM's: store every result, failures included, in the database; remove
the built artifacts; update the cost model). It stops when the global trial budget is spent
or every task's strategy is exhausted. Before any round, each CPU task's unscheduled program
is measured and stored with the empty trace (trial 0; unscheduled.py).
"""

import logging
import math
import time
from typing import List, Optional

from tir_mlir.meta_schedule.cost_model.cost_model import costs
from tir_mlir.meta_schedule.measure_callback.measure_callback import normalize
from tir_mlir.meta_schedule.runner import RunnerInput
from tir_mlir.meta_schedule.search_strategy.search_strategy import MeasureCandidate
from tir_mlir.meta_schedule.task_scheduler.remeasure import remeasure_best
from tir_mlir.meta_schedule.target_key import canonical_target
from tir_mlir.meta_schedule.tune_events import (
    BUILDING,
    GENERATING,
    MEASURING,
    LogObserver,
    Observers,
    TuneObserver,
    candidate_log,
    describe,
    mean_sec,
)
from tir_mlir.meta_schedule.unscheduled import unscheduled_record
from tir_mlir.schedule.schedule import Schedule

log = logging.getLogger("tir_mlir.meta_schedule")
# A candidate whose first call takes this many times the task's best time so far is timed by
# that call alone (RunnerInput.slow_secs).
SLOW_FACTOR = 10.0
# A candidate measured faster than the task's best so far is measured this many times more,
# and those measurements replace its first (`_confirm`).
CONFIRM_REPEATS = 2


class TaskRecord:
    def __init__(self, ctx, weight: float):
        self.ctx = ctx
        self.weight = weight
        self.trials = 0
        self.rounds = 0
        self.best_sec = math.inf
        self.best_history: List[float] = []  # best time after each round
        self.done = False
        self.workload = None
        self.args_info: Optional[list] = None  # list[ArgInfo]
        self.reference: Optional[str] = None  # make_reference's file
        self.builder_results: Optional[list] = None  # of the batch being measured


class TaskScheduler:
    def next_task_id(self) -> int:
        raise NotImplementedError

    def tune(
        self,
        tasks,
        task_weights,
        max_trials_global: int,
        max_trials_per_task: int,
        num_trials_per_iter: int,
        builder,
        runner,
        measure_callbacks,
        database,
        cost_model,
        check_correctness: bool = True,
        work_dir: Optional[str] = None,
        observer: Optional[TuneObserver] = None,
    ):
        """`observer` hears each round's phases and every measured candidate, which are also
        logged (tune_events.LogObserver)."""
        from tir_mlir.meta_schedule.arg_info import ArgInfo

        self.observer = Observers([LogObserver()] + ([observer] if observer else []))
        self.tasks = [TaskRecord(t, w) for t, w in zip(tasks, task_weights)]
        self.builder, self.runner, self.database = builder, runner, database
        runner_has_reference = getattr(runner, "reference", None) is not None
        self.cost_model = cost_model
        self.callbacks = normalize(measure_callbacks)
        for k, t in enumerate(self.tasks):
            t.workload = database.commit_workload(t.ctx.mod)
            t.args_info = ArgInfo.from_entry_func(t.ctx.mod)
            if check_correctness and not runner_has_reference:
                from tir_mlir.meta_schedule.runner.reference import make_reference

                path = None if work_dir is None else f"{work_dir}/reference_{k}.npz"
                t.reference = make_reference(t.ctx.mod, path)
        total = 0
        for k, t in enumerate(self.tasks):
            # before the search starts, so that it finds the record (a resumed search does)
            measured = self._measure_unscheduled(k) if total < max_trials_global else 0
            total += measured
            spaces = t.ctx.generate_design_space()
            t.ctx.search_strategy.pre_tuning(
                max_trials_per_task - measured, num_trials_per_iter, spaces, database, cost_model
            )
        while total < max_trials_global:
            tid = self.next_task_id()
            if tid < 0:
                break
            task = self.tasks[tid]
            start = time.perf_counter()
            self.observer.phase(task.ctx.task_name, GENERATING, 0)
            cands = task.ctx.search_strategy.generate_measure_candidates()
            if not cands:
                task.done = True
                failures = getattr(task.ctx.search_strategy, "failures", None)
                if failures and not task.ctx.search_strategy.trials:
                    # e.g. DisallowDynamicLoop refusing a triangular nest, as TVM's does
                    log.warning(
                        "task %s: no candidate to measure: every sampled schedule failed (%s)",
                        task.ctx.task_name,
                        "; ".join(f"{n}x {why}" for why, n in failures.most_common(3)),
                    )
                continue
            cands = cands[: max_trials_global - total]
            search_s = time.perf_counter() - start
            results = self._measure(task, cands)
            measure_s = time.perf_counter() - start - search_s
            total += len(cands)
            self._record(tid, cands, results)
            log.info(
                "task %s: round %d, %d candidates (search %.1fs, build+run %.1fs), best %.4g ms",
                task.ctx.task_name,
                task.rounds,
                len(cands),
                search_s,
                measure_s,
                task.best_sec * 1e3,
            )
        for t in self.tasks:
            self._remeasure(t)
            t.ctx.search_strategy.post_tuning()
        return database

    def _remeasure(self, task: TaskRecord) -> None:
        """The task's best few records measured again side by side (remeasure.py); not
        trials, so `task.trials` and the observer's count stay."""

        def runner_input(path):
            return RunnerInput(path, "cpu", task.args_info, func_name=_entry(task.ctx))

        line = remeasure_best(self.builder, self.runner, self.database, task, runner_input)
        if line is not None:
            self.observer.note(task.ctx.task_name, line)

    def _measure_unscheduled(self, tid: int) -> int:
        """Trial 0 of a CPU task: its program as given, measured like any candidate and
        stored (by the measure callbacks) with the empty trace, so the database's best is
        never slower than the input (unscheduled.py). Not for a GPU task (an unscheduled
        kernel binds no threads) nor when the database holds it already (a resumed
        tuning). The number of trials it took (0 or 1)."""
        task = self.tasks[tid]
        target = canonical_target(str(task.ctx.target))
        if (
            task.ctx.target.is_gpu
            or unscheduled_record(self.database, task.workload, target) is not None
        ):
            return 0
        cands = [MeasureCandidate(Schedule(task.ctx.mod), task.args_info)]
        start = time.perf_counter()
        results = self._measure(task, cands)
        built = task.builder_results
        assert built is not None, "_measure collects the batch's builder results"
        for cb in self.callbacks:
            cb.apply(self, tid, cands, built, results)
        task.builder_results = None
        task.trials += 1
        task.best_sec = min([task.best_sec] + costs(results))
        sec = mean_sec(results[0].run_secs, results[0].error_msg)
        log.info(
            "task %s: the unscheduled program (build+run %.1fs): %s",
            task.ctx.task_name,
            time.perf_counter() - start,
            describe(results[0].run_secs, results[0].error_msg)
            if sec is None
            else f"{sec * 1e3:.4g} ms",
        )
        return 1

    def _measure(self, task, cands):
        """Build and measure; a candidate slower than SLOW_FACTOR x the best time known when
        it is measured (earlier rounds' and this round's) is timed by one call, one faster
        than it is measured again (`_confirm`)."""
        from tir_mlir.meta_schedule.builder import BuilderInput
        from tir_mlir.meta_schedule.measure_pipeline import build_and_run
        from tir_mlir.meta_schedule.runner import RunnerInput

        target = str(task.ctx.target)
        best = [task.best_sec]

        def runner_input(k, path):
            slow = SLOW_FACTOR * best[0] if math.isfinite(best[0]) else None
            return RunnerInput(
                path,
                "cpu",
                task.args_info,
                reference=task.reference,
                func_name=_entry(task.ctx),
                slow_secs=slow,
            )

        def seen(k, result):
            if costs([result])[0] < best[0]:
                self._confirm(task, k, result, runner_input)
            best[0] = min([best[0]] + costs([result]))
            self.observer.measured(name, result.run_secs, result.error_msg)

        name = task.ctx.task_name
        self.observer.phase(name, BUILDING, len(cands))
        task.builder_results = []
        return build_and_run(
            self.builder,
            self.runner,
            [BuilderInput(c.sch.mod, target) for c in cands],
            runner_input,
            on_result=seen,
            on_built=lambda: self.observer.phase(name, MEASURING, len(cands)),
            builder_results=task.builder_results,
        )

    def _confirm(self, task, k, result, runner_input):
        """The k-th candidate was measured faster than the task's best so far: measure it
        CONFIRM_REPEATS times more and keep those times (or the first failure among them) in
        place of the first. The fastest of many single measurements is the one most likely
        to be low by chance (a quiet moment of a shared machine); a time measured after the
        candidate was picked carries no such selection, so the record the database returns
        as the best is always one of re-measured times."""
        path = task.builder_results[k].artifact_path
        futures = self.runner.run([runner_input(k, path) for _ in range(CONFIRM_REPEATS)])
        again = [f.result() for f in futures]
        failed = next((r for r in again if r.error_msg is not None), None)
        candidate_log.debug(
            "task %s: candidate first measured %s, again %s",
            task.ctx.task_name,
            describe(result.run_secs, result.error_msg),
            ", ".join(describe(r.run_secs, r.error_msg) for r in again),
        )
        if failed is not None:
            result.run_secs, result.error_msg = None, failed.error_msg
        else:
            result.run_secs = [s for r in again for s in r.run_secs or ()]

    # TVM's names, for measure callbacks written against TVM's TaskScheduler
    @property
    def tasks_(self):
        return self.tasks

    @property
    def database_(self):
        return self.database

    @property
    def cost_model_(self):
        return self.cost_model

    def _record(self, tid: int, cands, results):
        """TVM's order: the strategy hears the results, then every measure callback runs."""
        task = self.tasks[tid]
        task.ctx.search_strategy.notify_runner_results(cands, results)
        built = task.builder_results
        assert built is not None, "_measure collects the batch's builder results"
        for cb in self.callbacks:
            cb.apply(self, tid, cands, built, results)
        task.builder_results = None
        task.trials += len(cands)
        task.rounds += 1
        task.best_sec = min([task.best_sec] + costs(results))
        task.best_history.append(task.best_sec)


def _entry(ctx) -> str:
    """The function a task's candidates are run as: the module's only function (an extracted
    task's `main`, whatever the task is named), else the one named like the task."""
    names = list(ctx.mod.functions)
    return names[0] if len(names) == 1 else ctx.task_name
