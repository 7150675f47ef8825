"""The one MLIR context that every tir_mlir module lives in, with the `tir` dialect loaded,
and the lock that makes using it from several threads safe.

Neither the Python objects of the MLIR bindings nor the parser's (stateful) lexer may be used
by two threads at once, so every public entry point that touches IR (parse, schedule
primitives, printing, copying, lowering, building, interpreting) runs under `MLIR_LOCK`
(`@serialized`): threads may share modules and schedules, and their IR work takes turns.
Compiled functions run outside the lock, in parallel.
"""

import functools
import sys
import threading
import types

from mlir import ir
from mlir.dialects import irdl

from tir_mlir.dialect import IRDL_PATH


# The bindings look up a Python module per dialect (mlir.dialects.<name>) each time they wrap
# an op and do not remember a failed import: without this empty stand-in every walk over tir
# ops re-searches the import path (a third of the time of a schedule replay).
sys.modules.setdefault("mlir.dialects.tir", types.ModuleType("mlir.dialects.tir"))


MLIR_LOCK = threading.RLock()


def serialized(fn):
    """Run `fn` holding MLIR_LOCK (re-entrant: serialized functions may call each other)."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with MLIR_LOCK:
            return fn(*args, **kwargs)

    return wrapper


@serialized
@functools.lru_cache(maxsize=None)
def get_context() -> ir.Context:
    return new_context()


def new_context() -> ir.Context:
    """A fresh context with the `tir` dialect loaded (get_context's, and the one a forked
    child makes for itself: the parent's thread pool does not exist in the child)."""
    ctx = ir.Context()
    with ctx, ir.Location.unknown():
        module = ir.Module.parse(IRDL_PATH.read_text())
        # (irdl.py re-exports load_dialects from a native module that has no stub)
        irdl.load_dialects(module)  # pyright: ignore[reportAttributeAccessIssue]
    return ctx
