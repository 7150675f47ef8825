"""IRModules as text that survives a process boundary or a database: the MLIR of the `tir`
dialect (generic form), parsed back exactly."""
from mlir import ir

from tir_mlir.context import get_context
from tir_mlir.module import IRModule


def module_from_mlir(text: str) -> IRModule:
    with get_context():
        return IRModule(ir.Module.parse(text))
