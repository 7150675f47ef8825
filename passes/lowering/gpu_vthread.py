"""Stage `gpu-virtual-threads` (tir level, GPU targets, first): a loop bound to `vthread.*`
(TVM's virtual threads, which MultiLevelTiling binds between blockIdx and threadIdx) becomes
a serial loop run by each thread: virtual threads are interleaved iterations of one real
thread, independent by construction, so running them in turn computes the same thing."""

from mlir import ir

from tir_mlir.dialect.ops import Loop
from tir_mlir.passes.lowering.common import functions, walk


class GpuVirtualThreads:
    name = "gpu-virtual-threads"

    def __call__(self, module: ir.Module):
        for f in functions(module):
            for op in walk(f):
                if (
                    op.name == "affine.for"
                    and Loop(op).kind == "thread_binding"
                    and (Loop(op).thread or "").startswith("vthread")
                ):
                    Loop(op).set(kind="serial", thread="")
