"""Schedule methods of issue 13's loop primitives: loop_partition, merge (TVM 0.21 signatures).

A mixin of `Schedule` (a base class of it in schedule.py); each method is a `@primitive`
delegating to a rewrite in `tir_mlir/passes/schedule/`.
"""
from typing import List, Optional, Sequence

from tir_mlir.passes.schedule import loop_partition as _partition
from tir_mlir.passes.schedule import merge as _merge
from tir_mlir.schedule.block_motion import _consume_erased, _sids
from tir_mlir.schedule.handles import LoopRV
from tir_mlir.analysis.structure import walk
from tir_mlir.schedule.primitive import primitive


class LoopPrimitives:

    @primitive
    def loop_partition(self, loop: LoopRV, factors: Sequence[Optional[int]],
                       preserve_unit_iters: bool = True) -> List[LoopRV]:
        """Cut `loop` into consecutive loops of the given extents (one may be None: the rest;
        without None one more loop takes the rest), each a copy of the body in its own opaque
        block. Handles of the loop and of what it contained are consumed."""
        op = self._resolve(loop, LoopRV)
        before = _sids([op, *walk(op)])
        new = _partition.loop_partition(op, list(factors))
        _consume_erased(self, before, "loop_partition")
        return [self._handle(n, LoopRV) for n in new]

    @primitive
    def merge(self, *loops: LoopRV) -> LoopRV:
        """Merge consecutive sibling loops of one extent into one loop `<first>_m` running their
        bodies in turn; the loops' handles are consumed."""
        ops = self._resolve_many(loops, LoopRV)
        new = _merge.merge(ops)
        for lp in loops:
            self._consume(lp, "merge")
        return self._handle(new, LoopRV)
