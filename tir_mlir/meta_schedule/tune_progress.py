"""What `tir-mlir tune` shows while it runs: the round's phase (generating, building,
measuring), trials done, the best speed so far and failures by kind, updated at every measured
candidate (a TuneObserver, tune_events.py).

On a terminal it is a tqdm bar; when stderr is not a terminal (piped to a file, CI) or tqdm is
missing, plain lines: one per phase and one per measured candidate; on a terminal of zero
columns (a pty nobody sized), nothing."""

import collections
import os
import sys
from typing import Optional

from tir_mlir.meta_schedule.tune_events import (
    GENERATING,
    TuneObserver,
    candidates,
    describe,
    mean_sec,
)


def error_kind(error_msg: Optional[str]) -> Optional[str]:
    """ "BuildError: ..." -> "BuildError"."""
    return None if error_msg is None else error_msg.split(":", 1)[0]


def display_mode(stream) -> str:
    """ "bar" on a terminal, "off" on one of zero columns, "lines" otherwise."""
    try:
        if not stream.isatty():
            return "lines"
        columns = os.get_terminal_size(stream.fileno()).columns
    except (AttributeError, OSError, ValueError):
        return "lines"
    return "bar" if columns > 0 else "off"


class Progress(TuneObserver):
    def __init__(
        self,
        total: int,
        flops: Optional[int],
        done: int = 0,
        best_sec: Optional[float] = None,
        stream=None,
        mode: Optional[str] = None,
    ):
        self.total, self.flops, self.done, self.best_sec = total, flops, done, best_sec
        self.failures = collections.Counter()
        self.stream = stream or sys.stderr
        self.mode = mode or display_mode(self.stream)
        self.round = 0
        self._bar = None
        if self.mode == "bar":
            try:
                from tqdm import tqdm
            except ImportError:
                self.mode = "lines"
            else:
                self._bar = tqdm(
                    total=total,
                    initial=min(done, total),
                    file=self.stream,
                    unit="trial",
                    dynamic_ncols=True,
                    leave=True,
                )

    def rate(self, sec: Optional[float]) -> str:
        if sec is None:
            return "-"
        if self.flops:
            return f"{self.flops / sec / 1e9:.2f} GFLOP/s"
        return f"{sec * 1e3:.4f} ms"

    def phase(self, task, phase, count):
        if phase == GENERATING:
            self.round += 1
        # before round 1: the task scheduler's trial 0, the unscheduled program
        label = f"round {self.round}" if self.round else "the unscheduled program"
        if self._bar is not None:
            what = phase if phase == GENERATING else f"{phase} {count}"
            self._bar.set_description_str(f"{label}: {what}", refresh=True)
        elif self.mode == "lines":
            what = f"{phase} candidates" if phase == GENERATING else f"{phase} {candidates(count)}"
            self._print(f"{label}: {what}")

    def measured(self, task, run_secs, error_msg):
        self.done += 1
        sec = mean_sec(run_secs, error_msg)
        if sec is not None:
            if self.best_sec is None or sec < self.best_sec:
                self.best_sec = sec
        else:
            self.failures[error_kind(error_msg) or "Failed"] += 1
        status = f"best {self.rate(self.best_sec)}"
        if self.failures:
            status += ", failed: " + ", ".join(f"{k} {n}" for k, n in sorted(self.failures.items()))
        if self._bar is not None:
            self._bar.n = min(self.done, self.total)
            self._bar.set_postfix_str(status, refresh=False)
            self._bar.refresh()
        elif self.mode == "lines":
            self._print(f"[{self.done}/{self.total}] {describe(run_secs, error_msg)}; {status}")

    def note(self, task, line):
        if self._bar is not None:
            self._bar.write(line, file=self.stream)
        elif self.mode == "lines":
            self._print(line)

    def _print(self, line: str):
        print(line, file=self.stream, flush=True)

    def close(self):
        if self._bar is not None:
            self._bar.close()
