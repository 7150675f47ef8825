"""Shared pytest options. Keep additions additive: several test modules rely on this file."""

import os
import sys
from pathlib import Path

# The shared helpers (tests/support/: programs, checks, differentials) are imported by module
# name from the test files of every area folder.
sys.path.insert(0, str(Path(__file__).parent / "support"))

# every primitive compares the schedule's op index with a fresh walk (op_index.py)
os.environ.setdefault("TIR_MLIR_CHECK_INDEX", "1")


def pytest_addoption(parser):
    parser.addoption(
        "--update-golden",
        action="store_true",
        default=False,
        help="rewrite tests/golden/*.tir from the current printer output",
    )


def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: needs an NVIDIA GPU (libcuda.so.1); skipped without")
    config.addinivalue_line(
        "markers",
        "slow: left out of the quick lane `pytest -m 'not slow'` (listed in tests/slow_tests.txt)",
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
    for item in items:
        nodeid = item.nodeid
        parents = {nodeid, nodeid.split("[")[0], nodeid.split("::")[0]}
        if slow & parents:
            item.add_marker("slow")


def pytest_runtest_teardown(item):
    # a test that imported TVM leaves TVM's crash handler, which can deadlock (fault_handlers.py)
    from fault_handlers import reset_after_tvm

    reset_after_tvm()
