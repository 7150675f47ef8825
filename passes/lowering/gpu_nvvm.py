"""Stage `gpu-to-binary` (GPU targets): kernels -> NVVM -> PTX, embedded in the module as a
`gpu.binary` (format `isa`: PTX text, which the CUDA driver compiles for the GPU at load time, so
running needs no `ptxas`). `ptx(module)` reads the PTX back out (`--emit ptx`).

The arch comes from the target string (`cuda -arch=sm_80`; default sm_90). LLVM aborts the whole
process on sm_90 without a PTX version feature, so one is always given.

A shared buffer whose address is taken (a tensor-core tile load, gpu-lower-wmma) is aligned to
SHARED_ALIGN bytes (`llvm.align` on its workgroup attribution; the NVVM lowering otherwise
aligns it to its element size only): `wmma.load` needs 32-byte aligned addresses.
"""

import re

from mlir import ir
from mlir.dialects import gpu

from tir_mlir.passes.lowering.common import run_pipeline, walk
from tir_mlir.passes.lowering import llvm_stderr

DEFAULT_ARCH = "sm_90"
SHARED_ALIGN = 32


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
        _align_shared(module)
        pipeline = ",".join(
            [
                f"nvvm-attach-target{{chip={self.arch} O=3 features={_ptx_feature(self.arch)}}}",
                "gpu.module(expand-strided-metadata,lower-affine,convert-scf-to-cf,convert-gpu-to-nvvm,"
                "canonicalize,cse,reconcile-unrealized-casts)",
                "gpu-module-to-binary{format=isa}",
            ]
        )
        with llvm_stderr.captured():  # NVPTX's "loop not vectorized" remarks
            run_pipeline(module, pipeline, "GPU code generation")


def _align_shared(module: ir.Module):
    align = ir.DictAttr.get(
        {"llvm.align": ir.IntegerAttr.get(ir.IntegerType.get_signless(64), SHARED_ALIGN)}
    )
    for func in [o for o in walk(module.operation) if o.name == "gpu.func"]:
        attrs = func.attributes
        n = (
            ir.IntegerAttr(attrs["workgroup_attributions"]).value
            if "workgroup_attributions" in attrs
            else 0
        )
        n_args = len(ir.FunctionType(ir.TypeAttr(attrs["function_type"]).value).inputs)
        shared = list(func.regions[0].blocks[0].arguments)[n_args : n_args + n]
        taken = [
            any(u.owner.name == "memref.extract_aligned_pointer_as_index" for u in a.uses)
            for a in shared
        ]
        if any(taken):
            attrs["workgroup_attrib_attrs"] = ir.ArrayAttr.get(
                [align if t else ir.DictAttr.get({}) for t in taken]
            )


def ptx(module: ir.Module) -> str:
    """The PTX of every kernel module, in order."""
    texts = []
    for op in module.body.operations:
        if op.operation.name == "gpu.binary":
            for obj in ir.ArrayAttr(op.operation.attributes["objects"]):
                # ObjectAttr comes from the GPU dialect's native module; the stub omits it
                object_attr = gpu.ObjectAttr(obj)  # pyright: ignore[reportAttributeAccessIssue]
                texts.append(object_attr.object.decode())
    return "\n".join(texts)
