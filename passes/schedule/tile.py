"""tile (tir_mlir only, TE's classic tile): split each loop by its factor list, then reorder
to all first levels, then all second levels, ...

    tile(i, j, factors=[[None, 32], [None, 32]])   ->   i_0, j_0, i_1, j_1

Legality: one factor list per loop, all of the same length (>= 2); the loops form a perfect
chain (checked by reorder). It is a macro: the trace records the splits and the reorder it
performs, so a trace with tiles replays in TVM too. The composition lives in
`Schedule.tile`; this module only checks the arguments.
"""

from typing import Sequence

from tir_mlir.errors import ScheduleError


def check(n_loops: int, factors: Sequence[Sequence]):
    if n_loops == 0:
        raise ScheduleError("tile: expects at least one loop")
    if len(factors) != n_loops:
        raise ScheduleError(f"tile: {n_loops} loops but {len(factors)} factor lists")
    levels = {len(f) for f in factors}
    if len(levels) != 1 or min(levels) < 2:
        raise ScheduleError(
            f"tile: every loop needs a factor list of the same length (>= 2), "
            f"got {[list(f) for f in factors]}"
        )
