"""What `tir-mlir tune` shows while it tunes a model (several tasks, tune_model.py): one
display for the whole model, a per-task table (task, weight, trials, best time, weight x best;
a best time marked * is the unscheduled program's) and the estimated end-to-end latency so
far, the sum over tasks of weight x best time.

The table is printed after every round (each round tunes one task); on a terminal a tqdm bar
under it counts the model's trials and shows the estimate, otherwise (stderr piped to a file,
CI, no tqdm) a plain line per measured candidate; on a terminal of zero columns, tables only."""

import collections
import sys
from collections.abc import Sequence
from typing import Optional

from tir_mlir.meta_schedule.tune_events import (
    GENERATING,
    MEASURING,
    TuneObserver,
    describe,
    mean_sec,
)
from tir_mlir.meta_schedule.tune_progress import display_mode, error_kind


class TaskRow:
    """One task of the table: its name, weight, trials measured, best time (s) and the time
    of its unscheduled program (s; the task scheduler's trial 0) when measured."""

    def __init__(
        self,
        name: str,
        weight: float,
        trials: int = 0,
        best_sec: Optional[float] = None,
        unscheduled_sec: Optional[float] = None,
    ):
        self.name, self.weight, self.trials, self.best_sec = name, weight, trials, best_sec
        self.unscheduled_sec = unscheduled_sec

    @property
    def best_is_unscheduled(self) -> bool:
        """Whether no schedule measured beat the program as given."""
        return (
            self.best_sec is not None
            and self.unscheduled_sec is not None
            and self.unscheduled_sec <= self.best_sec
        )


def end_to_end(rows: Sequence[TaskRow]) -> Optional[float]:
    """Sum of weight x best time over the tasks with a valid time; None before any."""
    timed = [r.weight * r.best_sec for r in rows if r.best_sec is not None]
    return sum(timed) if timed else None


def _ms(sec: Optional[float]) -> str:
    return "-" if sec is None else f"{sec * 1e3:.4f}"


def task_table(rows: Sequence[TaskRow]) -> str:
    """The per-task table and the end-to-end line under it."""
    width = max([len("task")] + [len(r.name) for r in rows])
    lines = [
        f"{'task':<{width}}  {'weight':>6}  {'trials':>6}  {'best (ms)':>10}  "
        f"{'weight x best (ms)':>18}"
    ]
    for r in rows:
        weighted = None if r.best_sec is None else r.weight * r.best_sec
        best = _ms(r.best_sec) + ("*" if r.best_is_unscheduled else "")
        lines.append(
            f"{r.name:<{width}}  {r.weight:>6g}  {r.trials:>6}  {best:>10}  {_ms(weighted):>18}"
        )
    total = end_to_end(rows)
    missing = sum(r.best_sec is None for r in rows)
    line = f"estimated end-to-end latency: {_ms(total)} ms"
    if missing:
        line += f" ({missing} of {len(rows)} tasks without a valid time yet, not counted)"
    notes = ["* the unscheduled program: no schedule measured was faster"]
    return "\n".join(lines + [line] + (notes if any(r.best_is_unscheduled for r in rows) else []))


class ModelProgress(TuneObserver):
    """The model's display; `rows` (TaskRow per task, in the tasks' order, resumed trials and
    best times included) are kept up to date. `total`: the model's trial budget."""

    def __init__(
        self, rows: Sequence[TaskRow], total: int, stream=None, mode: Optional[str] = None
    ):
        self.rows = {r.name: r for r in rows}
        self.total = total
        self.done = sum(r.trials for r in rows)
        self.failures = collections.Counter()
        self.stream = stream or sys.stderr
        self.mode = mode or display_mode(self.stream)
        self._pending: dict[str, int] = {}
        # a task's measurements before its first round are its unscheduled program's
        self._searching: set[str] = set()
        self._bar = None
        if self.mode == "bar":
            try:
                from tqdm import tqdm
            except ImportError:
                self.mode = "lines"
            else:
                self._bar = tqdm(
                    total=total,
                    initial=min(self.done, total),
                    file=self.stream,
                    unit="trial",
                    dynamic_ncols=True,
                    leave=True,
                )
        if self.done:
            self._table()

    def phase(self, task, phase, count):
        if phase == GENERATING:
            self._searching.add(task)
        if phase == MEASURING:
            self._pending[task] = count
        if self._bar is not None:
            self._bar.set_description_str(f"{task}: {phase}", refresh=True)

    def measured(self, task, run_secs, error_msg):
        row = self.rows[task]
        row.trials += 1
        self.done += 1
        sec = mean_sec(run_secs, error_msg)
        if task not in self._searching:
            row.unscheduled_sec = sec
        if sec is not None and (row.best_sec is None or sec < row.best_sec):
            row.best_sec = sec
        if sec is None:
            self.failures[error_kind(error_msg) or "Failed"] += 1
        status = f"end-to-end {_ms(end_to_end(list(self.rows.values())))} ms"
        if self.failures:
            status += ", failed: " + ", ".join(f"{k} {n}" for k, n in sorted(self.failures.items()))
        if self._bar is not None:
            self._bar.n = min(self.done, self.total)
            self._bar.set_postfix_str(status, refresh=False)
            self._bar.refresh()
        elif self.mode == "lines":
            self._print(
                f"[{self.done}/{self.total}] {task}: {describe(run_secs, error_msg)}; {status}"
            )
        left = self._pending.get(task, 1) - 1
        self._pending[task] = left
        if left <= 0:  # the task's round is measured
            self._table()

    def _table(self):
        self._print(task_table(list(self.rows.values())))

    def _print(self, text: str):
        if self._bar is not None:
            self._bar.write(text, file=self.stream)
        else:
            print(text, file=self.stream, flush=True)

    def close(self):
        if self._bar is not None:
            self._bar.close()
