"""Stage `storage-align` (tir level, before tir-to-affine): honour the `buffer_dim_align` block
annotation (`sch.storage_align`, or a hand-written `T.block_attr`) with padded strides.

    %Y = memref.alloc() {tir.name = "Y"} : memref<16x16xf32>     // a block writing Y has
                                                                   //   buffer_dim_align [[0, 0, 16, 1]]
  =>
    %flat = memref.alloc() {tir.name = "Y"} : memref<272xf32>     // strides[0] * shape[0]
    %Y = memref.reinterpret_cast %flat to offset: [0], sizes: [16, 16], strides: [17, 1]
           : memref<272xf32> to memref<16x16xf32, strided<[17, 1]>>

Every access keeps using %Y, now of the strided type. Strides follow TVM's rule
(CompactBufferAllocation): from the innermost dimension out, the stride is the natural one
(inner stride x inner extent), raised on an aligned axis to the next value with
`stride % factor == offset`; the allocation holds strides[0] * shape[0] elements. The annotation
names its buffer by index into the block's writes; every block writing a buffer contributes
(one request per axis, the last wins). Upstream cannot allocate a strided memref directly
(finalize-memref-to-llvm wants an identity layout), hence the flat alloc and the view.
"""

from mlir import ir
from mlir.dialects import memref

from tir_mlir.dialect.buffers import buffer_name
from tir_mlir.dialect.ops import Block
from tir_mlir.passes.lowering.common import build_error, functions, walk
from tir_mlir.analysis.buffer_util import block_writes, is_func_arg

KEY = "buffer_dim_align"


class StorageAlign:
    name = "storage-align"

    def __call__(self, module: ir.Module):
        for f in functions(module):
            requests = {}  # alloc op -> {axis: (factor, offset)}
            for op in walk(f):
                if op.name == Block.OP_NAME and KEY in Block(op).annotations:
                    for buf, axis, factor, offset in _requests(Block(op)):
                        requests.setdefault(buf.owner, {})[axis] = (factor, offset)
            for alloc, aligns in requests.items():
                _pad(alloc, aligns)


def _requests(block: Block):
    """(buffer, axis, factor, offset) per entry of the block's annotation, validated."""
    writes = block_writes(block)
    try:
        entries = [
            [ir.IntegerAttr(x).value for x in ir.ArrayAttr(e)]
            for e in ir.ArrayAttr(block.annotations[KEY])
        ]
    except ValueError:
        raise build_error(
            block.op, f"{KEY} must be a list of [buffer_index, axis, factor, offset] integer lists"
        ) from None
    for entry in entries:
        if len(entry) != 4:
            raise build_error(
                block.op, f"{KEY} entry {entry} is not [buffer_index, axis, factor, offset]"
            )
        index, axis, factor, offset = entry
        if not 0 <= index < len(writes):
            raise build_error(
                block.op,
                f"{KEY}: block {block.name!r} writes {len(writes)} "
                f"buffer(s); index {index} is out of range",
            )
        buf = writes[index]
        name = buffer_name(buf)
        if is_func_arg(buf) or buf.owner.name != "memref.alloc":
            raise build_error(
                block.op,
                f"{KEY}: buffer {name!r} is a function parameter, "
                f"not an allocation; its layout belongs to the caller",
            )
        rank = len(ir.MemRefType(buf.type).shape)
        if not 0 <= axis < rank or factor <= 0 or offset < 0:
            raise build_error(
                block.op,
                f"{KEY}: bad request {entry} for buffer {name!r} of "
                f"rank {rank} (need 0 <= axis < rank, factor > 0, "
                f"offset >= 0)",
            )
        yield buf, axis, factor, offset


def aligned_strides(shape, aligns) -> list:
    """TVM's padded strides for `shape`; aligns: {axis: (factor, offset)}."""
    strides, stride = [0] * len(shape), 1
    for axis in reversed(range(len(shape))):
        if axis in aligns:
            factor, offset = aligns[axis]
            stride += (factor + offset - stride % factor) % factor
        strides[axis] = stride
        stride *= shape[axis]
    return strides


def _pad(alloc, aligns):
    mtype = ir.MemRefType(alloc.results[0].type)
    shape = list(mtype.shape)
    strides = aligned_strides(shape, aligns)
    natural = aligned_strides(shape, {})
    if strides == natural:
        return
    loc = alloc.location
    flat_type = ir.MemRefType.get([strides[0] * shape[0]], mtype.element_type)
    view_type = ir.MemRefType.get(
        shape, mtype.element_type, layout=ir.StridedLayoutAttr.get(0, strides)
    )
    with ir.InsertionPoint(alloc), loc:
        flat = memref.AllocOp(flat_type, [], [])
        view = memref.ReinterpretCastOp(view_type, flat.result, [], [], [], [0], shape, strides)
    for name in alloc.attributes:
        flat.operation.attributes[name] = alloc.attributes[name]
        view.operation.attributes[name] = alloc.attributes[name]  # for later tir-level stages
    alloc.results[0].replace_all_uses_with(view.result)
    alloc.erase()
