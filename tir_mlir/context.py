"""The one MLIR context that every tir_mlir module lives in, with the `tir` dialect loaded."""
import functools

from mlir import ir
from mlir.dialects import irdl

from tir_mlir.dialect import IRDL_PATH


@functools.lru_cache(maxsize=None)
def get_context() -> ir.Context:
    ctx = ir.Context()
    with ctx, ir.Location.unknown():
        irdl.load_dialects(ir.Module.parse(IRDL_PATH.read_text()))
    return ctx
