"""Stage `gpu-limits` (after `gpu-place-buffers`): refuse, at build time, a kernel that no
NVIDIA GPU can launch, instead of a launch that fails at run time. The CUDA runtime wrappers
only print a failed launch or allocation to stderr and carry on, so the call would return
with its outputs unwritten.

- threads per block: at most 1024 in all, 1024 along x and y, 64 along z;
- blocks per grid: at most 2**31 - 1 along x, 65535 along y and z;
- `shared` buffers of one launch: at most 48 KiB (the static shared memory of a block);
- `local` buffers: at most 512 KiB per thread (CUDA's local memory per thread);
- a `global` buffer the function allocates on the device: at most MAX_GLOBAL_BYTES (no GPU has
  more memory); the run time checks it against the GPU's free memory (runtime/cuda.py).
TVM leaves these to the CUDA compiler and driver (its meta-schedule checks the first three with
`VerifyGPUCode`, as the tuner here does).
"""

import re

from mlir import ir

from tir_mlir.errors import BuildError, SourceLoc
from tir_mlir.passes.lowering.alloc_limit import nbytes
from tir_mlir.passes.lowering.common import functions, source_loc, walk
from tir_mlir.ir.regions import const_value

MAX_THREADS = 1024
MAX_BLOCK = (1024, 1024, 64)
MAX_GRID = (2**31 - 1, 65535, 65535)
MAX_SHARED_BYTES = 48 * 1024
MAX_LOCAL_BYTES = 512 * 1024
MAX_GLOBAL_BYTES = 1 << 38  # 256 GiB
_NAME = re.compile(r'^loc\("([^"]+)"\(')


def buffer_label(v: ir.Value) -> str:
    """The buffer's name, from the location the frontend gives its allocation."""
    m = _NAME.match(str(v.location)) if hasattr(v, "location") else None
    return repr(m.group(1)) if m else "a buffer"


GLOBAL_BYTES_ATTR = "tir_mlir.gpu_global_bytes"  # {function: bytes of its global buffers}


class GpuLimits:
    name = "gpu-limits"

    def __call__(self, module: ir.Module):
        total = {}
        for f in functions(module):
            name = ir.StringAttr(f.attributes["sym_name"]).value
            for op in walk(f):
                if op.name == "gpu.launch":
                    _check_launch(op)
                elif op.name == "gpu.alloc":
                    size = nbytes(ir.MemRefType(op.results[0].type))
                    if size > MAX_GLOBAL_BYTES:
                        raise BuildError(
                            f"buffer {buffer_label(op.results[0])} needs {size} "
                            f"bytes ({size / 2**30:.1f} GiB) of GPU memory, more "
                            f"than any GPU has",
                            source_loc(op),
                        )
                    total[name] = total.get(name, 0) + size
        i64 = ir.IntegerType.get_signless(64)
        module.operation.attributes[GLOBAL_BYTES_ATTR] = ir.DictAttr.get(
            {k: ir.IntegerAttr.get(i64, v) for k, v in total.items()}
        )


def _check_launch(op):
    launch = op.opview
    grid = [const_value(v) for v in (launch.gridSizeX, launch.gridSizeY, launch.gridSizeZ)]
    block = [const_value(v) for v in (launch.blockSizeX, launch.blockSizeY, launch.blockSizeZ)]
    where = source_loc(op)
    for what, sizes, limits in (
        ("threads per block", block, MAX_BLOCK),
        ("blocks per grid", grid, MAX_GRID),
    ):
        for axis, n, limit in zip("xyz", sizes, limits):
            if n is not None and n > limit:
                raise BuildError(
                    f"the kernel launches {n} {what} along {axis}, more than "
                    f"the {limit} a GPU allows",
                    where,
                )
    x, y, z = block
    if x is not None and y is not None and z is not None and x * y * z > MAX_THREADS:
        raise BuildError(
            f"the kernel launches {x * y * z} threads per "
            f"block ({' x '.join(map(str, block))}), more than the "
            f"{MAX_THREADS} a GPU allows",
            where,
        )
    args = list(op.regions[0].blocks[0].arguments)[12:]
    n_shared = (
        ir.IntegerAttr(op.attributes["workgroup_attributions"]).value
        if "workgroup_attributions" in op.attributes
        else 0
    )
    for kind, group, limit in (
        ("shared", args[:n_shared], MAX_SHARED_BYTES),
        ("local", args[n_shared:], MAX_LOCAL_BYTES),
    ):
        sizes = [(a, nbytes(ir.MemRefType(a.type))) for a in group]
        total = sum(s for _, s in sizes)
        if total > limit:
            per = " per thread" if kind == "local" else ""
            raise BuildError(
                f"the kernel's {kind} buffers need {total} bytes{per}, more than the {limit} "
                f"a GPU {'block' if kind == 'shared' else 'thread'} has (make the tiles "
                f"smaller)",
                where,
                [
                    (f"{kind} buffer {buffer_label(a)} takes {s} bytes", SourceLoc.of(a.location))
                    for a, s in sizes
                ],
            )
