"""A process that imported TVM dies of a crash with Python's fault report, not through TVM's
handler (which allocates, and deadlocks after a crash inside malloc): tests/support/fault_handlers.py,
run by conftest.py after each test."""

import subprocess
import sys
from pathlib import Path

import pytest

CRASH = f"""
import sys; sys.path.insert(0, {str(Path(__file__).parent.parent / "support")!r})
import ctypes, tvm
from fault_handlers import reset_after_tvm
reset_after_tvm()
ctypes.string_at(0)
"""


@pytest.mark.tvm
def test_crash_after_importing_tvm_is_reported_by_python():
    p = subprocess.run([sys.executable, "-c", CRASH], capture_output=True, text=True, timeout=120)
    assert p.returncode == -11, p.stderr[-1000:]
    assert "Fatal Python error: Segmentation fault" in p.stderr
    assert "backtrace_handler" not in p.stderr


def test_the_reset_runs_once_tvm_is_imported():
    import fault_handlers

    # Once TVM is loaded the reset has run (a test may since have dropped a `tvm` module it
    # made itself, e.g. the tir_mlir.tvm alias, so the converse need not hold).
    assert fault_handlers._done or "tvm" not in sys.modules
