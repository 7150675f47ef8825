"""Stage `gpu-buffer-scopes` (tir level, GPU targets): a buffer's `tir.scope` becomes the memory
space of its memref type, so it survives the stages that drop `tir.*` attributes:

    memref.alloc() {tir.scope = #tir.scope<"shared">} : memref<128xf32>
 => memref.alloc() {tir.scope = #tir.scope<"shared">} : memref<128xf32, #gpu.address_space<workgroup>>

"shared"/"shared.dyn" -> workgroup (one copy per thread block), "local" -> private (one copy per
thread), "global" -> device memory (no memory space). `gpu-place-buffers` later turns the first
two into attributions of the kernel that uses them.
"""

from mlir import ir

from tir_mlir.dialect.buffers import SCOPE, scope_of
from tir_mlir.passes.lowering.common import build_error, functions, walk

SPACES = {
    "shared": "workgroup",
    "shared.dyn": "workgroup",
    "local": "private",
    "global": None,
    # tensor-core fragments: registers of each thread (gpu-lower-wmma lays them out)
    "wmma.matrix_a": "private",
    "wmma.matrix_b": "private",
    "wmma.accumulator": "private",
}


def address_space(t) -> str:
    """'workgroup', 'private' or '' (global) for a memref type."""
    space = ir.MemRefType(t).memory_space
    return str(space).removeprefix("#gpu.address_space<").rstrip(">") if space else ""


class GpuBufferScopes:
    name = "gpu-buffer-scopes"

    def __call__(self, module: ir.Module):
        for f in functions(module):
            for op in walk(f):
                if op.name == "memref.subview":
                    _view_space(op)
                    continue
                if op.name != "memref.alloc" or SCOPE not in op.attributes:
                    continue
                scope = scope_of(op.attributes)
                if scope not in SPACES:
                    raise build_error(
                        op,
                        f"buffer scope '{scope}' is not supported on GPU "
                        f"targets (use {', '.join(SPACES)})",
                    )
                if SPACES[scope]:
                    t = ir.MemRefType(op.results[0].type)
                    space = ir.Attribute.parse(f"#gpu.address_space<{SPACES[scope]}>")
                    op.results[0].set_type(
                        ir.MemRefType.get(t.shape, t.element_type, memory_space=space)
                    )


def _view_space(op):
    """A view (a block's T.match_buffer, tensorize's views of the impl's buffers) lives in the
    memory space of the buffer it views (its source comes first in the walk)."""
    src, t = ir.MemRefType(op.operands[0].type), ir.MemRefType(op.results[0].type)
    if src.memory_space is not None and t.memory_space is None:
        op.results[0].set_type(
            ir.MemRefType.get(t.shape, t.element_type, t.layout, memory_space=src.memory_space)
        )
