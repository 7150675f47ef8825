"""Linalg input -> an MLIR module in tir_mlir's context, and located errors about it.

The input is MLIR text or a module object of any MLIR Python bindings (torch-mlir ships its
own): it is parsed from its text, so the caller's module is never changed and a module
from another context needs no conversion. Weights that producers keep as `dense_resource`
blobs (torch-mlir does) are read from the `dialect_resources` section of the parsed module's
text: the bindings can make such an attribute but not read one back.
"""

import re

import numpy as np
from mlir import ir

from tir_mlir.ir.mlir_error import MLIRError
from tir_mlir.context import get_context
from tir_mlir.errors import SourceLoc, TIRParseError
from tir_mlir.frontend.mlir_guard import parse_untrusted

# An op's location in the text it was parsed from is named "-" by MLIR's parser.
_FILE_LOC = re.compile(r'"([^"]*)":(\d+):(\d+)')
_TEXT_LOC = re.compile(r'loc\("-":(\d+):(\d+)\)')
_RESOURCE = re.compile(r'^\s*([^\s:]+):\s*"0x([0-9A-Fa-f]*)"', re.MULTILINE)


class LinalgSource:
    """The parsed module, the name errors are reported against, and its resource blobs."""

    def __init__(self, source, filename: str | None = None):
        if isinstance(source, str):
            text, self.filename = source, filename or "<string>"
        elif hasattr(source, "operation"):
            # debug info keeps the producer's locations (a torch model's source lines)
            text = source.operation.get_asm(large_elements_limit=1 << 30, enable_debug_info=True)
            self.filename = filename or "<module>"
        else:
            raise TypeError(
                f"from_linalg expects MLIR text or an MLIR module, got {type(source).__name__}"
            )
        self.text = text
        with get_context():
            try:
                # text from outside may crash MLIR's parser: guarded; a module's own print not
                self.module = (
                    parse_untrusted(text, self.filename)
                    if isinstance(source, str)
                    else ir.Module.parse(text)
                )
                self.module.operation.verify()
            except MLIRError as e:
                diags = getattr(e, "error_diagnostics", None) or []
                loc = self.loc(diags[0].location) if diags else SourceLoc(self.filename, 1, 1)
                raise TIRParseError(
                    diags[0].message if diags else f"invalid MLIR: {e}", loc
                ) from None
        self._blobs = None

    def loc(self, location) -> SourceLoc:
        """Where `location` (of an op parsed from this text) is: in this file, or in the
        producer's source when the text carries debug locations."""
        m = _FILE_LOC.search(str(location))
        if m is None:
            return SourceLoc(self.filename, 1, 1)
        return SourceLoc(self.filename if m[1] == "-" else m[1], int(m[2]), int(m[3]))

    def location(self, x) -> ir.Location:
        """The location of an op (or block argument) of the input for the ops built from it:
        MLIR names parsed text "-", this file's name replaces it."""
        loc = x.location
        m = _TEXT_LOC.fullmatch(str(loc))
        if m is None:
            return loc
        return ir.Location.file(self.filename, int(m[1]), int(m[2]))

    def error(self, message: str, op) -> TIRParseError:
        return TIRParseError(message, self.loc(op.location))

    def elements(self, attr: ir.Attribute, op) -> ir.DenseElementsAttr:
        """A tensor constant's value as a DenseElementsAttr (`dense_resource` blobs decoded)."""
        if isinstance(attr, ir.DenseElementsAttr):
            return attr
        m = re.fullmatch(r"dense_resource<([^>]+)>\s*:\s*tensor<.*>", str(attr))
        if m is None:
            raise self.error(f"unsupported constant {str(attr)[:60]}", op)
        blob = self.blobs().get(m[1])
        if blob is None:
            raise self.error(
                f"the resource blob {m[1]!r} is not in the input (elided? print "
                f"the module with large_elements_limit=1 << 30)",
                op,
            )
        shaped = ir.ShapedType(attr.type)
        dtype = _numpy_dtype(shaped.element_type)
        if dtype is None:
            raise self.error(f"unsupported constant element type {shaped.element_type}", op)
        data = np.frombuffer(blob, dtype=dtype)
        if data.size != int(np.prod(shaped.shape)):
            raise self.error(
                f"resource {m[1]!r} holds {data.size} elements, its type "
                f"{attr.type} {int(np.prod(shaped.shape))}",
                op,
            )
        if dtype == np.bool_:
            data = data.astype(np.bool_)
        return ir.DenseElementsAttr.get(  # pyright: ignore[reportCallIssue]
            np.ascontiguousarray(data.reshape(shaped.shape)),  # pyright: ignore[reportArgumentType]
            type=shaped.element_type,
        )  # (an ndarray has the buffer protocol the stub asks for)

    def blobs(self) -> dict:
        """name -> bytes of the builtin resource blobs (the first 4 bytes, the alignment,
        dropped)."""
        if self._blobs is None:
            # the parsed module's own text: the context renames a blob whose name it holds
            # already (the same file imported twice)
            text = str(self.module.operation.get_asm(large_elements_limit=1 << 30))  # not binary
            start = text.find("dialect_resources")
            section = text[start:] if start >= 0 else ""
            self._blobs = {
                name: bytes.fromhex(hexdata)[4:] for name, hexdata in _RESOURCE.findall(section)
            }
        return self._blobs


def _numpy_dtype(t: ir.Type):
    if isinstance(t, ir.IntegerType):
        return {1: np.bool_, 8: np.int8, 16: np.int16, 32: np.int32, 64: np.int64}.get(t.width)
    return {"f16": np.float16, "f32": np.float32, "f64": np.float64}.get(str(t))
