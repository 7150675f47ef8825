"""RewriteTensorize: tensorize every block MultiLevelTilingWithIntrin marked
`meta_schedule.auto_tensorize` (TVM's postprocessor of the same name). A block the
intrinsic no longer matches rejects the candidate. The init block RewriteReductionBlock
split off a marked block (it reads nothing; it may carry the mark too) is not tensorized
unless its mark is an initializing intrinsic (one whose desc reads nothing, as
MultiLevelTilingTensorCore's `wmma_fill`): with `vectorize_init_loop` its innermost loop is
vectorized, when still serial. The empty mark RewriteReductionBlock gives an init block without
an intrinsic stays, unless `vectorize_init_loop` vectorizes that init (TVM's behaviour)."""

import functools

from tir_mlir.errors import ScheduleError
from tir_mlir.meta_schedule.postproc.postproc import Postproc, blocks
from tir_mlir.meta_schedule.schedule_rule.multi_level_tiling_with_intrin import AUTO_TENSORIZE
from tir_mlir.schedule.schedule import Schedule
from tir_mlir.schedule.tensor_intrin import TensorIntrin


class RewriteTensorize(Postproc):
    def __init__(self, vectorize_init_loop: bool = False):
        self.vectorize_init_loop = vectorize_init_loop

    def apply(self, sch) -> bool:
        marked = []  # first all marks: tensorize erases the blocks it covers
        for func, name in blocks(sch):
            block = sch.get_block(name, func)
            intrin = sch.get_annotations(block).get(AUTO_TENSORIZE)
            if intrin is not None:
                marked.append((func, name, block, intrin))
        inits = []
        for func, name, block, intrin in marked:
            if intrin == "":
                if self.vectorize_init_loop:
                    sch.unannotate(block, AUTO_TENSORIZE)
                    inits.append(block)
                continue
            sch.unannotate(block, AUTO_TENSORIZE)
            if not sch.get_block_buffers(block)[0] and not _initializes(intrin):
                inits.append(block)
                continue
            try:
                sch.tensorize(block, intrin)
            except ScheduleError:
                return False
            init = name[: -len("_update")] + "_init" if name.endswith("_update") else None
            if init in sch.get_block_names(func) and not any(
                sch.get(b).name_hint == init for b in inits
            ):
                inits.append(sch.get_block(init, func))
        if self.vectorize_init_loop:
            for block in inits:
                _vectorize_innermost(sch, block)
        return True


@functools.lru_cache(maxsize=None)
def _initializes(intrin: str) -> bool:
    """Whether the intrinsic's desc only writes (an accumulator fill)."""
    desc = Schedule(TensorIntrin.get(intrin).desc)
    return all(not desc.get_block_buffers(desc.get_block(n))[0] for n in desc.get_block_names())


def _vectorize_innermost(sch, block):
    children = sch.get_child_blocks(block)
    loops = sch.get_loops(children[0] if children else block)
    if loops and str(sch.get(loops[-1]).kind) == "serial":
        try:
            sch.vectorize(loops[-1])
        except ScheduleError:
            pass  # stays scalar: still correct
