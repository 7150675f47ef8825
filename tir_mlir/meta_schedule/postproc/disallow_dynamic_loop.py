"""DisallowDynamicLoop: TVM rejects a candidate with a loop whose extent is not a constant.

tir-mlir tunes symbolic programs (one kernel for every size, meta_schedule/sizes.py), whose
loops over a size parameter `n` are the point, so those pass. A loop whose bounds depend on an
enclosing loop (`for k in range(i)`, a triangular nest) is rejected, as TVM rejects it: the
tiling and the cost model assume a rectangular iteration space."""

from tir_mlir.errors import ScheduleError
from tir_mlir.meta_schedule.postproc.postproc import Postproc, blocks


class DisallowDynamicLoop(Postproc):
    def apply(self, sch) -> bool:
        for func, name in blocks(sch):
            for loop in sch.get_loops(sch.get_block(name, func)):
                try:
                    sch.get(loop).extent
                except ScheduleError:  # bounds that depend on an outer loop
                    return False
        return True
