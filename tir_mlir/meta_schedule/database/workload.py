"""`Workload`: a program being tuned, keyed by its structural hash (equal for the same program
up to renaming), kept as MLIR text so that it can be stored and parsed back exactly."""

from typing import Optional


from tir_mlir.ir.mlir_error import MLIRError
from tir_mlir.context import get_context, serialized
from tir_mlir.errors import TIRParseError
from tir_mlir.frontend.mlir_guard import parse_untrusted
from tir_mlir.module import IRModule


class Workload:
    def __init__(self, mod=None, shash: Optional[str] = None, mlir_text: Optional[str] = None):
        """From an IRModule (`Workload(mod)`), or from stored text and hash (databases)."""
        if mod is None and mlir_text is None and shash is None:
            raise ValueError("a Workload needs a module, or its stored text and hash")
        self._mod, self._text = mod, mlir_text
        if shash is None:
            from tir_mlir.printer.equality import structural_hash

            shash = structural_hash(mod if mod is not None else self.mod)
        self.shash = shash

    @property
    def mod(self):
        """The IRModule (parsed from the stored text on first use); None for a workload read
        from a file whose program tir-mlir cannot read (e.g. a TVM-serialised module)."""
        if self._mod is None and self._text is not None:
            self._mod = _parse_stored(self._text)
        return self._mod

    @property
    def mlir_text(self) -> Optional[str]:
        if self._text is None and self._mod is not None:
            self._text = self._mod.mlir()
        return self._text

    def __eq__(self, other):
        return isinstance(other, Workload) and other.shash == self.shash

    def __hash__(self):
        return hash(self.shash)

    def __repr__(self):
        return f"Workload({self.shash[:12]})"


@serialized
def _parse_stored(text: str) -> IRModule:
    """A database's workload text (data from a file: any text ends in a TIRParseError)."""
    with get_context():
        try:
            return IRModule(parse_untrusted(text, "<database workload>"))
        except MLIRError as e:
            diags = getattr(e, "error_diagnostics", None) or []
            raise TIRParseError(
                f"a stored workload is not valid MLIR: {diags[0].message if diags else e}"
            ) from None
