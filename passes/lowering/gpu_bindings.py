"""Stage `gpu-check-bindings` (tir level, GPU targets): every buffer access must run on the device,
i.e. inside a loop bound to blockIdx.* / threadIdx.*. Code outside any bound loop would run on
the host, where device buffers cannot be read (TVM: "Did you forget to bind?"). Loops that are not
bound may still wrap kernels (they run on the host and launch one kernel per iteration) or run
inside them (serially, per thread). The error names the outermost unbound loop (or the block, or
the access itself) around the offending access, with its source location.
Loops bound to one thread, one inside the other, read one id (a cooperative fetch under the
consumer's thread loops): they must have the same extent, which the launch then has.
Reductions bound to threads are the next stage's (gpu-lower-cross-thread-reduction)."""

from mlir import ir

from tir_mlir.dialect.buffers import buffer_name
from tir_mlir.dialect.ops import Loop
from tir_mlir.passes.lowering.common import ancestors, build_error, functions, walk

ACCESSES = ("memref.load", "memref.store")


def is_thread_bound(op) -> bool:
    return op.name == "affine.for" and Loop(op).kind == "thread_binding"


class GpuCheckBindings:
    name = "gpu-check-bindings"

    def __call__(self, module: ir.Module):
        for f in functions(module):
            for op in walk(f):
                if op.name in ACCESSES and not any(map(is_thread_bound, ancestors(op))):
                    raise _unbound_error(f, op)
                if is_thread_bound(op):
                    _check_not_rebound(op)


def rebinding(loop):
    """The loop around thread-bound `loop` bound to its thread with another extent, or None."""
    tag = Loop(loop).thread
    outer = next((p for p in ancestors(loop) if is_thread_bound(p) and Loop(p).thread == tag), None)
    return outer if outer is not None and Loop(outer).extent != Loop(loop).extent else None


def _check_not_rebound(loop):
    outer = rebinding(loop)
    if outer is not None:
        tag = Loop(loop).thread
        raise build_error(
            loop,
            f"loop '{_name(loop)}' binds {tag} with extent "
            f"{Loop(loop).extent} inside loop '{_name(outer)}', which binds "
            f"it with extent {Loop(outer).extent}: nested loops bound to "
            "one thread read one id and need one extent",
        )


def _unbound_error(f, access):
    """Point at the outermost host construct holding the access: a loop, else a block."""
    around = list(ancestors(access))
    loops = [p for p in around if p.name == "affine.for"]
    blocks = [p for p in around if p.name == "tir.block"]
    culprit = loops[-1] if loops else blocks[-1] if blocks else access
    where = {"affine.for": f"loop '{_name(culprit)}'", "tir.block": f"block '{_name(culprit)}'"}
    fname = ir.StringAttr(f.attributes["sym_name"]).value
    buf = access.operands[0 if access.name == "memref.load" else 1]
    return build_error(
        culprit,
        f"function {fname} has loops not bound to GPU threads: "
        f"{where.get(culprit.name, 'an access')} accesses buffer "
        f"'{buffer_name(buf, '?')}' outside any blockIdx/threadIdx loop. "
        f"Did you forget to bind?",
    )


def _name(op) -> str:
    key = "tir.name" if op.name == "affine.for" else "name"
    return ir.StringAttr(op.attributes[key]).value if key in op.attributes else "?"
