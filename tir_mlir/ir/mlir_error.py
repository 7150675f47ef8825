"""`mlir.ir.MLIRError`, typed. The bindings define the class when they load (their
`_site_initialize`), so their stubs do not declare it and a type checker cannot see
`ir.MLIRError`; code that catches it imports this name instead."""

from typing import TYPE_CHECKING, List

from mlir import ir

if TYPE_CHECKING:

    class MLIRError(Exception):
        """What MLIR raises for a parse or verification failure."""

        error_diagnostics: List[ir.DiagnosticInfo]

else:
    MLIRError = ir.MLIRError
