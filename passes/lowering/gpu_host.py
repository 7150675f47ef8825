"""Stage `gpu-host-to-llvm` (GPU targets): the host side (launches, device allocations, host
loops) to the llvm dialect. `gpu.launch_func` becomes calls into the MLIR CUDA runtime wrappers
(`mgpuModuleLoadJIT`, `mgpuLaunchKernel`, ... in libmlir_cuda_runtime.so) with the kernel's PTX
embedded as a global; the ExecutionEngine runs it (tir_mlir.runtime.cuda)."""

from mlir import ir

from tir_mlir.passes.lowering.common import run_pipeline

PIPELINE = "convert-scf-to-cf,gpu-to-llvm,convert-to-llvm,reconcile-unrealized-casts"


class GpuHostToLLVM:
    name = "gpu-host-to-llvm"

    def __call__(self, module: ir.Module):
        run_pipeline(module, PIPELINE, "host code lowering")
