"""Shared memory each function's kernels really take: its `shared` buffers after the CUDA
pipeline's compact-buffers (a 256x256 buffer cached under the tile loops costs one tile), for
the tuner's VerifyGPUCode. None when the function does not lower for CUDA."""
from typing import Optional

from mlir import ir

from tir_mlir.context import get_context
from tir_mlir.errors import BuildError
from tir_mlir.passes.lowering.common import functions, walk
from tir_mlir.passes.lowering.compact_buffers import CompactBuffers
from tir_mlir.passes.lowering.gpu_scopes import address_space


def shared_bytes(module: ir.Module, func_name: str) -> Optional[int]:
    from tir_mlir.passes.lowering.pipeline import lower  # the whole pipeline: not at import
    try:
        out = lower(module, "cuda", "affine")
        with get_context(), out.operation.location:
            CompactBuffers()(out)
    except BuildError:
        return None
    for f in functions(out):
        if ir.StringAttr(f.attributes["sym_name"]).value != func_name:
            continue
        total = 0
        for op in walk(f):
            if op.name in ("memref.alloc", "memref.alloca") and \
                    address_space(op.results[0].type) == "workgroup":
                t = ir.MemRefType(op.results[0].type)
                n = 1
                for d in t.shape:
                    n *= d
                total += n * max(1, getattr(t.element_type, "width", 32) // 8)
        return total
    return None
