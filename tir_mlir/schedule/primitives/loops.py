"""Loop transformations (TVM's loop_transformation): split, fuse, reorder, add_unit_loop,
merge, loop_partition, and tir_mlir's tile (splits + a reorder). The rewrites live in
tir_mlir/passes/schedule/<primitive>.py.
"""

from typing import List, Optional, Sequence

from tir_mlir.schedule.primitives.host import ScheduleHost
from tir_mlir.passes.schedule import add_unit_loop as _unit
from tir_mlir.passes.schedule import fuse as _fuse
from tir_mlir.passes.schedule import loop_partition as _partition
from tir_mlir.passes.schedule import merge as _merge
from tir_mlir.passes.schedule import reorder as _reorder
from tir_mlir.passes.schedule import split as _split
from tir_mlir.passes.schedule import tile as _tile

from tir_mlir.analysis.op_index import sids_of
from tir_mlir.analysis.structure import walk
from tir_mlir.schedule.handles import BlockOrLoop, BlockRV, LoopRV
from tir_mlir.schedule.primitive import macro, primitive


class Loops(ScheduleHost):
    """Primitives that change the loop nest."""

    @primitive
    def split(
        self,
        loop: LoopRV,
        factors: Sequence[Optional[int]],
        preserve_unit_iters: bool = True,
        disable_predication: bool = False,
        *,
        names: Optional[Sequence[str]] = None,
    ) -> List[LoopRV]:
        """Split a loop into len(factors) nested loops (one factor may be None: inferred).
        `names` (tir_mlir only) names the new loops; default `{name}_0`, `{name}_1`, ..."""
        op = self._resolve(loop, LoopRV)
        new = _split.split(
            op,
            [self._int(f) for f in factors],
            preserve_unit_iters=preserve_unit_iters,
            disable_predication=disable_predication,
            names=names,
        )
        self._consume(loop, "split")
        return [self._handle(n, LoopRV) for n in new]

    @primitive
    def fuse(self, *loops: LoopRV, preserve_unit_iters: bool = True) -> LoopRV:
        """Fuse a perfect nest of loops (outermost first) into one loop `i_j_fused`."""
        ops = self._resolve_many(loops, LoopRV)
        new = _fuse.fuse(ops, preserve_unit_iters=preserve_unit_iters)
        for lp in loops:
            self._consume(lp, "fuse")
        return self._handle(new, LoopRV)

    @primitive
    def reorder(self, *ordered_loops: LoopRV) -> None:
        """Permute loops of one chain into the given order."""
        _reorder.reorder(self._resolve_many(ordered_loops, LoopRV))

    @primitive
    def add_unit_loop(self, block_or_loop: BlockOrLoop) -> LoopRV:
        """Wrap a block or loop in a new loop `u` of extent 1."""
        return self._handle(
            _unit.add_unit_loop(self._resolve(block_or_loop, (BlockRV, LoopRV))), LoopRV
        )

    @primitive
    def merge(self, *loops: LoopRV) -> LoopRV:
        """Merge consecutive sibling loops of one extent into one loop `<first>_m` running their
        bodies in turn; the loops' handles are consumed."""
        ops = self._resolve_many(loops, LoopRV)
        new = _merge.merge(ops)
        for lp in loops:
            self._consume(lp, "merge")
        return self._handle(new, LoopRV)

    @primitive
    def loop_partition(
        self, loop: LoopRV, factors: Sequence[Optional[int]], preserve_unit_iters: bool = True
    ) -> List[LoopRV]:
        """Cut `loop` into consecutive loops of the given extents (one may be None: the rest;
        without None one more loop takes the rest), each a copy of the body in its own opaque
        block. Handles of the loop and of what it contained are consumed."""
        op = self._resolve(loop, LoopRV)
        before = sids_of([op, *walk(op)])
        new = _partition.loop_partition(op, list(factors))
        self._consume_gone(before, "loop_partition")
        return [self._handle(n, LoopRV) for n in new]

    @macro
    def tile(self, *loops: LoopRV, factors: Sequence[Sequence[Optional[int]]]) -> List[LoopRV]:
        """tir_mlir only: split every loop by its factor list and reorder level by level.
        `tile(i, j, factors=[[None, 32], [None, 32]])` returns [i_0, j_0, i_1, j_1]. Recorded
        in the trace as the splits and the reorder."""
        _tile.check(len(loops), factors)
        for lp in loops:
            self._resolve(lp, LoopRV)
        parts = [self.split(lp, list(f)) for lp, f in zip(loops, factors)]
        ordered = [p[level] for level in range(len(factors[0])) for p in parts]
        self.reorder(*ordered)
        return ordered
