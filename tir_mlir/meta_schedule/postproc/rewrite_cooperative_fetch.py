"""RewriteCooperativeFetch (GPU): a cache block that MultiLevelTiling annotated
`meta_schedule.cooperative_fetch = v` (a shared-memory read cache computed under the thread
loops, so it covers the whole thread block's tile) gets its loops fused and split over the
block's threads, `[None, threadIdx.y, threadIdx.x, v]` (the y part only when a threadIdx.y
loop is around it, the vector part only when v > 1, vectorized), and loses the annotation.
Without a threadIdx.x loop around the block the annotation is left alone (TVM's
postprocessor does the same), unless a block of the function is marked `warp_execution`
(MultiLevelTilingTensorCore's tensor-core blocks run once per warp): then threadIdx.x is the
warp's lanes, the target's warp size, as in TVM. Like TVM's, it rewrites the fetches its
trace annotated (an `annotate` step with the key): an annotation that came with the program
(a module parsed with it already) is left alone."""

from tir_mlir.errors import ScheduleError
from tir_mlir.meta_schedule.postproc.postproc import Postproc, blocks

KEY = "meta_schedule.cooperative_fetch"
WARP_EXECUTION = "warp_execution"


class RewriteCooperativeFetch(Postproc):
    def apply(self, sch) -> bool:
        warp_funcs = {
            func
            for func, name in blocks(sch)
            if WARP_EXECUTION in sch.get(sch.get_block(name, func)).annotations
        }
        warp = self.target.thread_warp_size if self.target is not None else 32
        traced = _annotated_in_trace(sch)
        for func, name in blocks(sch):
            block = sch.get_block(name, func)
            vector = sch.get(block).annotations.get(KEY)
            if vector is None or sch.get_sref(block) not in traced:
                continue
            loops = sch.get_loops(block)
            threads = {
                sch.get(lp).thread_binding: sch.get(lp).extent
                for lp in loops
                if sch.get(lp).thread_binding
            }
            if "threadIdx.x" not in threads:
                if func not in warp_funcs:
                    continue
                threads["threadIdx.x"] = warp
            own = _own_loops(sch, block, loops)  # (already fused by the rule, or not)
            if not own or any(sch.get(lp).thread_binding for lp in own):
                return False
            try:
                sch.unannotate(block, KEY)
                fused = sch.fuse(*own) if len(own) > 1 else own[0]
                tags = (["threadIdx.y"] if "threadIdx.y" in threads else []) + ["threadIdx.x"]
                factors = [None] + [threads[t] for t in tags] + ([vector] if vector > 1 else [])
                parts = sch.split(fused, factors)
                for tag, part in zip(tags, parts[1:]):
                    sch.bind(part, tag)
                if vector > 1:
                    sch.vectorize(parts[-1])
            except ScheduleError:
                return False
        return True


def _own_loops(sch, block, loops) -> list:
    """The innermost loops around the block that hold nothing else (its copy loops), at
    most one per iter var."""
    ndim = len(sch.get(block).iter_vars)
    own = []
    for lp in reversed(loops):
        children = sch.get_child_blocks(lp)
        if len(own) == ndim or len(children) != 1 or children[0].sid != block.sid:
            break
        own.insert(0, lp)
    return own


def _annotated_in_trace(sch) -> list:
    """The blocks (srefs) an `annotate` step of the trace marked with KEY."""
    out = []
    for inst in sch.trace.insts:
        if inst.name == "annotate" and inst.args.get("ann_key") == KEY:
            try:
                out.append(sch.get_sref(inst.args["block_or_loop"]))
            except ScheduleError:  # a block gone since
                continue
    return out
