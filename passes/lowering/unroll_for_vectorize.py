"""Stage `unroll-for-vectorize` (CPU, affine level): the small inner loops of a loop that would
vectorize without them are unrolled, so that LLVM's loop vectorizer sees it innermost.

    for x in 0..14:                          for x in 0..14:
      for rc in 0..2:                            B[f0, x] += P[0, 0, x] * W[f0, 0, 0]
        for ry in 0..3:               =>         B[f1, x] += P[0, 0, x] * W[f1, 0, 0]
          B[f0, x] += P[rc, ry, x] * W[..]       ... (6 copies of the body)
          B[f1, x] += ...

A tuner's conv tile (16 x 2 outputs unrolled by `pragma_auto_unroll_max_step`, around them the
2 x 3 reduction loops, around those 14 `x`) ran slower than TVM's build (benchmarks/README.md,
"session 9, stage figures"): LLVM unrolls such a band on TVM's IR and then vectorizes `x` with
masked zmm FMAs, but its unroll cost model counts more on ours (address arithmetic, carried
accumulators), so `x` stayed scalar. Unrolling is
always legal; this stage only chooses where.

A loop `x` qualifies when it is a plain serial loop (constant bounds, step 1, no annotation) of
at least one 128-bit register's lanes of the narrowest element it stores (SSE2's and NEON's
width, the narrowest vector of every CPU target; at most MIN_VECTOR_TRIPS); everything in it
is pure ops, loads, stores and plain serial loops holding the same; unrolled whole, its body
makes at most MAX_STATEMENTS stores; in `x` every store is contiguous (stride 1 on a
row-major buffer) and every load contiguous or the same for all iterations; and the innermost
loops are not themselves vectorizable (a loop that is stays, for LLVM to vectorize it). A loop
of fewer than MIN_VECTOR_TRIPS iterations also makes no more copies of its body that write
other elements (the inner loops a store's address moves with) than it has iterations: an avg
pool's 4 columns around 32 channels, unrolled, ran slower as LLVM's one short vector of
columns than the channels did before (benchmarks/README.md, "session 10, depthwise"). Nor is
such a short loop unrolled around inner loops that only reduce onto the element it stores (one
copy): a conv1d's 7 columns around its 64 x 3 reduction, unrolled, stayed scalar in LLVM, each
column one chain of 192 dependent FMAs with the 192 weights spilled, 1.3-1.9x TVM's time; kept,
scalar-replace carries each column's sum over the reduction loop (benchmarks/README.md,
"session 16, conv").

A depthwise 3x3 tile of 6 columns x 4 rows (columns outside rows, the window innermost) is such
a loop: on TVM's IR LLVM unrolls the rows and the window and vectorizes the 6 columns with one
masked 8-lane register (AVX-512 folds the tail); on ours it unrolled them too, but its GVN then
carried the window's overlapping input loads from one column to the next as phis, and its loop
vectorizer found the columns not worth vectorizing. Unrolled here first, the column loop is
LLVM's innermost loop from the start and vectorizes as on TVM's IR (benchmarks/README.md,
"session 10, depthwise").
"""

from mlir import ir

from tir_mlir.dialect.ops import Loop, body_ops
from tir_mlir.ir.ir_walk import ancestors, walk_all
from tir_mlir.passes.lowering.buffer_roots import noalias_args
from tir_mlir.passes.lowering.common import (
    constant_extent,
    constant_loop,
    functions,
    loop_iv,
    value_bits,
)
from tir_mlir.passes.lowering.loop_interchange import (
    ACCESSES,
    MIN_VECTOR_TRIPS,
    Access,
    plain_loop,
    pure,
)
from tir_mlir.passes.lowering.unroll import unroll
from tir_mlir.analysis.buffer_util import NotAffine

# A body of more stores than this, unrolled, is left alone (TVM's conv tile above: 192).
MAX_STATEMENTS = 256
# The narrowest vector register of every CPU target (SSE2, NEON), in bits.
MIN_BITS = 128


class _NotThisShape(Exception):
    pass


class UnrollForVectorize:
    name = "unroll-for-vectorize"

    def __call__(self, module: ir.Module):
        for f in functions(module):
            noalias = noalias_args(f)
            # innermost first: a loop's inner loops are never looked at after it unrolled them
            for op in reversed([o for o in walk_all(f) if o.name == "affine.for"]):
                inner = _inner_loops(op)
                if inner and _vectorizes_unrolled(op, inner, noalias):
                    for loop in reversed(inner):  # innermost first
                        unroll(loop)


def _inner_loops(x):
    """The loops inside `x`, outer first, when `x` has the shape the stage unrolls; else []."""
    if not plain_loop(x) or constant_extent(Loop(x)) < _min_trips(x):
        return []
    loops = []

    def stores(block) -> int:
        n = 0
        for o in body_ops(block):
            if o.name == "affine.for":
                if not plain_loop(o) and not _unit(o):
                    raise _NotThisShape
                loops.append(o)
                n += constant_extent(Loop(o)) * stores(o.regions[0].blocks[0])
            elif o.name == "memref.store":
                n += 1
            elif not (pure(o) or o.name in ACCESSES or o.name == "affine.apply"):
                raise _NotThisShape
            if n > MAX_STATEMENTS:
                raise _NotThisShape
        return n

    try:
        stores(x.regions[0].blocks[0])
    except _NotThisShape:
        return []
    return loops


def _min_trips(x) -> int:
    """The fewest iterations of `x` worth a vector loop: one 128-bit register's lanes of the
    narrowest element `x` stores (MIN_VECTOR_TRIPS at most, and without stores)."""
    bits = [
        value_bits(ir.MemRefType(o.operands[1].type).element_type)
        for o in walk_all(x)
        if o.name == "memref.store"
    ]
    return min(MIN_VECTOR_TRIPS, MIN_BITS // min(bits)) if bits else MIN_VECTOR_TRIPS


def _unit(op) -> bool:
    return (
        op.name == "affine.for"
        and constant_loop(Loop(op))
        and Loop(op).extent == 1
        and Loop(op).kind == "serial"
    )


def _spatial_copies(inner, accesses) -> int:
    """How many copies of the body write other elements once `inner` is unrolled."""
    n = 1
    for k, loop in enumerate(inner, 1):
        if any(a.store and a.depends_on(k) for a in accesses):
            n *= constant_extent(Loop(loop))
    return n


def _vectorizes_unrolled(x, inner, noalias) -> bool:
    ivs = [loop_iv(o) for o in [x] + inner]
    try:
        accesses = [Access(o, ivs, noalias) for o in walk_all(x) if o.name in ACCESSES]
    except NotAffine:
        return False
    trips = constant_extent(Loop(x))
    if trips < MIN_VECTOR_TRIPS and not 1 < _spatial_copies(inner, accesses) <= trips:
        return False
    if not all(
        a.stride(0) in ((1,) if a.store else (0, 1)) and (a.row_major or not a.store)
        for a in accesses
    ):
        return False
    innermost = [
        k
        for k, o in enumerate(inner, 1)
        if not any(c.name == "affine.for" for c in body_ops(o.regions[0].blocks[0]))
    ]
    # A stored address the innermost loop does not move is an accumulator: no vector loop.
    return not any(
        constant_extent(Loop(inner[k - 1])) >= MIN_VECTOR_TRIPS
        and all(
            a.stride(k) in ((1,) if a.store else (0, 1))
            for a in accesses
            if inner[k - 1] in ancestors(a.op)
        )
        for k in innermost
    )
