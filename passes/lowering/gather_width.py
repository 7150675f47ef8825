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
varying values, one instruction per register it spans). The L of least cost wins; ties keep the
widest. For the f64 column above on Sapphire Rapids: 8 lanes cost 19 + 2, two vectors of 4 cost 2 *
(7 + 2), four vectors of 2 cost 4 * (1 + 2): 2-lane vectors (faster than TVM's build of a 256 x 256
x 256 matmul: benchmarks/README.md, "stage figures"). A SiLU down a column of 16 rows, each lane
loaded and stored apart, costs 39 + 24 + 5 at 16 lanes and 4 * (3 + 3 + 5) at 4 (4 lanes, faster
over 512 x 1024); read from a contiguous cache tile, only its store scattered, it keeps 16 lanes (24
+ 5 against 4 * (3 + 5)).

A row sum vectorized over 12 rows (its T.init left in the loop as an `affine.if`) costs 27 + 1
at 12 lanes, 2 * (9 + 1) at 6 and 3 * (3 + 1) at 4: every lane count that divides the loop is a
candidate, not only its halvings (4 lanes won over 1024 x 1024).

An accumulator gathered and scattered at an address that the plain serial loop right around
does not change (a reduction's tile vectorized over its rows, `C[i0 * 64 + i1, j]` inside `k`)
is carried across that loop in registers by `scalar-replace`: its lanes are built and taken
apart once per run of that loop, so it costs that much less per iteration, as long as its
vectors fit in the register file (less scalar-replace's free registers). A T.init left in the
loop (a store of that address under an `affine.if` of the body: an rfactor's `C_rf[k_1, i]`
vectorized over `k_1` inside `k_0`) is carried with it, as a select: its scatter costs as much
less (counted once, 4-lane halves of 8 int8 products ran twice the instructions). Cut into 2-lane
vectors, 64 f64 rows make 32 xmm accumulators, more than fit: some stay in memory, loaded and
stored at every step, and every step runs 32 FMAs where 8 zmm run 8.

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

from tir_mlir.dialect.ops import Loop
from tir_mlir.ir.affine_exprs import dims_of
from tir_mlir.ir.ir_walk import func_of
from tir_mlir.passes.lowering.buffer_roots import noalias_args, root
from tir_mlir.passes.lowering.common import ancestors, constant_extent, scalar_bits, walk
from tir_mlir.passes.lowering.cpu_model import implied_features, register_file, shuffles_per_cycle
from tir_mlir.passes.lowering.cpu_target import CpuTarget
from tir_mlir.passes.lowering.lane_costs import element_name, lane_costs
from tir_mlir.passes.lowering.loop_interchange import plain_loop
from tir_mlir.passes.lowering.scalar_replace import FREE_REGISTERS
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
    gathers, scatters, ops, element, widest, accesses = counted
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
    pairs, inits, trips = _carried(body, accesses)
    free = register_file(target.triple, implied_features(target))[0] - FREE_REGISTERS

    def cost(n):
        build, split = costs[n]
        registers = math.ceil(n * widest / vector_bits)
        moves = gathers * build + scatters * split
        if pairs and lanes // n * pairs * math.ceil(n * bits / vector_bits) <= free:
            # carried across the loop around: built and taken apart once per run of it
            moves -= (pairs * (build + split) + inits * split) * (1 - 1 / trips)
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
    types, accessed, ops = set(), set(), []
    if not _count_block(body, plan, counts, types, accessed, ops):
        return None
    if len(accessed) != 1 or any(isinstance(t, ir.IndexType) for t in types):
        return None
    # (a comparison's i1 is a mask of the same lanes, not a narrower element)
    widths = {scalar_bits(t) for t in types if scalar_bits(t) != 1}
    return *counts, next(iter(accessed)), max(widths | {scalar_bits(t) for t in accessed}), ops


def _count_block(
    block: ir.Block, plan: Plan, counts: list, types: set, accessed: set, ops: list
) -> bool:
    """Add the ops of `block` (its terminator aside) to `counts`, their varying types to
    `types` (those of gathers and scatters also to `accessed`, the gathers and scatters
    themselves to `ops`); False at a region that is not an `affine.if`."""
    for o in list(block.operations)[:-1]:
        o = o.operation
        if o.name == "affine.if":
            blocks = [b for r in o.regions for b in r.blocks]
            if not all(_count_block(b, plan, counts, types, accessed, ops) for b in blocks):
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
                    ops.append(o)
        elif o.name == "memref.store":
            index = list(o.operands)[2:]
            strides = [plan.stride(v) for v in index]
            if any(strides):
                types.add(o.operands[0].type)
                if not contiguous(o.operands[1], strides):
                    accessed.add(o.operands[0].type)
                    counts[1] += 1
                    ops.append(o)
        elif len(o.results) == 1 and o.results[0] in plan.varying:
            types.add(o.results[0].type)
            counts[2] += 1
    return True


def _carried(body: ir.Block, accesses: list) -> tuple:
    """(pairs, trips): how many of the gathered loads and scattered stores `accesses` of the
    vectorized loop of `body` are a load and a store of one address that the plain serial loop
    right around it does not change, which `scalar-replace` carries in registers across that
    loop (a reduction's accumulator tile vectorized over its rows), and that loop's trip count.
    Only a buffer that the loop around accesses nowhere else and that no other buffer may
    alias counts."""
    outer = body.owner.operation.parent
    if outer is None or not plain_loop(outer):
        return 0, 0, 1
    iv = outer.regions[0].blocks[0].arguments[0]
    lane = body.arguments[0]
    noalias = noalias_args(func_of(outer))
    stores = [o for o in accesses if o.name == "memref.store"]
    loads = [o for o in accesses if o.name == "memref.load"]
    pairs = inits = 0
    for store in stores:
        mem, index = store.operands[1], list(store.operands)[2:]
        load = next((o for o in loads if _same_address(o, mem, index)), None)
        if load is None or not all(_invariant(v, outer, iv, lane) for v in index):
            continue
        (buffer, shared), _ = root(mem, noalias)
        if buffer is None or shared:  # (another argument may be the same buffer)
            continue
        users = [o for o in walk(outer) if any(v == mem for v in o.operands)]
        if all(o == load or o == store or _init(o, store, body) for o in users):
            pairs += 1
            inits += sum(_init(o, store, body) for o in users)
    return pairs, inits, constant_extent(Loop(outer))


def _init(op, store, body: ir.Block) -> bool:
    """Whether `op` is a store to `store`'s address under an `affine.if` of the vectorized
    loop's body (a T.init left inside the reduction: `scalar-replace` carries it as a select
    of the carried accumulator)."""
    parent = op.parent
    return (
        op != store
        and op.name == "memref.store"
        and list(op.operands)[1:] == list(store.operands)[1:]
        and parent is not None
        and parent.name == "affine.if"
        and parent.parent is not None
        and parent.parent.operation == body.owner.operation
    )


def _same_address(load, mem, index) -> bool:
    return load.operands[0] == mem and list(load.operands)[1:] == index


def _invariant(value: ir.Value, outer, iv: ir.Value, lane: ir.Value) -> bool:
    """Whether `value` is the same at every iteration of the loop `outer` (IV `iv`) for each
    lane (`lane`: the vectorized loop's IV): defined outside it, a lane or a constant, or an
    `affine.apply` of such values in the dims and symbols its map uses."""
    if value == lane:
        return True
    owner = value.owner
    if isinstance(owner, ir.Block):
        return value != iv and not _inside(owner.owner.operation, outer)
    op = owner.operation
    if not _inside(op, outer) or op.name == "arith.constant":
        return True
    if op.name != "affine.apply":
        return False
    amap = ir.AffineMapAttr(op.attributes["map"]).value
    used = set().union(*(dims_of(e) for e in amap.results))
    n = amap.n_dims
    symbols = set(range(n, n + amap.n_symbols))
    operands = list(op.operands)
    return all(_invariant(operands[k], outer, iv, lane) for k in used | symbols)


def _inside(op, outer) -> bool:
    return op == outer or any(a == outer for a in ancestors(op))
