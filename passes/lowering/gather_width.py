"""How many lanes each vector of a `T.vectorized` loop should have when its lanes are gathered
from (or scattered to) addresses that are not contiguous, as `vectorize-loops` decides before
vectorizing it.

    for i1 in T.vectorized(8):      # C[i0 * 8 + i1, j] += A[i0 * 8 + i1, k] * B[k, j], f64
        ...                          # A's lanes are 8 rows apart: 8 scalar loads per vector

Such a vector is built lane by lane, and a vector wider than 128 bits also pays the moves
between its 128-bit lanes; LLVM's cost model for the target prices both (lane_costs.py). Cut
into narrower vectors, the loop gathers for less but repeats its arithmetic once per vector.
With n lanes and L per vector, per run of the loop:

    cost(L) = n / L * (gathers * build(L) + scatters * split(L) + ops * registers(L))

(gathers, scatters: the loop's non-contiguous varying loads and stores; ops: its arithmetic on
varying values, one instruction per register it spans). The L of least cost wins; ties keep
the widest. For the f64 column above on Sapphire Rapids: 8 lanes cost 19 + 2, two vectors of
4 cost 2 * (7 + 2), four vectors of 2 cost 4 * (1 + 2): 2-lane vectors, 4.6 -> 2.9 ms for a
256 x 256 x 256 matmul (TVM 3.3 ms). A SiLU down a column of 16 rows, each lane loaded and
stored apart, costs 39 + 24 + 5 at 16 lanes and 4 * (3 + 3 + 5) at 4 (1.8 against 2.0 ms over
512 x 1024); read from a contiguous cache tile, only its store scattered, it keeps 16 lanes
(24 + 5 against 4 * (3 + 5)).

A row sum vectorized over 12 rows (its T.init left in the loop as an `affine.if`) costs 27 + 1
at 12 lanes, 2 * (9 + 1) at 6 and 3 * (3 + 1) at 4: every lane count that divides the loop is a
candidate, not only its halvings (0.31 -> 0.24 ms over 1024 x 1024).

A body whose values widen (int8 loads, int32 products) gathers one type and computes in the
widest: registers count that width, and the inserts' cost is divided by the shuffles per cycle
the target has beside ops of that width (cpu_model.shuffles_per_cycle, from LLVM's scheduling
model; LLVM's cost model prices one). Beside a zmm op an Ice Lake or later Intel core has one
shuffle port (5) for the inserts, beside a ymm or xmm op two (1 and 5); Skylake server has one
at every width. Int8 dot products over 12 rows on Sapphire Rapids: 2 * 12 + 4 as one zmm,
2 * (2 * 6 / 2 + 4) as two 6-lane vectors, measured faster, as are 8 + 8 for 16 rows and 8 x 8
for 64. (Bodies of one width keep the model above, under which
their cases were measured.)

Only loop bodies of plain ops and `affine.if`s of them (a condition such as a reduction's init,
both branches counted as if taken), whose gathers and scatters have one element type and whose
indices do not vary, are weighed (anything else keeps its lanes).
"""

import math
from typing import Optional

from mlir import ir

from tir_mlir.passes.lowering.common import scalar_bits
from tir_mlir.passes.lowering.cpu_model import shuffles_per_cycle
from tir_mlir.passes.lowering.cpu_target import CpuTarget
from tir_mlir.passes.lowering.lane_costs import element_name, lane_costs
from tir_mlir.passes.lowering.vectorize_plan import Plan, contiguous

# Narrowest vector considered: one SSE / NEON register.
MIN_BITS = 128


def gather_lanes(
    body: ir.Block, plan: Plan, lanes: int, target: CpuTarget, vector_bits: int
) -> int:
    """Lanes per vector for a vectorized loop of `lanes` lanes whose `plan` is ok."""
    counted = _count(body, plan)
    if counted is None:
        return lanes
    gathers, scatters, ops, element, widest = counted
    if not gathers and not scatters:
        return lanes
    bits = scalar_bits(element)
    mixed = widest != bits
    candidates = [n for n in _divisors(lanes) if n * widest >= MIN_BITS]
    if len(candidates) < 2:
        return lanes
    costs = lane_costs(target, element_name(element), tuple(sorted(candidates)))
    if costs is None:
        return lanes

    def cost(n):
        build, split = costs[n]
        registers = math.ceil(n * widest / vector_bits)
        moves = gathers * build + scatters * split
        if mixed:
            moves /= shuffles_per_cycle(target, n * widest)
        return lanes // n * (moves + ops * registers)

    return min(candidates, key=lambda n: (cost(n), -n))


def _divisors(n: int) -> list:
    return [d for d in range(n, 0, -1) if n % d == 0]


def _count(body, plan: Plan) -> Optional[tuple]:
    """(gathered loads, scattered stores, varying arithmetic ops, their element type, the
    widest varying element's bits), or None when the body holds a region other than an
    `affine.if`, gathers or scatters none or several types, or an index varies."""
    counts = [0, 0, 0]  # gathers, scatters, ops
    types, accessed = set(), set()
    if not _count_block(body, plan, counts, types, accessed):
        return None
    if len(accessed) != 1 or any(isinstance(t, ir.IndexType) for t in types):
        return None
    # (a comparison's i1 is a mask of the same lanes, not a narrower element)
    widths = {scalar_bits(t) for t in types if scalar_bits(t) != 1}
    return *counts, next(iter(accessed)), max(widths | {scalar_bits(t) for t in accessed})


def _count_block(block: ir.Block, plan: Plan, counts: list, types: set, accessed: set) -> bool:
    """Add the ops of `block` (its terminator aside) to `counts`, their varying types to
    `types` (those of gathers and scatters also to `accessed`); False at a region that is not
    an `affine.if`."""
    for o in list(block.operations)[:-1]:
        o = o.operation
        if o.name == "affine.if":
            blocks = [b for r in o.regions for b in r.blocks]
            if not all(_count_block(b, plan, counts, types, accessed) for b in blocks):
                return False
        elif len(o.regions):
            return False
        elif o.name == "memref.load":
            index = list(o.operands)[1:]
            strides = [plan.stride(v) for v in index]
            if any(strides):
                types.add(o.results[0].type)
                if not contiguous(o.operands[0], strides):
                    accessed.add(o.results[0].type)
                    counts[0] += 1
        elif o.name == "memref.store":
            index = list(o.operands)[2:]
            strides = [plan.stride(v) for v in index]
            if any(strides):
                types.add(o.operands[0].type)
                if not contiguous(o.operands[1], strides):
                    accessed.add(o.operands[0].type)
                    counts[1] += 1
        elif len(o.results) == 1 and o.results[0] in plan.varying:
            types.add(o.results[0].type)
            counts[2] += 1
    return True
