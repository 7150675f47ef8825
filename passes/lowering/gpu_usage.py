"""What a function's kernels take at launch, for the tuner's VerifyGPUCode: threads per block,
whether a thread is bound twice with two extents, and the shared memory its kernels really take
(its `shared` buffers after the CUDA pipeline's compact-buffers: a 256x256 buffer cached under
the tile loops costs one tile)."""

from typing import Optional

from mlir import ir

from tir_mlir.context import get_context
from tir_mlir.dialect.buffers import scope_of
from tir_mlir.dialect.ops import Loop, body_ops
from tir_mlir.errors import BuildError
from tir_mlir.ir.ir_walk import walk_all
from tir_mlir.passes.lowering.gpu_bindings import is_thread_bound, rebinding
from tir_mlir.passes.lowering.common import constant_extent, functions, walk
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
            if (
                op.name in ("memref.alloc", "memref.alloca")
                and address_space(op.results[0].type) == "workgroup"
            ):
                t = ir.MemRefType(op.results[0].type)
                n = 1
                for d in t.shape:
                    n *= d
                total += n * max(1, getattr(t.element_type, "width", 32) // 8)
        return total
    return None


def kernel_usage(mod, func_name: Optional[str] = None) -> dict:
    """Per kernel launch resources of function `func_name` of IRModule `mod` (default: its only
    function, or "main"): the largest
    product of threadIdx loop extents over its kernels (top-level loop nests), the bytes of its
    "shared" buffers, compacted as the CUDA lowering does (declared sizes if it cannot lower);
    `rebound_threads`: a loop bound to a thread inside a loop bound to the same thread with
    another extent (the CUDA build refuses it)."""
    if func_name is None:
        names = list(mod.functions)
        func_name = names[0] if len(names) == 1 else "main"
    with get_context():
        func = mod[func_name]
        threads, rebound = 1, False
        for top in body_ops(func.regions[0].blocks[0]):
            if top.name != Loop.OP_NAME:
                continue
            extents = {}
            for op in [top, *walk_all(top)]:
                if not is_thread_bound(op):
                    continue
                rebound = rebound or rebinding(op) is not None
                t = Loop(op).thread
                if t is not None and t.startswith("threadIdx"):
                    # (a block's thread count is a constant: the CUDA build refuses others)
                    extents[t] = max(extents.get(t, 1), constant_extent(Loop(op)))
            prod = 1
            for e in extents.values():
                prod *= e
            threads = max(threads, prod)
        usage = {"threads_per_block": threads, "rebound_threads": rebound}
        shared = shared_bytes(mod.module, func_name)
        if shared is not None:  # what the kernels take once compacted
            return {**usage, "shared_bytes": shared}
        return {**usage, "shared_bytes": _declared_shared_bytes(func)}


def _declared_shared_bytes(func) -> int:
    shared = 0
    for op in walk_all(func):
        if op.name in ("memref.alloc", "memref.alloca") and scope_of(op.attributes) == "shared":
            mt = ir.MemRefType(op.results[0].type)
            n = 1
            for d in mt.shape:
                n *= d
            shared += n * max(1, getattr(mt.element_type, "width", 32) // 8)
    return shared
