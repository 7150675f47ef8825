"""Stage `gpu-outline` (scf level): each `gpu.launch` body becomes a kernel, `gpu.func @F_kernel
kernel` in its own `gpu.module`, launched from the host by `gpu.launch_func` with the buffers it
uses as arguments (upstream `gpu-kernel-outlining`; constants are copied into the kernel). The
module after this stage is what `--emit gpu` prints."""

from mlir import ir

from tir_mlir.passes.lowering.common import run_pipeline


class GpuOutline:
    name = "gpu-outline"

    def __call__(self, module: ir.Module):
        run_pipeline(module, "gpu-kernel-outlining,canonicalize,cse", "kernel outlining")
