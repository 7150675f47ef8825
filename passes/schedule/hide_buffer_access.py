"""unsafe_hide_buffer_access: leave buffers out of a block's printed T.reads / T.writes.

unsafe_hide_buffer_access(C, "read", [0])::

    T.reads(B[vi, vj])          ->      T.reads()

TVM uses it to hide index buffers (sparse computations) from tensorize's pattern match. The
buffers are recorded by name on the block (tir_mlir/ir/region_overrides.py); the statements do not
change, and unlike TVM the dependence analysis still sees the hidden accesses (the result can be
no less safe than before).

Legality (TVM's): `buf_type` is "read" or "write"; every index is in range of the block's
T.reads / T.writes (repeats allowed).
"""

from typing import List

from tir_mlir.ir import region_overrides as overrides
from tir_mlir.dialect.buffers import buffer_name
from tir_mlir.dialect.ops import Block
from tir_mlir.errors import ScheduleError
from tir_mlir.passes.schedule.annotate_buffer_access import check_kind, visible

WHO = "unsafe_hide_buffer_access"


def unsafe_hide_buffer_access(block: Block, buf_type: str, buf_index_array: List[int]):
    check_kind(buf_type, WHO)
    regions = visible(block, buf_type)
    for i in buf_index_array:
        if not isinstance(i, int) or isinstance(i, bool) or not 0 <= i < len(regions):
            raise ScheduleError(
                f"{WHO}: block {block.name!r} has {len(regions)} {buf_type} "
                f"region(s); index {i!r} is out of range"
            )
    if buf_index_array:
        overrides.add_hidden(
            block.op, buf_type, [buffer_name(regions[i].buffer, "") for i in buf_index_array]
        )
