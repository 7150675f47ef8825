"""VerifyGPUCode: reject a GPU candidate that cannot launch: more threads per block than the
target allows (the product of the threadIdx extents of a kernel) or more shared memory than
a block may use (TVM's postprocessor checks the same limits on the lowered kernel), or a
thread bound with two extents by a loop inside a loop bound to it (AutoBind's unit blockIdx
loop around a consumer already bound to blockIdx), which the build refuses."""
from tir_mlir.meta_schedule.postproc.postproc import Postproc


class VerifyGPUCode(Postproc):
    def apply(self, sch) -> bool:
        limits = self.target
        max_threads = limits.max_threads_per_block if limits is not None else 1024
        max_shared = limits.max_shared_memory_per_block if limits is not None else 49152
        for func in list(sch.mod.functions):
            usage = sch.get_gpu_usage(func)
            if usage["threads_per_block"] > max_threads or \
                    usage["shared_bytes"] > max_shared or usage["rebound_threads"]:
                return False
        return True
