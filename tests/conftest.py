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
    parser.addoption("--update-golden", action="store_true", default=False,
                     help="rewrite tests/golden/*.tir from the current printer output")


def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: needs an NVIDIA GPU (libcuda.so.1); skipped without")


def pytest_runtest_teardown(item):
    # a test that imported TVM leaves TVM's crash handler, which can deadlock (fault_handlers.py)
    from fault_handlers import reset_after_tvm
    reset_after_tvm()
