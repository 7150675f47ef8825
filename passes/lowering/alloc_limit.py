"""Stage `alloc-limit`: refuse, at build time, a buffer that cannot fit in this machine's
memory. The compiled code does not check what `malloc` returns, so an allocation that fails
at run time would crash the process; one larger than physical memory is refused here with an
error naming the buffer and its size.
"""

import os

from mlir import ir

from tir_mlir.passes.lowering.common import build_error, functions, walk


def physical_memory() -> int:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 1 << 40


def nbytes(t: ir.MemRefType) -> int:
    n = 1
    for d in t.shape:
        n *= d
    bits = ir.MemRefType(t).element_type
    if isinstance(bits, ir.VectorType):  # a buffer of float32x4...
        n *= bits.shape[0]
        bits = bits.element_type
    width = 16 if str(bits) == "bf16" else int(str(bits).lstrip("if") or 8)
    return n * max(1, width // 8)


class AllocLimit:
    name = "alloc-limit"

    def __call__(self, module: ir.Module):
        limit = physical_memory()
        for f in functions(module):
            for op in walk(f):
                if op.name in ("memref.alloc", "memref.alloca"):
                    mtype = ir.MemRefType(op.results[0].type)
                    if not mtype.has_static_shape:
                        continue  # a size known at run time: alloc-check reports it
                    size = nbytes(mtype)
                    if size > limit:
                        name = (
                            ir.StringAttr(op.attributes["tir.name"]).value
                            if "tir.name" in op.attributes
                            else "?"
                        )
                        raise build_error(
                            op,
                            f"buffer {name!r} needs {size} bytes "
                            f"({size / 2**30:.1f} GiB), more than this "
                            f"machine's {limit / 2**30:.1f} GiB of memory",
                        )
