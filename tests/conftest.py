"""Shared pytest options. Keep additions additive: several test modules rely on this file."""

import os
import sys
from pathlib import Path

import pytest

# The shared helpers (tests/support/: programs, checks, differentials) are imported by module
# name from the test files of every area folder.
sys.path.insert(0, str(Path(__file__).parent / "support"))

import tvm_oracle  # noqa: E402  (from tests/support, put on the path above)
from cpu_durations import CpuDurations  # noqa: E402

# every primitive compares the schedule's op index with a fresh walk (op_index.py)
os.environ.setdefault("TIR_MLIR_CHECK_INDEX", "1")


def pytest_addoption(parser):
    parser.addoption(
        "--update-golden",
        action="store_true",
        default=False,
        help="rewrite tests/golden/*.tir from the current printer output",
    )
    parser.addoption(
        "--cpu-durations",
        metavar="FILE",
        default=None,
        help="write each test's CPU seconds (with its children's) to FILE (support/cpu_durations.py)",
    )


def pytest_configure(config):
    if config.getoption("--cpu-durations"):
        config.pluginmanager.register(CpuDurations(config.getoption("--cpu-durations")))
    config.addinivalue_line("markers", "gpu: needs an NVIDIA GPU (libcuda.so.1); skipped without")
    config.addinivalue_line(
        "markers",
        "slow: left out of the quick lane `pytest -m 'not slow'` (listed in tests/slow_tests.txt)",
    )
    config.addinivalue_line(
        "markers",
        "tvm: compares with TVM 0.21 (needs `import tvm`); skipped without TVM, run by the TVM"
        " lane .ci/run_tvm (`pytest -m tvm`)",
    )


def _slow_prefixes() -> list[str]:
    # One list instead of decorators scattered over the test files: it is rewritten from a
    # `--durations` run when timings change, without touching the tests themselves.
    lines = (Path(__file__).parent / "slow_tests.txt").read_text().splitlines()
    return [ln.split("#")[0].strip() for ln in lines if ln.split("#")[0].strip()]


def pytest_collection_modifyitems(config, items):
    # an entry is a file, a test or one parameter set: node ids relative to the rootdir,
    # tests/<area>/test_x.py::test_y[param]; it covers the ids below it, not test_y2
    slow = set(_slow_prefixes())
    tvm_installed = tvm_oracle.installed()
    for item in items:
        nodeid = item.nodeid
        parents = {nodeid, nodeid.split("[")[0], nodeid.split("::")[0]}
        if slow & parents:
            item.add_marker("slow")
        if not tvm_installed and item.get_closest_marker("tvm"):
            item.add_marker(pytest.mark.skip(reason=tvm_oracle.ABSENT))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    # Only a comparison with TVM may skip for TVM's absence: a test whose own assertions were
    # skipped with it (an importorskip("tvm") in an unmarked test or helper) fails instead.
    outcome = yield
    report = outcome.get_result()
    if (
        report.skipped
        and not hasattr(report, "wasxfail")
        and not item.get_closest_marker("tvm")
        and isinstance(report.longrepr, tuple)
    ):
        reason = str(report.longrepr[2])
        if "could not import 'tvm" in reason or tvm_oracle.ABSENT in reason:
            report.outcome = "failed"
            report.longrepr = (
                f"{item.nodeid} skipped for lack of TVM without the tvm marker: its own "
                "assertions must run without TVM; mark only the comparison with TVM "
                f"(@pytest.mark.tvm) ({reason})"
            )


def pytest_runtest_teardown(item):
    # a test that imported TVM leaves TVM's crash handler, which can deadlock (fault_handlers.py)
    from fault_handlers import reset_after_tvm

    reset_after_tvm()
