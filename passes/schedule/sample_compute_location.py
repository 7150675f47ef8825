"""sample_compute_location: where a producer block may be computed.

The candidates are the loops that enclose every consumer of the block (in its scope) but not
the block itself, outermost first: compute_at under any of them keeps each consumer after
the part of the producer it reads. TVM's decision format: an index into that list, -1 for
"stay where it is" (the root) and -2 for "inline".
"""
from typing import List

from mlir import ir

from tir_mlir.analysis import structure as analysis

ROOT, INLINE = -1, -2


def consumers(block: ir.Operation) -> List[ir.Operation]:
    parent = analysis.scope_of(block)
    _, writes = analysis.block_reads_writes(block)
    return [b for b in analysis.child_blocks(parent) if b != block
            and any(r == w for r in analysis.block_reads_writes(b)[0] for w in writes)]


def candidates(block: ir.Operation) -> List[ir.Operation]:
    users = consumers(block)
    if not users:
        return []
    mine = analysis.enclosing_loops(block)
    common = [lp for lp in analysis.enclosing_loops(users[0])
              if not any(lp == m for m in mine)
              and all(analysis.is_ancestor(lp, u) for u in users[1:])]
    return common
