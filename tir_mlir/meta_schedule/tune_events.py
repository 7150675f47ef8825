"""What a tuning run reports while it goes, to a `TuneObserver`: the phase of each round
(generating candidates, building them, measuring them) and every measured candidate.

The default observer, `LogObserver`, logs them on the `tir_mlir.meta_schedule` logger (as
TVM's tuner logs on `tvm.meta_schedule`): a line per phase at INFO, a line per candidate at
DEBUG on its child `tir_mlir.meta_schedule.candidates`, which does not pass them on to the
program's handlers (attach one to see them; tune_tir writes them to its log file).
`tir-mlir tune` shows them as a progress display (tune_progress.py)."""

import logging
import math

log = logging.getLogger("tir_mlir.meta_schedule")
candidate_log = logging.getLogger("tir_mlir.meta_schedule.candidates")
candidate_log.propagate = False

GENERATING, BUILDING, MEASURING = "generating", "building", "measuring"


class TuneObserver:
    def phase(self, task: str, phase: str, count: int) -> None:
        """Round phase `phase` (GENERATING, BUILDING, MEASURING) of task `task` starts;
        `count`: candidates it concerns (0 while generating)."""

    def measured(self, task: str, run_secs, error_msg) -> None:
        """A candidate of `task` was measured: its run times in seconds, or its error. One
        measured before the task's first GENERATING phase is its unscheduled program (the
        task scheduler's trial 0)."""

    def note(self, task: str, line: str) -> None:
        """A one-line report on `task` that is not a measured trial (the re-measure of its
        best records at its end)."""


def candidates(count: int) -> str:
    """`1 candidate`, `4 candidates`."""
    return f"{count} candidate{'' if count == 1 else 's'}"


def mean_sec(run_secs, error_msg):
    """The mean run time of a measured candidate, None for a failed one (an error, or times
    that are not finite positive numbers)."""
    if error_msg is not None or not run_secs:
        return None
    try:
        mean = sum(run_secs) / len(run_secs)
    except TypeError:
        return None
    return mean if math.isfinite(mean) and mean > 0 else None


def describe(run_secs, error_msg) -> str:
    """`1.2345 ms`, or the error's kind (`BuildError`)."""
    sec = mean_sec(run_secs, error_msg)
    if sec is not None:
        return f"{sec * 1e3:.4f} ms"
    return str(error_msg or "").split(":", 1)[0].strip() or "failed"


class LogObserver(TuneObserver):
    def phase(self, task, phase, count):
        if phase == GENERATING:
            log.info("task %s: generating candidates", task)
        else:
            log.info("task %s: %s %s", task, phase, candidates(count))

    def measured(self, task, run_secs, error_msg):
        candidate_log.debug("task %s: candidate measured: %s", task, describe(run_secs, error_msg))

    def note(self, task, line):
        log.info("task %s: %s", task, line)


class Observers(TuneObserver):
    """Several observers, each told everything in turn."""

    def __init__(self, observers):
        self.observers = list(observers)

    def phase(self, task, phase, count):
        for o in self.observers:
            o.phase(task, phase, count)

    def measured(self, task, run_secs, error_msg):
        for o in self.observers:
            o.measured(task, run_secs, error_msg)

    def note(self, task, line):
        for o in self.observers:
            o.note(task, line)
