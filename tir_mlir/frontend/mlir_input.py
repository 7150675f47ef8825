"""tir-dialect MLIR text (what `tir-mlir parse --emit mlir` prints) -> IRModule.

The text comes from outside, so it is held to everything the TVMScript parser guarantees:
text that would crash MLIR's parser refused first (mlir_guard.py), MLIR's parser and
verifier, the ops a tir program is made of, and the invariants of `tir_mlir.ir.wellformed`.
Every failure is one TIRParseError at FILE:LINE:COL.
"""

import re


from tir_mlir.ir.mlir_error import MLIRError
from tir_mlir.ir import wellformed
from tir_mlir.context import get_context, serialized
from tir_mlir.errors import SourceLoc, TIRParseError
from tir_mlir.frontend.mlir_guard import parse_untrusted
from tir_mlir.ir.ir_walk import walk
from tir_mlir.module import IRModule

# Dialects (and single ops) a tir program is made of, before and after scheduling.
_DIALECTS = ("affine", "arith", "math", "memref", "scf", "tir")
_OPS = (
    "func.func",
    "func.return",
    "gpu.yield",
    "vector.broadcast",
    "vector.load",
    "vector.store",
)  # vector dtypes (float32x4)


def looks_like_mlir(text: str) -> bool:
    """Whether text on stdin is MLIR rather than TVMScript (which never starts like this)."""
    return re.match(r'\s*(module\b|"builtin\.module"|func\.func\b|#\w+\s*=)', text) is not None


def _looks_like_tvmscript(text: str) -> bool:
    return (
        re.search(
            r"^\s*@(T\.prim_func|I\.ir_module|tvm\.script\.|tir\.prim_func)", text, re.MULTILINE
        )
        is not None
    )


@serialized
def parse_mlir(text: str, filename: str = "<string>") -> IRModule:
    with get_context():
        try:
            module = parse_untrusted(text, filename)
        except MLIRError as e:
            err = _error(e, filename)
            if _looks_like_tvmscript(text):
                raise TIRParseError(
                    f"{err.message} (the file holds TVMScript, not MLIR: "
                    f"name it .tir, or .py for Python, to parse it as "
                    f"TVMScript)",
                    err.loc,
                ) from None
            raise err from None
        try:
            module.operation.verify()
        except MLIRError as e:
            raise _error(e, filename) from None
        for f in module.body.operations:
            for op in [f.operation, *walk(f)]:
                if op.name not in _OPS and op.name.split(".")[0] not in _DIALECTS:
                    raise TIRParseError(
                        f"'{op.name}' is not an op of a tir program", _loc(op.location, filename)
                    )
        wellformed.check(module, filename)
        return IRModule(module)


def _loc(location, filename) -> SourceLoc:
    """The location in `filename` of an op parsed from it (MLIR names the text "-"), or of the
    TVMScript source a debug-info location points to."""
    m = re.search(r'"([^"]*)":(\d+):(\d+)', str(location))
    if m is None:
        return SourceLoc(filename, 1, 1)
    return SourceLoc(filename if m[1] == "-" else m[1], int(m[2]), int(m[3]))


def _error(e: MLIRError, filename) -> TIRParseError:
    diags = getattr(e, "error_diagnostics", None) or []
    if not diags:
        return TIRParseError(f"invalid MLIR: {e}", SourceLoc(filename, 1, 1))
    return TIRParseError(diags[0].message, _loc(diags[0].location, filename))
