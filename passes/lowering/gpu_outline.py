"""Stage `gpu-outline` (scf level): each `gpu.launch` body becomes a kernel, `gpu.func @F_kernel
kernel` in its own `gpu.module`, launched from the host by `gpu.launch_func` with the buffers it
uses as arguments (upstream `gpu-kernel-outlining`; constants are copied into the kernel). The
module after this stage is what `--emit gpu` prints."""
from mlir import ir
from mlir.passmanager import PassManager

from tir_mlir.errors import BuildError


class GpuOutline:
    name = "gpu-outline"

    def __call__(self, module: ir.Module):
        try:
            PassManager.parse("builtin.module(gpu-kernel-outlining,canonicalize,cse)",
                              module.context).run(module.operation)
        except ir.MLIRError as e:
            raise BuildError(f"kernel outlining failed: {e}") from None
