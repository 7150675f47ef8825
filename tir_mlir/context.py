"""The one MLIR context that every tir_mlir module lives in, with the `tir` dialect loaded,
and the lock that makes using it from several threads safe.

Neither the Python objects of the MLIR bindings nor the parser's (stateful) lexer may be used
by two threads at once, so every public entry point that touches IR (parse, schedule
primitives, printing, copying, lowering, building, interpreting) runs under `MLIR_LOCK`
(`@serialized`): threads may share modules and schedules, and their IR work takes turns.
Compiled functions run outside the lock, in parallel.
"""
import functools
import threading

from mlir import ir
from mlir.dialects import irdl

from tir_mlir.dialect import IRDL_PATH


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
    ctx = ir.Context()
    with ctx, ir.Location.unknown():
        irdl.load_dialects(ir.Module.parse(IRDL_PATH.read_text()))
    return ctx
