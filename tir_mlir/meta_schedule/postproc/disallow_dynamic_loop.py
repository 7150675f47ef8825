"""DisallowDynamicLoop: TVM rejects a candidate with a loop whose extent is not a constant.

tir-mlir tunes symbolic programs (one kernel for every size, meta_schedule/sizes.py), whose
loops over `n` are the point, so every candidate passes; the postprocessor is kept so TVM's
postprocessor lists run unchanged."""
from tir_mlir.meta_schedule.postproc.postproc import Postproc


class DisallowDynamicLoop(Postproc):
    def apply(self, sch) -> bool:
        return True
