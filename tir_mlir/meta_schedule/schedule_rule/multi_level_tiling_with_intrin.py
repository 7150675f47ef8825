"""MultiLevelTilingWithIntrin: auto-tensorization, TVM's rule of the same name.

The block's loops are first mapped onto the loops of a registered TensorIntrin's `desc`
(each desc loop onto a block loop of the same iteration type whose extent it divides):
the mapped loops are split by the desc extents, their inner parts moved innermost in desc
order and blockized, and the outer block is marked `meta_schedule.auto_tensorize` =
intrinsic name (the block itself keeps MultiLevelTiling's `tiling_structure` mark, as in
TVM). MultiLevelTiling's sub-rules then tile the outer block's loops. The postprocessor
RewriteTensorize replaces the marked blocks by the intrinsic's implementation.

A mapping is accepted only when `tensorize` accepts the blockized block (tried on a copy),
so the structural matcher of `Schedule.tensorize` decides what an intrinsic can cover; a
block no mapping fits is left to the other rules (the schedule is returned unchanged).
"""

import itertools
from typing import Callable, List, Optional, Tuple

from tir_mlir.errors import ScheduleError
from tir_mlir.meta_schedule.schedule_rule.multi_level_tiling import MultiLevelTiling, State
from tir_mlir.schedule.tensor_intrin import TensorIntrin

AUTO_TENSORIZE = "meta_schedule.auto_tensorize"
MAX_MAPPINGS = 32  # candidate loop mappings tried per block


class MultiLevelTilingWithIntrin(MultiLevelTiling):
    def __init__(
        self,
        intrin_name: str,
        structure: str = "SSRSRS",
        tile_binds=None,
        max_innermost_factor: Optional[int] = 64,
        vector_load_lens=None,
        reuse_read=None,
        reuse_write=None,
    ):
        super().__init__(
            structure, tile_binds, max_innermost_factor, vector_load_lens, reuse_read, reuse_write
        )
        TensorIntrin.get(intrin_name)  # ScheduleError now for an unknown name
        self.intrin_name = intrin_name

    def apply(self, sch, block) -> List:
        # MultiLevelTiling on a copy: the block keeps no tiling mark when no mapping fits
        return super().apply(sch.copy(), block) or [sch]

    def _sub_rules(self) -> List[Callable[[State], List[State]]]:
        """TVM's order: the block marked `tiling_structure` is tiled for the intrinsic and
        blockized first; the outer block is the one the tiling sub-rules then work on."""
        return [self._tile_for_intrin] + super()._sub_rules()

    def _tile_for_intrin(self, st: State) -> List[State]:
        tiled = tile_for_intrin(st.sch, st.block, self.intrin_name)
        if tiled is None:
            return []
        st.sch, st.block = tiled
        return [st]


def _desc_loops(intrin_name: str) -> List[Tuple[str, int]]:
    """(iteration type, extent) of the desc's loops, outermost first."""
    from tir_mlir.schedule.schedule import Schedule

    d = Schedule(TensorIntrin.get(intrin_name).desc)
    names = d.get_block_names()  # (an explicit root block may wrap the computing one)
    if not names:
        return []
    loops = d.get_loops(d.get_block(names[-1]))
    return [(d.get_loop_iter_type(lp), d.get(lp).extent) for lp in loops]


def _mappings(desc, target):
    """Injective maps desc loop -> target loop index (types equal, extent divisible), the
    ones using the innermost target loops first."""
    options = [[k for k, (t, e) in enumerate(target) if t == dt and e % de == 0] for dt, de in desc]
    maps = [m for m in itertools.product(*options) if len(set(m)) == len(m)]
    maps.sort(key=lambda m: sorted(m, reverse=True), reverse=True)
    return maps[:MAX_MAPPINGS]


def tile_for_intrin(sch, block, intrin_name: str):
    """(a copy of `sch` with the block's intrinsic-shaped inner loops blockized, the outer
    block), or None when no mapping tensorizes (TVM's TileForIntrin)."""
    desc = _desc_loops(intrin_name)
    if not desc:
        return None
    loops = sch.get_loops(block)
    target = [(sch.get_loop_iter_type(lp), sch.get(lp).extent) for lp in loops]
    for mapping in _mappings(desc, target):
        s = sch.copy()
        try:
            outer = _blockize_inner(s, loops, target, desc, mapping)
            s.copy().tensorize(outer, intrin_name)  # does the intrinsic match?
        except ScheduleError:
            continue
        s.annotate(outer, AUTO_TENSORIZE, intrin_name)
        return s, outer
    return None


def _blockize_inner(sch, loops, target, desc, mapping):
    outer_parts, inner, current = [], {}, []  # current: the loops after the splits
    for k, lp in enumerate(loops):
        if k not in mapping:
            outer_parts.append(lp)
            current.append(lp)
            continue
        # split even when the extents are equal (a unit outer loop), as TVM's
        # TileWithTensorIntrin: the trace then fits any tile sizes a replay draws
        o, i = sch.split(lp, [None, desc[mapping.index(k)][1]])
        outer_parts.append(o)
        inner[k] = i
        current += [o, i]
    ordered = outer_parts + [inner[k] for k in mapping]
    same = 0
    while same < len(ordered) and ordered[same].sid == current[same].sid:
        same += 1
    # Under thread-bound loops (a copy computed at a GPU tile) the loops already in place
    # enclose other blocks and cannot move: the reorder starts after them. Elsewhere it names
    # every loop, as TVM's trace does.
    start = same if any(sch.get(lp).thread_binding for lp in current[:same]) else 0
    if [lp.sid for lp in ordered] != [lp.sid for lp in loops] and start < len(ordered):
        sch.reorder(*ordered[start:])
    return sch.blockize(inner[mapping[0]])
