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

Only flat loop bodies whose varying values all have one element width are weighed (anything
else keeps its lanes).
"""

import math
from typing import Optional

from mlir import ir

from tir_mlir.passes.lowering.common import scalar_bits
from tir_mlir.passes.lowering.cpu_target import CpuTarget
from tir_mlir.passes.lowering.lane_costs import lane_costs
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
    gathers, scatters, ops, element = counted
    if not gathers and not scatters:
        return lanes
    bits = scalar_bits(element)
    candidates = [n for n in _halvings(lanes) if n * bits >= MIN_BITS]
    if len(candidates) < 2:
        return lanes
    costs = lane_costs(target, _llvm_name(element), tuple(sorted(candidates)))
    if costs is None:
        return lanes

    def cost(n):
        build, split = costs[n]
        registers = math.ceil(n * bits / vector_bits)
        return lanes // n * (gathers * build + scatters * split + ops * registers)

    return min(candidates, key=lambda n: (cost(n), -n))


def _halvings(n: int) -> list:
    out = [n]
    while out[-1] % 2 == 0:
        out.append(out[-1] // 2)
    return out


def _count(body, plan: Plan) -> Optional[tuple]:
    """(gathered loads, scattered stores, varying arithmetic ops, element type), or None when
    the body is not flat or its varying values differ in width."""
    gathers = scatters = ops = 0
    types = set()
    for o in list(body.operations)[:-1]:
        o = o.operation
        if len(o.regions):
            return None
        if o.name == "memref.load":
            index = list(o.operands)[1:]
            strides = [plan.stride(v) for v in index]
            if any(strides):
                types.add(o.results[0].type)
                gathers += not contiguous(o.operands[0], strides)
        elif o.name == "memref.store":
            index = list(o.operands)[2:]
            strides = [plan.stride(v) for v in index]
            if any(strides):
                types.add(o.operands[0].type)
                scatters += not contiguous(o.operands[1], strides)
        elif len(o.results) == 1 and o.results[0] in plan.varying:
            types.add(o.results[0].type)
            ops += 1
    # (a comparison's i1 is a mask of the same lanes, not a narrower element)
    widths = {scalar_bits(t) for t in types if scalar_bits(t) != 1}
    if len(widths) != 1:
        return None
    element = next(t for t in types if scalar_bits(t) in widths)
    return gathers, scatters, ops, element


def _llvm_name(t) -> str:
    if isinstance(t, ir.IntegerType):
        return f"i{ir.IntegerType(t).width}"
    if isinstance(t, ir.BF16Type):
        return "bfloat"
    return {16: "half", 32: "float", 64: "double"}.get(scalar_bits(t), "float")
