"""storage_align: pad a buffer's strides so that `stride[axis] % factor == offset`.

storage_align(A_shared_block, 0, axis=0, factor=16, offset=1)::

    block "A_shared":                              block "A_shared":
        A_shared[v0, v1] = A[v0, v1]       ->          T.block_attr({"buffer_dim_align": [[0, 0, 16, 1]]})
                                                       A_shared[v0, v1] = A[v0, v1]

Like TVM, the request is recorded on the writing block as the `buffer_dim_align` annotation
([buffer_index, axis, factor, offset] per request; a new request for the same buffer and axis
replaces the old one). The lowering honours it (passes/lowering/storage_align.py): the buffer
is allocated with TVM's padded strides, e.g. A_shared (16, 16) above becomes
`memref<16x16xf32, strided<[17, 1]>>`, a view of 17 * 16 elements.
Legality: buffer_index in range of the block's writes; the buffer is an allocation (a
parameter's layout belongs to the caller); 0 <= axis < ndim; factor > 0; offset >= 0 (as in
TVM, an offset >= factor pads like offset % factor: the padding is
`(factor + offset - stride % factor) % factor`).
"""

from mlir import ir

from tir_mlir.dialect.ops import Block
from tir_mlir.errors import ScheduleError
from tir_mlir.passes.schedule.annotate import to_attr
from tir_mlir.analysis.buffer_util import block_writes, buffer_name, is_func_arg
from tir_mlir.passes.schedule.cache_read_write import pick_buffer

KEY = "buffer_dim_align"


def storage_align(block: Block, buffer_index: int, axis: int, factor: int, offset: int):
    buf = pick_buffer(block, block_writes(block), buffer_index, "storage_align", "write")
    name = buffer_name(buf)
    if is_func_arg(buf):
        raise ScheduleError(
            f"storage_align: buffer {name!r} of block {block.name!r} is a "
            f"function parameter, not an allocation"
        )
    rank = len(ir.MemRefType(buf.type).shape)
    if -rank <= axis < 0:  # counted from the last dimension, as TVM's
        axis += rank
    if not 0 <= axis < rank:
        raise ScheduleError(
            f"storage_align: axis {axis} is out of range for buffer {name!r} of rank {rank}"
        )
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in (factor, offset)):
        raise ScheduleError(
            f"storage_align: factor and offset must be ints, got "
            f"factor={factor!r}, offset={offset!r}"
        )
    if factor >= 1 << 31 or offset >= 1 << 31:
        raise ScheduleError(f"storage_align: factor={factor} and offset={offset} must fit in int32")
    if factor <= 0 or offset < 0:
        raise ScheduleError(
            f"storage_align: need factor > 0 and offset >= 0, got factor={factor}, offset={offset}"
        )
    anns = block.annotations
    old = []
    if KEY in anns:
        old = [[ir.IntegerAttr(x).value for x in ir.ArrayAttr(e)] for e in ir.ArrayAttr(anns[KEY])]
    new = [e for e in old if e[:2] != [buffer_index, axis]] + [[buffer_index, axis, factor, offset]]
    anns[KEY] = to_attr(new)
    block.set_attr("annotations", ir.DictAttr.get(anns))
