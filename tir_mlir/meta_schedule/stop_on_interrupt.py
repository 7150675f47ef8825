"""Ctrl-C stops a tuning run even where its KeyboardInterrupt is swallowed.

Python raises KeyboardInterrupt in whatever the main thread runs when the signal's handler
runs; in a `__del__` or a weakref or garbage-collector callback it is printed as "Exception
ignored" and the run goes on (a CI run of the `tir-mlir tune` Ctrl-C test went on tuning for
the 120 s it was given after the signal). Entered, `StopOnInterrupt` handles SIGINT by
recording it and raising KeyboardInterrupt; as a `TuneObserver` it raises it again at the next
phase or measured candidate, which the tuner's caller sees."""

import signal

from tir_mlir.meta_schedule.tune_events import TuneObserver


class StopOnInterrupt(TuneObserver):
    def __init__(self):
        self.interrupted = False
        self._previous = None

    def __enter__(self):
        previous = signal.getsignal(signal.SIGINT)
        # an ignored SIGINT (a job a shell started in the background) stays ignored
        if previous is not signal.SIG_IGN:
            self._previous = signal.signal(signal.SIGINT, self._handle)
        return self

    def __exit__(self, *exc):
        if self._previous is not None:
            signal.signal(signal.SIGINT, self._previous)
            self._previous = None

    def _handle(self, signum, frame):
        self.interrupted = True
        raise KeyboardInterrupt

    def _stop_if_interrupted(self):
        if self.interrupted:
            raise KeyboardInterrupt

    def phase(self, task, phase, count):
        self._stop_if_interrupted()

    def measured(self, task, run_secs, error_msg):
        self._stop_if_interrupted()

    def note(self, task, line):
        self._stop_if_interrupted()
