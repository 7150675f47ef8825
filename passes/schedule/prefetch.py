"""prefetch: TE's `s[B].prefetch(A, loop, offset)` in TensorIR form.

prefetch(B, 0, k, offset=1) records, on loop k, which buffer to prefetch and how many
iterations ahead::

    for k in range(1024):              for k in range(1024, annotations={"prefetch": [["A", 1]]}):
        block "B": ... A[vi, vk] ...  ->    block "B": ... A[vi, vk] ...

The lowering (passes/lowering/prefetch.py) turns it into `memref.prefetch` ops (read,
locality 3, data cache; `prefetcht0` on x86) at the start of each iteration of k, one per cache
line of the region the loop body reads from A at iteration k + offset.
Legality: buffer_index in range of the block's reads; the loop is an ancestor of the block;
offset >= 1.
"""

from mlir import ir

from tir_mlir.dialect.ops import Block, Loop
from tir_mlir.errors import ScheduleError
from tir_mlir.passes.schedule.annotate import to_attr
from tir_mlir.analysis.buffer_util import block_reads, buffer_name, enclosing_loops
from tir_mlir.passes.schedule.cache_read_write import pick_buffer

KEY = "prefetch"


def prefetch(block: Block, buffer_index: int, loop: Loop, offset: int = 1):
    buf = pick_buffer(block, block_reads(block), buffer_index, "prefetch", "read")
    if all(l.op != loop.op for l in enclosing_loops(block.op)):
        raise ScheduleError(
            f"prefetch: loop {loop.name!r} is not an ancestor of block {block.name!r}"
        )
    if offset < 1:
        raise ScheduleError(f"prefetch: offset must be >= 1, got {offset}")
    anns = loop.annotations
    old = []
    if KEY in anns:
        old = [
            [ir.StringAttr(e[0]).value, ir.IntegerAttr(e[1]).value]
            for e in map(ir.ArrayAttr, ir.ArrayAttr(anns[KEY]))
        ]
    name = buffer_name(buf)
    anns[KEY] = to_attr([e for e in old if e[0] != name] + [[name, offset]])
    loop.set(annotations=anns)
