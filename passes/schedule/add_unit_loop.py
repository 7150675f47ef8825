"""add_unit_loop: wrap a block or a loop in a new loop of extent 1 named `u`.

    block(...)      ==>    for u in range(1):
                               block(...)

The new loop's variable is not used by any binding, so nothing else changes. Always legal.
"""

from mlir import ir

from tir_mlir.dialect.ops import Loop
from tir_mlir.analysis import structure as analysis


def add_unit_loop(op: ir.Operation) -> ir.Operation:
    new = Loop.build("u", 1, loc=op.location, ip=ir.InsertionPoint(op))
    op.move_before(analysis.terminator(new.body))
    return new.op
