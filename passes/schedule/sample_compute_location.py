"""sample_compute_location: where a producer block may be computed (TVM's
CollectComputeLocation).

The candidate loops are among the loops of the first consumer, down to the deepest one
enclosing every consumer, outermost first, as TVM picks them: unit loops skipped, no
data-parallel loop after a reduction loop, no reduction loop after the last data-parallel one,
none that encloses the block itself. A decision is the loop's position among the first
consumer's loops (TVM's), -1 for "stay where it is" (the root) and -2 for "inline" (a
candidate when compute_inline accepts the block).
"""

from typing import Dict, List

from mlir import ir

from tir_mlir.analysis import structure as analysis
from tir_mlir.dialect.ops import Loop
from tir_mlir.passes.schedule.compute_inline import can_compute_inline

ROOT, INLINE = -1, -2


def consumers(block: ir.Operation) -> List[ir.Operation]:
    parent = analysis.scope_of(block)
    _, writes = analysis.block_reads_writes(block)
    return [
        b
        for b in analysis.child_blocks(parent)
        if b != block and any(r == w for r in analysis.block_reads_writes(b)[0] for w in writes)
    ]


def candidates(block: ir.Operation) -> Dict[int, ir.Operation]:
    """decision -> loop, for the loops the block may be computed at (see the module doc)."""
    users = consumers(block)
    if not users:
        return {}
    mine = analysis.enclosing_loops(block)
    loops = analysis.enclosing_loops(users[0])
    n = 0  # the loops down to the deepest enclosing every consumer
    while n < len(loops) and all(analysis.is_ancestor(loops[n], u) for u in users[1:]):
        n += 1
    types = [analysis.loop_iter_type(lp) for lp in loops[:n]]
    last_spatial = max((k for k, t in enumerate(types) if t == "S"), default=-1)
    out, reduced = {}, False
    for k in range(n):
        if Loop(loops[k]).extent == 1:
            continue
        if types[k] == "S":
            if reduced:
                break
        else:
            reduced = True
            if k > last_spatial:
                break
        if not any(loops[k] == m for m in mine):
            out[k] = loops[k]
    return out


def decisions(block: ir.Operation, locs: Dict[int, ir.Operation]) -> List[int]:
    """Every decision sample_compute_location may take for the block, in TVM's order."""
    return ([INLINE] if can_compute_inline(block) else []) + [ROOT] + list(locs)
