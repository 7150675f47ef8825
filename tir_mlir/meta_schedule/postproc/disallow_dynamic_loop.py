"""DisallowDynamicLoop: reject a candidate with a loop whose extent is not a constant.

tir-mlir's loops have static bounds by construction (symbolic shapes are rejected by the
parser), so every candidate passes; the postprocessor is kept so TVM's postprocessor lists
run unchanged."""
from tir_mlir.meta_schedule.postproc.postproc import Postproc


class DisallowDynamicLoop(Postproc):
    def apply(self, sch) -> bool:
        return True
