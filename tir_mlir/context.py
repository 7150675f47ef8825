"""The one MLIR context that every tir_mlir module lives in, with the `tir` dialect loaded."""
import functools
import sys
import types

from mlir import ir
from mlir.dialects import irdl

from tir_mlir.dialect import IRDL_PATH


# The bindings look up a Python module per dialect (mlir.dialects.<name>) each time they wrap
# an op and do not remember a failed import: without this empty stand-in every walk over tir
# ops re-searches the import path (a third of the time of a schedule replay).
sys.modules.setdefault("mlir.dialects.tir", types.ModuleType("mlir.dialects.tir"))


@functools.lru_cache(maxsize=None)
def get_context() -> ir.Context:
    ctx = ir.Context()
    with ctx, ir.Location.unknown():
        irdl.load_dialects(ir.Module.parse(IRDL_PATH.read_text()))
    return ctx
