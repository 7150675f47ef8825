"""Read-only Schedule queries the tuner's rules need (not traced: they change nothing).

TVM's rules call C++ analyses directly; here they are Schedule methods, so a schedule rule
stays a plain function over the public Schedule API. A mixin of Schedule.
"""

import functools
from typing import List, Tuple

from mlir import ir

from tir_mlir.context import get_context
from tir_mlir.dialect.ops import Block, Loop
from tir_mlir.ir.ir_walk import walk_all
from tir_mlir.schedule.primitives.host import ScheduleHost
from tir_mlir.analysis import structure as analysis, buffer_util
from tir_mlir.passes.schedule import sample_compute_location as _loc
from tir_mlir.schedule.handles import BlockRV, LoopRV


def _query(fn):
    @functools.wraps(fn)
    def wrapper(self, *args, **kwargs):
        with get_context():
            return fn(self, *args, **kwargs)

    return wrapper


class RuleQueries(ScheduleHost):
    @_query
    def get_iter_types(self, block: BlockRV) -> List[str]:
        """The block's iter var kinds: "S", "R" or "O" each."""
        return Block(self._block(block)).iter_types

    @_query
    def get_loop_iter_type(self, loop: LoopRV) -> str:
        """ "S" (spatial), "R" (reduction) or "O" (opaque): TVM's GetLoopIterType."""
        return analysis.loop_iter_type(self._resolve(loop, LoopRV))

    @_query
    def get_block_buffers(self, block: BlockRV) -> Tuple[List[str], List[str]]:
        """Names of the buffers the block reads and writes."""
        b = Block(self._block(block))
        return (
            [buffer_util.buffer_name(v) for v in buffer_util.block_reads(b)],
            [buffer_util.buffer_name(v) for v in buffer_util.block_writes(b)],
        )

    @_query
    def is_top_level_block(self, block: BlockRV) -> bool:
        """True when no other block encloses this one (TVM: its parent is the root block)."""
        op = self._block(block)
        return not any(analysis.is_block(a) for a in analysis.ancestors(op))

    @_query
    def is_output_block(self, block: BlockRV) -> bool:
        """True when the block writes a function parameter."""
        b = Block(self._block(block))
        return any(buffer_util.is_func_arg(v) for v in buffer_util.block_writes(b))

    @_query
    def has_trivial_bindings(self, block: BlockRV) -> bool:
        """Every iter var bound to one enclosing loop variable, each loop used once."""
        b = Block(self._block(block))
        loops = analysis.enclosing_loops(b.op)
        ivs = [Loop(lp).iv for lp in loops]
        res = b.bindings.results
        if len(res) != len(ivs):
            return False
        for e in res:
            if not isinstance(e, ir.AffineDimExpr):
                return False
            if not any(b.dims[e.position] == iv for iv in ivs):
                return False
        return True

    @_query
    def num_compute_locations(self, block: BlockRV) -> int:
        """How many loops sample_compute_location can choose for the block."""
        return len(_loc.candidates(self._block(block)))

    @_query
    def compute_location_decisions(self, block: BlockRV) -> List[int]:
        """The decisions sample_compute_location can take for the block (-2 inline, -1 the
        root, then TVM's loop positions)."""
        op = self._block(block)
        return _loc.decisions(op, _loc.candidates(op))

    @_query
    def get_block_names(self, func_name=None) -> List[str]:
        """Names of every block of a function, in program order (TVM walks the root block's
        subtree the same way)."""
        func = self._mod[self._func(func_name)]
        return [Block(op).name for op in walk_all(func) if analysis.is_block(op)]

    @_query
    def get_read_iter_vars(self, block: BlockRV) -> List[set]:
        """Per buffer the block reads (T.reads order): the positions of the block iter vars
        its indices use (all of them when an index is not affine)."""
        b = Block(self._block(block))
        args = list(b.body.arguments)
        out = []
        for buf in buffer_util.block_reads(b):
            used = set()
            for op, kind, v in buffer_util.accesses(b.op):
                if kind != "load" or v != buf:
                    continue
                for idx in list(op.operands)[1:]:
                    leaves = []
                    try:
                        buffer_util.to_affine(idx, leaves)
                    except buffer_util.NotAffine:
                        used |= set(range(len(args)))
                        continue
                    used |= {k for k, a in enumerate(args) for leaf in leaves if leaf == a}
            out.append(used)
        return out

    @_query
    def get_annotations(self, block_or_loop) -> dict:
        """The annotations of a block or loop as Python values."""
        return dict(self.get(block_or_loop).annotations)

    @_query
    def has_init(self, block: BlockRV) -> bool:
        """True for a reduction block that still has its T.init()."""
        return Block(self._block(block)).init is not None
