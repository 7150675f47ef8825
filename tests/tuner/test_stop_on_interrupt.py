"""Ctrl-C while tuning: a KeyboardInterrupt Python swallows (raised in a finalizer) is raised
again at the tuner's next candidate; the SIGINT handling is the caller's again afterwards."""

import signal

import pytest

from tir_mlir.meta_schedule.stop_on_interrupt import StopOnInterrupt
from tir_mlir.meta_schedule.tune_events import MEASURING


@pytest.fixture(autouse=True)
def _sigint_handled():
    """SIGINT handled as in a terminal: a suite run as a background job (`pytest &`, CI)
    starts with it ignored, which StopOnInterrupt rightly leaves alone."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


class _InterruptedWhileFinalized:
    def __del__(self):
        # the handler runs inside raise_signal: its KeyboardInterrupt leaves __del__, where
        # Python prints it as "Exception ignored" and goes on
        signal.raise_signal(signal.SIGINT)


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_an_interrupt_swallowed_in_a_finalizer_stops_at_the_next_candidate():
    with StopOnInterrupt() as stop:
        stop.measured("main", [1e-3], None)  # no interrupt yet: the run goes on
        obj = _InterruptedWhileFinalized()
        del obj  # swallowed here
        with pytest.raises(KeyboardInterrupt):
            stop.measured("main", [1e-3], None)
        with pytest.raises(KeyboardInterrupt):
            stop.phase("main", MEASURING, 2)


def test_the_callers_sigint_handler_is_back_after_tuning():
    before = signal.getsignal(signal.SIGINT)
    with StopOnInterrupt():
        assert signal.getsignal(signal.SIGINT) is not before
    assert signal.getsignal(signal.SIGINT) is before


def test_an_ignored_sigint_stays_ignored():
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        with StopOnInterrupt():
            assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
        assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGINT, previous)
