"""AutoInline: inline elementwise blocks into their consumers (or producers), so the
tiling rules see one compute block per reduction (TVM's AutoInline).

A block is inlined into its consumers when it is spatial only and does not write a function
parameter; compute_inline itself checks the rest (single store, injective indices) and the
rule leaves the block alone when it refuses. A block that calls an operator of
`disallow_op` (TVM's op names, e.g. "tir.exp": the CPU default, so an exponential is computed
once and stored rather than recomputed in every consumer) is not inlined, nor, with
`disallow_if_then_else` (TVM's CPU default), a block holding a `T.if_then_else` or an `if`:
a padding block stays a block of its own, computed at a sampled loop of its consumer by
RandomComputeLocation, instead of putting its bounds test into the consumer's innermost
loop.

One case TVM's rule never meets, since Relax hands it one fused operator per function, but a
whole imported model (a linalg import) is one function: a producer that calls a math
function (`T.erf` of a GELU) is not inlined into a consumer that reads each of its elements
more than once (the next layer's matmul reads `gelu[i, k]` for every output column `j`): the
call would run that many times per element. A cheap producer (a bias add) is still inlined.
"""

from typing import List

from mlir import ir

from tir_mlir.analysis import structure
from tir_mlir.context import get_context
from tir_mlir.dialect.ops import Block
from tir_mlir.errors import ScheduleError
from tir_mlir.frontend.intrinsics import MATH_BINARY, MATH_PREDICATE, MATH_UNARY, PREFIXES
from tir_mlir.ir.ir_walk import walk_all
from tir_mlir.meta_schedule.schedule_rule.schedule_rule import ScheduleRule


class AutoInline(ScheduleRule):
    def __init__(
        self,
        into_producer: bool = False,
        into_consumer: bool = True,
        inline_const_tensor: bool = True,
        disallow_if_then_else: bool = True,
        require_injective: bool = True,
        require_ordered: bool = True,
        disallow_op=None,
    ):
        self.into_producer = into_producer
        self.into_consumer = into_consumer
        self.inline_const_tensor = inline_const_tensor
        self.disallow_if_then_else = disallow_if_then_else
        self.require_injective = require_injective
        self.require_ordered = require_ordered
        self.disallow_op = list(disallow_op or [])

    def apply(self, sch, block) -> List:
        if "R" in sch.get_iter_types(block) or not sch.is_top_level_block(block):
            return [sch]
        if self.disallow_op and _calls_any(sch.get(block).op, self.disallow_op):
            return [sch]
        if self.disallow_if_then_else and _has_if_then_else(sch.get(block).op):
            return [sch]
        if (
            self.into_consumer
            and not sch.is_output_block(block)
            and sch.get_consumers(block)
            and not _recomputed_math(sch, block)
        ):
            try:
                sch.compute_inline(block)
                return [sch]
            except ScheduleError:
                pass
        if self.into_producer and sch.get_producers(block):
            try:
                sch.reverse_compute_inline(block)
            except ScheduleError:
                pass
        return [sch]


def _calls_any(block_op, op_names) -> bool:
    """Whether the block's body calls one of TVM's operators `op_names` ("tir.exp")."""
    math_ops = {**MATH_UNARY, **MATH_BINARY, **MATH_PREDICATE}
    wanted, calls = set(), set()
    for name in op_names:
        short = name
        for p in PREFIXES:
            if short.startswith(p):
                short = short[len(p) :]
                break
        if short in math_ops:
            wanted.add(math_ops[short])
        calls.add(short)  # intrinsics lowered later: `tir.call "sigmoid"`
    with get_context():
        for op in walk_all(block_op):
            if op.name in wanted:
                return True
            if op.name == "tir.call" and str(op.attributes["callee"]).strip('"') in calls:
                return True
    return False


def _recomputed_math(sch, block) -> bool:
    """Whether the block calls a math function and a consumer reads one of its elements in
    more than one iteration (an iter var of extent > 1 in none of the read's indices)."""
    op = sch.get(block).op
    math_ops = {*MATH_UNARY.values(), *MATH_BINARY.values()}
    with get_context():
        if not any(o.name in math_ops or o.name == "tir.call" for o in walk_all(op)):
            return False
        # (the analysis, not sch.get_consumers: a rule's queries would enter the trace)
        _, written = structure.block_reads_writes(op)
        for consumer in structure.blocks_accessing(
            structure.scope_of(op), written, stores=False, skip=op
        ):
            cons = Block(consumer)
            varying = {
                a
                for a, d in zip(cons.body.arguments, cons.domains)
                if not (isinstance(d[1], int) and d[1] <= 1)
            }
            body = [x for top in cons.body.operations for x in [top.operation, *walk_all(top)]]
            for o in body:  # (the init region's reads are once per element)
                if (
                    o.name == "memref.load"
                    and o.operands[0] in written
                    and not varying <= _index_vars(list(o.operands)[1:])
                ):
                    return True
    return False


def _index_vars(indices) -> set:
    """The block arguments (iter vars) the index values are computed from."""
    out, todo = set(), list(indices)
    while todo:
        v = todo.pop()
        if isinstance(v, ir.BlockArgument):
            out.add(v)
        elif not isinstance(v.owner, ir.Block):
            todo += list(v.owner.operands)
    return out


def _has_if_then_else(block_op) -> bool:
    """`T.if_then_else` and `if` statements are both `scf.if` in the block body."""
    with get_context():
        return any(op.name == "scf.if" for op in walk_all(block_op))
