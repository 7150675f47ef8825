"""Which serial loops LLVM must not unroll: those whose loads move a page or more per iteration.

LLVM's unroller (O3: a short constant loop whole, a longer one partially) makes a copy of each
load per unrolled iteration, and a load that stepped S bytes per iteration becomes U loads that
each step U x S. The cores' stride prefetchers learn a stride per load instruction; a column
walk (B[k, j] of a matmul, rows a page apart) that one load instruction walks page by page they
follow, the same walk split over 4 instructions 4 pages apart ran as if unprefetched on an AMD
Zen 4 core (benchmarks/README.md, "Issue 28, session 16, float matmul schedules": a 4 x 2 tile
over a 512-step k, 1.3x slower unrolled by 4). The page is the target's (cpu_model.py).
"""

from tir_mlir.dialect.ops import Loop
from tir_mlir.passes.lowering.chain_footprint import byte_offset
from tir_mlir.passes.lowering.common import walk

LOADS = ("memref.load", "vector.load")
UNROLL_OFF = "#llvm.loop_annotation<unroll = <disable = true>>"


def page_stepping_loops(f, page_bytes: int) -> list:
    """The serial `affine.for` ops in `f` with a load inside (at any depth) whose address moves
    at least `page_bytes` per iteration of the loop."""
    return [
        op
        for op in walk(f)
        if op.name == "affine.for"
        and Loop(op).kind == "serial"
        and any(_steps_a_page(load, op, page_bytes) for load in walk(op) if load.name in LOADS)
    ]


def _steps_a_page(load, loop, page_bytes: int) -> bool:
    lp = Loop(loop)
    form = byte_offset(load, {lp.iv: None})
    return form is not None and abs(form.terms.get(lp.iv, 0) * lp.step) >= page_bytes
