"""VerifyGPUCode: reject a GPU candidate that cannot launch: more threads per block than the
target allows (the product of the threadIdx extents of a kernel) or more shared memory than
a block may use (TVM's postprocessor checks the same limits on the lowered kernel), or a
thread bound with two extents by a loop inside a loop bound to it (AutoBind's unit blockIdx
loop around a consumer already bound to blockIdx), which the build refuses. A block
annotated `meta_schedule.thread_extent_low_inclusive` / `_high_inclusive` (TVM's annotations)
also needs the threads of the loops around it (the product of their threadIdx extents) within
those bounds."""

from tir_mlir.meta_schedule.postproc.postproc import Postproc, blocks
from tir_mlir.passes.lowering.gpu_usage import kernel_usage

LOW, HIGH = (
    "meta_schedule.thread_extent_low_inclusive",
    "meta_schedule.thread_extent_high_inclusive",
)


class VerifyGPUCode(Postproc):
    def apply(self, sch) -> bool:
        limits = self.target
        max_threads = limits.max_threads_per_block if limits is not None else 1024
        max_shared = limits.max_shared_memory_per_block if limits is not None else 49152
        for func in list(sch.mod.functions):
            usage = kernel_usage(sch.mod, func)
            if (
                usage["threads_per_block"] > max_threads
                or usage["shared_bytes"] > max_shared
                or usage["rebound_threads"]
            ):
                return False
        return all(
            _threads_within_bounds(sch, sch.get_block(name, func)) for func, name in blocks(sch)
        )


def _threads_within_bounds(sch, block) -> bool:
    ann = sch.get_annotations(block)
    if LOW not in ann and HIGH not in ann:
        return True
    threads = 1
    for loop in sch.get_loops(block):
        view = sch.get(loop)
        if (view.thread_binding or "").startswith("threadIdx."):
            threads *= int(view.extent)
    return int(ann.get(LOW, 0)) <= threads <= int(ann.get(HIGH, threads))
