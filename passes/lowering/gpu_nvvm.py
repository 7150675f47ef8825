"""Stage `gpu-to-binary` (GPU targets): kernels -> NVVM -> PTX, embedded in the module as a
`gpu.binary` (format `isa`: PTX text, which the CUDA driver compiles for the GPU at load time, so
running needs no `ptxas`). `ptx(module)` reads the PTX back out (`--emit ptx`).

The arch comes from the target string (`cuda -arch=sm_80`; default sm_90). LLVM aborts the whole
process on sm_90 without a PTX version feature, so one is always given.
"""
import re

from mlir import ir
from mlir.dialects import gpu

from tir_mlir.passes.lowering.common import run_pipeline

DEFAULT_ARCH = "sm_90"


def arch_of(target) -> str:
    m = re.search(r"-arch=(sm_\d+a?)", str(target))
    return m.group(1) if m else DEFAULT_ARCH


def _ptx_feature(arch: str) -> str:
    return "+ptx86" if int(re.sub(r"\D", "", arch)) >= 100 else "+ptx80"


class GpuToBinary:
    name = "gpu-to-binary"

    def __init__(self, target="cuda"):
        self.arch = arch_of(target)

    @classmethod
    def for_target(cls, target):
        return cls(target)

    def __call__(self, module: ir.Module):
        pipeline = ",".join([
            f"nvvm-attach-target{{chip={self.arch} O=3 features={_ptx_feature(self.arch)}}}",
            "gpu.module(expand-strided-metadata,lower-affine,convert-scf-to-cf,convert-gpu-to-nvvm,"
            "canonicalize,cse,reconcile-unrealized-casts)",
            "gpu-module-to-binary{format=isa}",
        ])
        run_pipeline(module, pipeline, "GPU code generation")


def ptx(module: ir.Module) -> str:
    """The PTX of every kernel module, in order."""
    texts = []
    for op in module.body.operations:
        if op.operation.name == "gpu.binary":
            for obj in ir.ArrayAttr(op.operation.attributes["objects"]):
                texts.append(gpu.ObjectAttr(obj).object.decode())
    return "\n".join(texts)
