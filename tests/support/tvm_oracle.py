"""TVM 0.21 as an optional oracle: a test that compares with TVM carries `@pytest.mark.tvm`
(tests/conftest.py skips it, with ABSENT as the reason, when TVM is not installed; the TVM lane
.ci/run_tvm runs `pytest -m tvm`). A test's own assertions never wait for TVM: a test without
the marker that skips for TVM's absence fails (conftest.py)."""

import importlib.util
import sys
from pathlib import Path

import pytest

ABSENT = "a comparison with TVM 0.21: TVM is not installed (the TVM lane .ci/run_tvm runs it)"


def installed() -> bool:
    """Whether `import tvm` would find TVM, without importing it (TVM's libraries loaded beside
    our LLVM can break the JIT, so a test imports TVM only when it compares with it)."""
    try:
        return importlib.util.find_spec("tvm") is not None
    except ImportError:
        return False


def import_tvm():
    """`import tvm` for a module of comparisons that needs TVM at import time (to build its
    parameters); skips the module without it, naming it (pytest reports a module skipped here
    at this line). Mark the module's tests too (`pytestmark = pytest.mark.tvm`) so that the TVM
    lane selects them."""
    caller = Path(sys._getframe(1).f_globals.get("__file__", "?")).name
    return pytest.importorskip("tvm", reason=f"{caller}: {ABSENT}")
