"""The shell shared by `transpose-gathers` and `transpose-scatters`: a stage built for the
target's vector registers (their width in bits and their count, cpu_model.py) that rewrites,
block by block, groups of a function's candidate ops (the builds, the lane stores) in registers.
A subclass names its candidates and rewrites one block's; the walk is here."""

from mlir import ir

from tir_mlir.passes.lowering.buffer_roots import noalias_args
from tir_mlir.passes.lowering.common import functions, group_in_order
from tir_mlir.passes.lowering.cpu_model import VECTOR_BITS, cpu_model


class RegisterTransposeStage:
    name = "register-transpose"

    def __init__(self, vector_bits: int = VECTOR_BITS, vector_registers: int = 32):
        self.vector_bits = vector_bits
        self.vector_registers = vector_registers

    @classmethod
    def for_target(cls, target):
        model = cpu_model(target)
        return cls(model.vector_bits, model.vector_registers)

    def __call__(self, module: ir.Module):
        for f in functions(module):
            noalias = noalias_args(f)
            for block, items in group_in_order(self.candidates(f), self.block_of):
                order = {o.operation: i for i, o in enumerate(block.operations)}
                self.rewrite(block, order, items, noalias)

    def candidates(self, f) -> list:
        """The ops of function `f` (or items naming them) the stage may rewrite, in IR order."""
        raise NotImplementedError

    def block_of(self, item) -> ir.Block:
        """The block of a candidate."""
        return item.block

    def rewrite(self, block: ir.Block, order: dict, items: list, noalias):
        """Rewrite the candidates `items` of `block`; `order` maps each of its ops to its
        position."""
        raise NotImplementedError
