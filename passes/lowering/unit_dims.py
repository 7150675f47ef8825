"""Stage `drop-unit-dims` (CPU, affine level, after `compact-buffers`): an allocation's dimensions
of extent 1 are dropped, like TVM's flattening makes every buffer 1-D.

    %t = memref.alloca() : memref<64x1xf32>               %t = memref.alloca() : memref<64xf32>
    memref.store %v, %t[%i, %c0]                  =>      memref.store %v, %t[%i]
    %x = memref.load %t[%j, %c0]                          %x = memref.load %t[%j]

A compacted tile keeps the rank of its buffer: a cache_write of a column block (`C_local`, one
column of 64 rows per iteration) is 64 x 1, and a vectorized copy over its rows then varied a
dimension other than the last: `vectorize-loops` took it for strided and read 64 scalars
(LLVM kept them all live and spilled them) where contiguous vector loads do. An index into
a dimension of extent 1 is 0 in every in-bounds access, so dropping it loses nothing, and every
later stage sees the dense dimension as the last one.

Left alone: function parameters (their layout is the caller's), buffers of symbolic size or of a
strided layout (a padded `storage_align` view), and buffers used other than by
`memref.load`/`memref.store`/`memref.dealloc`.
"""

from mlir import ir
from mlir.dialects import memref

from tir_mlir.passes.lowering.common import functions, walk

ALLOCATIONS = ("memref.alloca", "memref.alloc")


class DropUnitDims:
    name = "drop-unit-dims"

    def __call__(self, module: ir.Module):
        for f in functions(module):
            for op in [o for o in walk(f) if o.name in ALLOCATIONS]:
                _drop(op)


def _drop(alloc):
    buf = alloc.results[0]
    mtype = ir.MemRefType(buf.type)
    shape = list(mtype.shape)
    if not shape:
        return
    # (one dimension stays: a rank-0 buffer is one more form for later stages to know)
    keep = [d for d, n in enumerate(shape) if n != 1] or [len(shape) - 1]
    if (
        len(keep) == len(shape)
        or not mtype.has_static_shape
        or not _identity(mtype)
        or len(alloc.operands)
    ):
        return
    users = []
    for use in buf.uses:
        user = use.owner.operation if hasattr(use.owner, "operation") else use.owner
        if (user.name, use.operand_number) not in (
            ("memref.load", 0),
            ("memref.store", 1),
            ("memref.dealloc", 0),
        ):
            return
        users.append(user)
    new_type = ir.MemRefType.get(
        [shape[d] for d in keep], mtype.element_type, memory_space=mtype.memory_space
    )
    build = memref.AllocaOp if alloc.name == "memref.alloca" else memref.AllocOp
    with ir.InsertionPoint(alloc), alloc.location:
        new = build(new_type, [], []).operation
    for name in alloc.attributes:  # (tags later stages read: a wmma fragment's scope, ...)
        if name != "operandSegmentSizes":
            new.attributes[name] = alloc.attributes[name]
    for user in users:
        with ir.InsertionPoint(user), user.location:
            if user.name == "memref.load":
                index = list(user.operands)[1:]
                r = memref.LoadOp(new.results[0], [index[d] for d in keep]).result
                user.results[0].replace_all_uses_with(r)
            elif user.name == "memref.store":
                index = list(user.operands)[2:]
                memref.StoreOp(user.operands[0], new.results[0], [index[d] for d in keep])
            else:
                memref.DeallocOp(new.results[0])
        user.erase()
    alloc.erase()


def _identity(mtype: ir.MemRefType) -> bool:
    layout = mtype.layout
    return isinstance(layout, ir.AffineMapAttr) and layout.value == ir.AffineMap.get_identity(
        mtype.rank
    )
