"""`pytest --cpu-durations=FILE`: each test's CPU seconds, for choosing tests/slow_tests.txt.

On a loaded machine a test's wall time says more about the load than about the test; the CPU
time of the test process plus that of the children it waited for (CLI runs, crash isolation,
opt/llc) is close to what the test takes on an idle machine. A child that outlives the test (a
tuner's worker pool) is not counted: a wall time far above the CPU time points at one, or at a
sleep. FILE gets one line per test: cpu (self + children), wall, children, node id; tab-separated,
dearest first."""

import resource
import time
from pathlib import Path

import pytest


def _cpu() -> tuple[float, float]:
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, kids.ru_utime + kids.ru_stime


class CpuDurations:
    def __init__(self, path: str):
        self.path = Path(path)
        self.rows: list[tuple[float, float, float, str]] = []

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item, nextitem):
        t0, (own0, kids0) = time.perf_counter(), _cpu()
        yield
        t1, (own1, kids1) = time.perf_counter(), _cpu()
        kids = kids1 - kids0
        self.rows.append((own1 - own0 + kids, t1 - t0, kids, item.nodeid))

    def pytest_sessionfinish(self, session):
        lines = [
            f"{c:.3f}\t{w:.3f}\t{k:.3f}\t{n}\n" for c, w, k, n in sorted(self.rows, reverse=True)
        ]
        self.path.write_text("".join(lines))
