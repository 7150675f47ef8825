"""RewriteReductionBlock: split every reduction block into its init and update blocks
(decompose_reduction at its outermost reduction loop), TVM's postprocessor. Like TVM, a block
whose reduction is bound to threads is left whole (gpu-lower-cross-thread-reduction).

A reduction loop of another block may enclose this one (compute_at under a consumer's `k`):
it only repeats the block, so decomposing there would hoist the init out of repeated updates.
decompose_reduction refuses such a loop, and the next reduction loop inward is taken; a block
with no legal loop keeps its init, which lowers as well.

The init block of a block marked `meta_schedule.auto_tensorize` gets that mark too, for
RewriteTensorize: the intrinsic of the block's `meta_schedule.auto_tensorize_init`
(MultiLevelTilingTensorCore's), or "" (no intrinsic: a hint, which RewriteTensorize leaves or
turns into a vectorized init loop), as TVM's postprocessor does."""

from tir_mlir.errors import ScheduleError
from tir_mlir.meta_schedule.postproc.postproc import Postproc, blocks

AUTO_TENSORIZE = "meta_schedule.auto_tensorize"
AUTO_TENSORIZE_INIT = "meta_schedule.auto_tensorize_init"


class RewriteReductionBlock(Postproc):
    def apply(self, sch) -> bool:
        for func, name in blocks(sch):
            block = sch.get_block(name, func)
            if not sch.has_init(block):
                continue
            loops = sch.get_loops(block)
            red = [lp for lp in loops if sch.get_loop_iter_type(lp) == "R"]
            if any(sch.get(lp).thread_binding for lp in red):
                continue  # a cross-thread reduction: its lowering needs the init
            for lp in red:
                try:
                    init = sch.decompose_reduction(block, lp)
                except ScheduleError:
                    continue
                marks = sch.get_annotations(block)
                intrin = marks.get(AUTO_TENSORIZE_INIT)
                if AUTO_TENSORIZE in marks or intrin is not None:
                    sch.annotate(init, AUTO_TENSORIZE, "" if intrin is None else intrin)
                if intrin is not None:
                    sch.unannotate(block, AUTO_TENSORIZE_INIT)
                break
        return True
