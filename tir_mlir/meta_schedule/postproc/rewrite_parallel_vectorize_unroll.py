"""RewriteParallelVectorizeUnroll: turn ParallelizeVectorizeUnroll's block annotations into
loop kinds once the loop nest is final (TVM's postprocessor of the same name).

For a block marked `meta_schedule.parallel` = P: its outer spatial loops are fused while
the product of their extents stays <= P and the fused loop is made parallel.
`meta_schedule.vectorize` = V: the innermost loop of every block of the nest is vectorized
when it is spatial and its extent is at most V. `meta_schedule.unroll_explicit` = U > 0:
the outermost loop gets `pragma_auto_unroll_max_step` = U and `pragma_unroll_explicit`.
"""
from tir_mlir.errors import ScheduleError
from tir_mlir.meta_schedule.postproc.postproc import Postproc, blocks

KEYS = ("meta_schedule.parallel", "meta_schedule.vectorize", "meta_schedule.unroll_explicit",
        "meta_schedule.unroll_implicit")


class RewriteParallelVectorizeUnroll(Postproc):
    def apply(self, sch) -> bool:
        vector_limit = {}
        for func, name in blocks(sch):
            block = sch.get_block(name, func)
            ann = sch.get_annotations(block)
            if not any(k in ann for k in KEYS):
                continue
            for k in KEYS:
                if k in ann:
                    sch.unannotate(block, k)
            vector_limit[func] = ann.get("meta_schedule.vectorize", 0)
            loops = sch.get_loops(block)
            if not loops:
                continue
            outer = loops[0]
            if ann.get("meta_schedule.parallel", 0) > 0:
                outer = _parallelize(sch, loops, ann["meta_schedule.parallel"]) or outer
            unroll = ann.get("meta_schedule.unroll_explicit",
                             ann.get("meta_schedule.unroll_implicit", 0))
            if unroll > 0:
                sch.annotate(outer, "pragma_auto_unroll_max_step", unroll)
                sch.annotate(outer, "pragma_unroll_explicit",
                             int("meta_schedule.unroll_explicit" in ann))
        for func, name in blocks(sch):
            if vector_limit.get(func, 0) > 1:
                _vectorize(sch, sch.get_block(name, func), vector_limit[func])
        return True


def _parallelize(sch, loops, limit: int):
    """Fuse the longest prefix of serial spatial loops with extent product <= limit (at
    least one loop) and make it parallel; the fused loop, or None."""
    prefix, prod = [], 1
    for lp in loops:
        ext = sch.get(lp).extent
        if (sch.get_loop_iter_type(lp) != "S" or str(sch.get(lp).kind) != "serial"
                or (prefix and prod * ext > limit)):
            break
        prefix.append(lp)
        prod *= ext
    while prefix:
        try:
            fused = sch.fuse(*prefix) if len(prefix) > 1 else prefix[0]
            sch.parallel(fused)
            return fused
        except ScheduleError:
            prefix.pop()          # not a perfect nest that far down: fuse fewer
    return None


def _vectorize(sch, block, limit: int):
    loops = sch.get_loops(block)
    if not loops:
        return
    inner = loops[-1]
    view = sch.get(inner)
    if (1 < view.extent <= limit and str(view.kind) == "serial"
            and sch.get_loop_iter_type(inner) == "S"
            and len(sch.get_child_blocks(inner)) == 1):
        try:
            sch.vectorize(inner)
        except ScheduleError:
            pass                   # the lowering cannot vectorize this body: keep it scalar
