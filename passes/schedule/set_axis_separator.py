"""set_axis_separator: record where a buffer's dimensions split into separate physical axes.

set_axis_separator(B, ("write", 0), [1]) on a (128, 128) buffer B::

    B = T.alloc_buffer((128, 128))   ->   B = T.alloc_buffer((128, 128), axis_separators=[1])

A function parameter gets it too (printed, like TVM, as a T.handle bound by
`T.match_buffer(..., axis_separators=[1])`). The separators are the buffer attribute
`tir.axis_separators`; indices and numbers are unchanged (lowering keeps the logical
dimensions: flattening each group of dimensions and flattening all of them address the same
elements). `[]` or None removes them.

Legality: the buffer is one the block reads or writes (("read" | "write", index) or a name);
the separators are strictly increasing dimensions in 1..ndim-1 (TVM records any list and fails
only when lowering).
"""

from typing import List, Optional

from mlir import ir

from tir_mlir.dialect.buffers import AXIS_SEPARATORS, axis_separators_attr, set_buffer_attr
from tir_mlir.dialect.ops import Block
from tir_mlir.errors import ScheduleError
from tir_mlir.analysis.buffer_util import block_reads, block_writes, buffer_name

WHO = "set_axis_separator"


def check_separators(seps: List[int], ndim: int, what: str) -> List[int]:
    if not all(isinstance(x, int) and not isinstance(x, bool) for x in seps):
        raise ScheduleError(f"{WHO}: axis_separators must be integers, got {seps!r}")
    if list(seps) != sorted(set(seps)) or any(not 0 < x < ndim for x in seps):
        raise ScheduleError(
            f"{WHO}: axis_separators {list(seps)} of {what} must be strictly "
            f"increasing dimensions in 1..{ndim - 1}"
        )
    return list(seps)


def set_axis_separator(block: Block, kind: str, index: int, axis_separators: Optional[List[int]]):
    """`kind`/`index` as resolved by reindex.buffer_index (already checked)."""
    buf = (block_reads(block) if kind == "read" else block_writes(block))[index]
    while not isinstance(buf.owner, ir.Block) and buf.owner.name == "memref.subview":
        buf = buf.owner.operands[0]  # a T.match_buffer view: its source buffer
    ndim = len(ir.MemRefType(buf.type).shape)
    seps = check_separators(list(axis_separators or []), ndim, f"buffer {buffer_name(buf)!r}")
    set_buffer_attr(buf, AXIS_SEPARATORS, axis_separators_attr(seps))
    from tir_mlir.passes.schedule.set_scope import _views

    for view in _views(buf):  # TVM copies them to a view of the same rank, else zeros
        same = len(ir.MemRefType(view.type).shape) == ndim
        view_seps = seps if same else [0] * len(seps)
        set_buffer_attr(view, AXIS_SEPARATORS, axis_separators_attr(view_seps) if seps else None)
