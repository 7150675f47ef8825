"""Sampling instructions (TVM 0.21's names): the random choices of a schedule.

Each is a `@primitive` whose `decision` argument is filled in with what was drawn before it is
recorded, so the trace prints `decision=[32, 4, 8, 1]` and replaying it (or a trace whose
decisions were changed with `Trace.with_decision`) reproduces exactly that choice. The draws
come from the schedule's own random state: `Schedule(mod, seed=...)` is deterministic.
The sampling arithmetic lives in passes/schedule/sample_*.py. Also here: enter_postproc, the
instruction that marks where the trace's postprocessing starts.
"""

from typing import List, Optional, Sequence

from tir_mlir.schedule.primitives.host import ScheduleHost
from tir_mlir.analysis.symbolic import SymExpr
from tir_mlir.dialect.ops import Loop
from tir_mlir.errors import ScheduleError
from tir_mlir.passes.schedule import (
    sample_categorical as _cat,
    sample_compute_location as _loc,
    sample_perfect_tile as _tile,
)
from tir_mlir.schedule.handles import INLINE_SID, ROOT_SID, BlockRV, ExprRV, LoopRV
from tir_mlir.schedule.primitive import primitive


class Sampling(ScheduleHost):
    """Random variables and the instructions that sample them."""

    def seed(self, seed: int) -> None:
        """Reset the random state (TVM's Schedule.seed)."""
        self._rng.seed(None if seed is None or seed < 0 else seed)

    def fork_seed(self) -> int:
        """A new seed drawn from this schedule's random state (for a child schedule)."""
        return self._rng.randrange(1, 2**31 - 1)

    def _value(self, v: int) -> ExprRV:
        values = self._rvs.values
        rv = ExprRV(len(values))
        values[rv.sid] = v
        return rv

    def _int(self, v):
        """An ExprRV's sampled value; anything else unchanged (split factors, annotations)."""
        if isinstance(v, ExprRV):
            values = self._rvs.values
            if v.sid not in values:
                raise ScheduleError(f"{v.describe()} does not belong to this schedule")
            return values[v.sid]
        return v

    @primitive
    def sample_perfect_tile(
        self,
        loop: LoopRV,
        n: int,
        max_innermost_factor: int = 16,
        decision: Optional[List[int]] = None,
    ) -> List[ExprRV]:
        """n factors whose product is the loop's extent, innermost <= max_innermost_factor.
        On a symbolic extent (`n`), as TVM: always [-1, 1, ..., 1], the loop stays whole
        (-1 is the factor split infers); tile dynamic loops with sample_categorical."""
        extent = Loop(self._resolve(loop, LoopRV)).extent
        if isinstance(extent, SymExpr):
            decision = _tile.symbolic(n, decision)
        elif decision is None:
            decision = _tile.sample(self._rng, extent, n, max_innermost_factor)
        else:
            _tile.check(extent, n, max_innermost_factor, decision)
        self._note(decision=[int(f) for f in decision])
        return [self._value(int(f)) for f in decision]

    @primitive
    def sample_partitioned_tile(
        self,
        loop: LoopRV,
        n: int,
        partition_pos: int = 0,
        innerpart_factor: int = 1,
        decision: Optional[List[int]] = None,
    ) -> List[ExprRV]:
        """A perfect tile whose parts from partition_pos on multiply to a multiple of
        innerpart_factor. On a symbolic extent, as TVM: always [-1, 1, ..., 1]."""
        extent = Loop(self._resolve(loop, LoopRV)).extent
        if isinstance(extent, SymExpr):
            decision = _tile.symbolic(n, decision, "sample_partitioned_tile")
        else:
            if decision is None:
                decision = _tile.sample_partitioned(
                    self._rng, extent, n, partition_pos, innerpart_factor
                )
            _tile.check_partitioned(extent, n, partition_pos, innerpart_factor, decision)
        self._note(decision=[int(f) for f in decision])
        return [self._value(int(f)) for f in decision]

    @primitive
    def sample_categorical(
        self, candidates: Sequence[int], probs: Sequence[float], decision: Optional[int] = None
    ) -> ExprRV:
        """One of `candidates`, drawn with probabilities `probs`; the decision is its index."""
        _cat.check(candidates, probs)
        if decision is None:
            decision = _cat.sample(self._rng, probs)
        _cat.check_decision(candidates, decision)
        self._note(candidates=list(candidates), probs=[float(p) for p in probs], decision=decision)
        return self._value(candidates[decision])

    @primitive
    def sample_compute_location(self, block: BlockRV, decision: Optional[int] = None) -> LoopRV:
        """A loop to compute_at the block under, uniformly among TVM's candidates: the root
        (decision -1), inline (-2, when compute_inline accepts the block) and loops of its
        first consumer (their position among its loops); compute_at at the root does
        nothing (passes/schedule/sample_compute_location.py)."""
        op = self._block(block)
        locs = _loc.candidates(op)
        choices = _loc.decisions(op, locs)
        if decision is None:
            decision = choices[self._rng.randrange(len(choices))]
        if not isinstance(decision, int) or decision not in choices:
            raise ScheduleError(
                f"sample_compute_location: decision {decision!r} is not one "
                f"of the block's locations {choices}"
            )
        self._note(decision=decision)
        if decision == _loc.ROOT:
            return LoopRV(ROOT_SID)
        if decision == _loc.INLINE:
            return LoopRV(INLINE_SID)
        return self._handle(locs[decision], LoopRV)

    @primitive
    def enter_postproc(self) -> None:
        """Marks where postprocessing starts in the trace (`remove_postproc` cuts there)."""
