"""Stage `lane-interchange` (CPU, affine level): a `T.vectorized` loop whose lanes are apart in
memory trades places with the serial loop around it when that loop walks memory along rows.

    for j in 0..64:                              for i in 0..3:
      for i in T.vectorized(3):          =>        for j in T.vectorized(64):
        C[i, j] += A[i, k] * B[k, j]                 C[i, j] += A[i, k] * B[k, j]

Vectorized over rows, every lane of `C` is a scalar load and store of its own (a gather and a
scatter at every step); vectorized over `j`, `C` and `B` are whole vector loads and stores and
`A` one value for all lanes (benchmarks/README.md, "Row lanes", measures the
difference). TVM's build does the same in effect: its vectorizer leaves a predicated lane loop
serial and LLVM vectorizes the loop around it.

A pair qualifies when `j` is a plain serial loop (constant bounds, step 1, no annotation) whose
body is pure ops and the vectorized loop `i` (constant bounds, step 1) holding accesses, pure
ops and `affine.if`s of them; every store is on a row-major buffer, reached by no other access
at another address (the same SSA memref, the same index), and its element is a different one
for each (j, i) (its strides in `j` and `i` nonzero and apart, as in `loop-interchange`). Then
the iterations are independent and any order computes the same numbers.
It is done when some access that varies with `i` is apart between lanes and none is contiguous
(no contiguous vector access is lost) but a load the same for all iterations of `j`, loaded once
per lane after the swap, and, along `j`, every store is contiguous and every load nearer than a
vector register's lanes of its element (the same for all iterations, contiguous, or a stride
LLVM's interleaved groups and `strided-loads` read with whole vectors), over at least
MIN_VECTOR_TRIPS iterations, or, when it stores only floats, one 128-bit register's lanes of the
narrowest if fewer (SSE2's and NEON's width, the narrowest vector of every CPU target: 4 floats
fill it, while the lanes apart are one scalar access and insert or extract each whatever their
number; integer rows inside a reduction are `rows-outside`'s, see `_least_trips`).
It is also done when the one access contiguous along the lanes is a transposed read (and
every other a load the same for all lanes, or apart like the stores), `j` a power of two of at
least MIN_COLUMNS iterations and the lanes a multiple of MIN_COLUMNS above it, with no loop
between:

    for j in 0..1024:                            for i in 0..32:
      for i in T.vectorized(32):         =>        for j in T.vectorized(1024):
        C[i, j] = A[j, i] + B[i, j]                  C[i, j] = A[j, i] + B[i, j]

Vectorized over rows, every lane of `C` and `B` is a scalar store or load 4 KiB from the next,
32 rows of two buffers in one L1 set; swapped, `C` and `B` are rows and `A`'s read is the tile
`transpose-tiles` runs as register transposes (0280 / 0783 of seed 1418610677, 32 and 16 lanes:
3.2 -> 0.66 and 2.7 -> 0.85 ms at 1 thread; 5 lanes, columns no tile takes, ran 1.5x slower
swapped: 0036; 4 lanes, 8 rows of two buffers in an 8-way L1 set, 1.12x slower: 0412 / 0683
of seeds 777002 / 777003; benchmarks/README.md, "session 17, transposes").
An rfactor's lanes are such a loop:

    for j in 0..512:                             for l in 0..16:
      for l in T.vectorized(16):         =>        for j in T.vectorized(512):
        C_rf[l, i, j] += A[i, 16 k0 + l] * B[16 k0 + l, j]

`C_rf`'s lanes are 1 MiB apart and `B`'s a row; `A`'s are adjacent but the same for every `j`.

Plain serial loops may stand between `j` and `i` (each body pure ops and then the next loop):
they stay in place, and `i` and `j` trade ranges across them. Either no store moves along them
(a reduction window: each element is updated in the order it was), or each of them moves some
store, its strides along `j`, `i` and those loops apart (sorted, each beyond the span of the
smaller ones, as for the gathering pairs below). Every element is still updated by its own
iteration of the loops. A mix of both is left alone: a batch matmul's 16 rows vectorized under
`k` (no store moves along it) and rows and batches that move the stores (0837 of seed 424113201)
ran 1.5x slower with its 128 columns innermost, where a plain matmul's ran 3x faster (0823 of
seed 2004163578); the difference is not understood.

    for w in 0..56:                              for h in 0..3:
      for r, s in 2 x 2:                 =>        for r, s in 2 x 2:
        for h in T.vectorized(3):                    for w in T.vectorized(56):
          B[h, w] = max(B[h, w], A[2h + r, 2w + s])

A max pool's 3 output rows vectorized under its window were 12 scalar loads and inserts per
column; TVM's vectorizer leaves the predicated rows serial and LLVM vectorizes the columns.
The rows may also sit under the channels, whose stores move with them:

    for w in 0..4:                               for h in 0..12:
      for c in 0..16:                    =>        for c in 0..16:
        for h in T.vectorized(12):                   for w in T.vectorized(4):
          B[c, h, w] = max(B[c, h, w], A[c, 2h + r, 2w + s])

(12 rows 56 floats apart, every lane a scalar load, insert and extract; 4 columns are one
128-bit vector of outputs and two of inputs, benchmarks/README.md, "session 14, pools").

A serial loop whose accesses all jump a vector register's lanes or more per step (gathers) trades
places with the serial loop around it in the same way, when that loop walks them along rows:

    for w in 0..56:                              for c in 0..32:
      for c in 0..32:                    =>        for w in 0..56:
        for h in T.unroll(8): (2 x 2 window)         for h in T.unroll(8): (2 x 2 window)
          B[c, h, w] = max(B[c, h, w], A[c, 2h + r, 2w + s])

A 2x2 max pool whose 32 channels (12544 floats apart) were the innermost spatial loop ran
scalar: LLVM's loop vectorizer takes only the innermost loop, which gathered every lane
(`gather-loops` leaves such a loop scalar); TVM's host build vectorized it with hardware
gathers. With the columns inside, the unrolled rows and the window around them, LLVM vectorizes
the columns: contiguous stores and stride-2 loads (benchmarks/README.md, "session 11, pools").
The pair qualifies when `j` is a plain serial loop whose body is pure ops and the plain serial
loop `c`; `c` holds accesses, pure ops, `affine.if`s and loops of constant bounds, each unrolled
here (`T.unroll`) or small enough for LLVM to unroll whole (`UNROLLED_BAND_OPS`), so that `j`
becomes the innermost loop LLVM sees, while `c` itself is too large for that (a `c` of 2 rows
LLVM unrolls, and then vectorizes `j` as it is); every store is on a row-major buffer, reached by no other
access at another address, and writes a different element at every iteration of the loops
around it up to `j` (its strides, sorted, each beyond the span of the smaller ones): the (j, c)
iterations are independent. It is done when every access that varies with `c` jumps at least a
vector register's lanes of its element (the target's width, `cpu_model.py`) and, along `j`,
every store is contiguous and every load nearer than that (LLVM's interleaved groups load such
a stride with whole vectors), over at least as many iterations as for the lanes above (floats:
one 128-bit register's lanes, `_least_trips`).

When the loop right under `j` does not qualify, the last of the plain serial loops nested below
it may, across the loops between (each body pure ops and then the next loop), which stay in
place; a store may move along them, its strides along `j`, `c` and the loops between it moves
with apart as above, so the (j, c) iterations still touch disjoint elements and each element's
updates keep their order; the nest under `j` must be too large for LLVM to unroll whole:

    for w in 0..56:                              for c in 0..16:
      for g, r, s, h in 2 x 3 x 3 x 4:   =>        for g, r, s, h in 2 x 3 x 3 x 4:
        for c in 0..16:                              for w in 0..56:
          S[32 c0 + 16 g + c, h, w] += A[..., h + r, w + s]

When every loop between moves some store (a tile of outputs, no reduction among them), `j`
moves innermost instead and the others keep their order, each one step out (`rotate_loops`):

    for w in 0..4:                               for c in 0..16:
      for c in 0..16:                    =>        for h in 0..8:
        for h in 0..8:                               for w in 0..4:
          B[c, h, w] = 0                               B[c, h, w] = 0
          for r, s in 3 x 3:                           for r, s in 3 x 3:
            B[c, h, w] += A[c, h + r, w + s] * W[c, r, s]   B[c, h, w] += ...

A 3x3 depthwise convolution whose 8 output rows (a row apart: a gather per step) ran innermost
under its 16 channels under 4 output columns ran scalar; TVM's host build vectorized the rows
with hardware gathers. With the columns innermost, LLVM vectorizes them (one 128-bit vector of
outputs, the window's loads contiguous) and the weights stay the same over the rows, as the
schedule had them (swapped instead, the rows outside the channels, each channel's weights
were loaded again for every row: case 0736 of seed 1145227567, benchmarks/README.md, "session
15, depthwise").
"""

from mlir import ir

from tir_mlir.dialect.ops import Loop, body_ops
from tir_mlir.passes.lowering.buffer_roots import noalias_args
from tir_mlir.passes.lowering.version_guards import COPY as LOOP_COPY
from tir_mlir.passes.lowering.common import (
    UNROLLED_BAND_OPS,
    ancestors,
    constant_extent,
    constant_loop,
    functions,
    loop_iv,
    walk,
)
from tir_mlir.passes.lowering.cpu_model import VectorStage
from tir_mlir.passes.lowering.transpose_gathers import MIN_COLUMNS
from tir_mlir.passes.lowering.loop_interchange import (
    ACCESSES,
    MIN_VECTOR_TRIPS,
    Access,
    is_vectorized_leaf,
    leaf_ops,
    PLAIN_LOOP_ATTRS,
    pure,
    rotate_headers,
    rotate_ivs,
)
from tir_mlir.analysis.buffer_util import NotAffine

MIN_BITS = 128  # the narrowest vector register of every CPU target (SSE2, NEON)


class LaneInterchange(VectorStage):
    name = "lane-interchange"

    def __call__(self, module: ir.Module):
        for f in functions(module):
            noalias = noalias_args(f)
            for j in [o for o in walk(f) if o.name == "affine.for"]:
                nest = _lane_loop(j)
                if nest is not None and self._lanes_apart(j, *nest, noalias):
                    swap_loops(j, *nest)
                    continue
                for inner, between in _gathering_loops(j):
                    accesses = self._gathers_apart(j, inner, between, noalias)
                    if accesses is None:
                        continue
                    if between and _tile_loops(accesses, len(between)):
                        rotate_loops(j, inner, between)
                    else:
                        swap_loops(j, inner, between)
                    break

    def _gathers_apart(self, j, inner, between, noalias) -> list | None:
        """The accesses of the nest (leaves: `j`, `inner`, the loops `between`), when the pair
        (j, inner) of `_gathering_loops` is independent and gathers along `inner` what it reads
        and writes along rows over `j` (the module's docstring); None otherwise."""
        # shared: one dim per value across the accesses (Access appends outer values)
        leaves = _ivs(j, inner) + [loop_iv(m) for m in between]
        try:
            accesses = [Access(o, leaves, noalias) for o in _nest_ops(inner) or []]
        except NotAffine:
            return None
        if independent(accesses, leaves, j, inner, between) and self._gathers(accesses, j):
            return accesses
        return None

    def _gathers(self, accesses: list, j) -> bool:
        trips = constant_extent(Loop(j))
        if trips < _least_trips(accesses) or not any(a.stride(1) for a in accesses):
            return False
        for a in accesses:
            lanes = max(1, self.vector_bits // (8 * a.elem_bytes))
            along, across = a.stride(0), a.stride(1)
            if along is None or across is None or 0 < abs(across) < lanes:
                return False
            if (along != 1) if a.store else (abs(along) >= lanes):
                return False
        return True

    def _lanes_apart(self, j, lanes, between, noalias) -> bool:
        """Whether the lane loop `lanes` and `j` trade places (the module's docstring); the
        loops between must all move some store or none."""
        leaves = _ivs(j, lanes) + [loop_iv(m) for m in between]  # Access appends outer values
        try:
            accesses = [
                Access(o, leaves, noalias) for o in leaf_ops(lanes) or [] if o.name in ACCESSES
            ]
        except NotAffine:
            return False
        stores = [a for a in accesses if a.store]
        kinds = {any(a.stride(p) for a in stores) for p in range(2, 2 + len(between))}
        return (
            len(kinds) < 2
            and independent(accesses, leaves, j, lanes, between)
            and (
                (_profitable(accesses, j) and self._loads_near(accesses))
                or (not between and self._transposed(accesses, j, lanes))
            )
        )

    def _transposed(self, accesses: list, j, lanes) -> bool:
        """Whether the lanes run across rows of every store and every load but transposed reads
        (contiguous along the lanes and a vector register's lanes or more apart along `j`), of
        which there is one at least, while along `j` every store is contiguous and every other
        load near; with `j` a power of two of at least MIN_COLUMNS iterations and the lanes a
        multiple of MIN_COLUMNS above it, so that swapped, the reads are tiles `transpose-tiles`
        takes (the module's docstring)."""
        trips, rows = constant_extent(Loop(j)), constant_extent(Loop(lanes))
        if trips < MIN_COLUMNS or trips & (trips - 1) or rows % MIN_COLUMNS or rows == MIN_COLUMNS:
            return False  # 4 rows: swapped, two fresh-seed cases ran 1.12x slower (README)
        found = False
        for a in accesses:
            width = max(1, self.vector_bits // (8 * a.elem_bytes))
            along, across = a.stride(0), a.stride(1)
            if along is None or across is None:
                return False
            if a.store:
                if along != 1 or across in (0, 1, -1):
                    return False
            elif across == 1 and abs(along) >= width:
                found = True
            elif abs(along) >= width or (across in (1, -1) and along != 0):
                return False
        return found

    def _loads_near(self, accesses: list) -> bool:
        """Whether every load steps along `j` (leaf 0) less than a vector register's lanes."""
        for a in accesses:
            lanes = max(1, self.vector_bits // (8 * a.elem_bytes))
            along = a.stride(0)
            if not a.store and (along is None or abs(along) >= lanes):
                return False
        return True


def _ivs(j, lanes) -> list:
    return [loop_iv(j), loop_iv(lanes)]


def _lane_loop(j):
    """(the vectorized loop `j`'s body ends in, the plain serial loops between them), when
    the nest has the shape the stage swaps: each loop's body pure ops and then the next loop."""
    if not serial_loop(j):
        return None
    between, loop = [], j
    while True:
        ops = body_ops(loop.regions[0].blocks[0])
        if not ops or not all(pure(o) or o.name == "affine.apply" for o in ops[:-1]):
            return None
        loop = ops[-1]
        if loop.name == "affine.for" and is_vectorized_leaf(loop):
            return loop, between
        if not serial_loop(loop):
            return None
        between.append(loop)


def _gathering_loops(j) -> list:
    """The (inner, between) pairs the serial loop `j` may trade with as a gathering pair: the
    serial loop its body ends in (its other ops pure), and else the last of the plain serial
    loops nested so below it, with the loops above it `between`; each only when it holds only
    what `_nest_ops` accepts, and the nest under `j` is too large for LLVM to unroll whole
    (which leaves `j` the innermost loop it vectorizes anyway)."""
    chain = _serial_chain(j)
    if not chain or not constant_loop(Loop(chain[0])) or _unrolled_whole(chain[0]):
        return []
    picks = [0] + ([len(chain) - 1] if len(chain) > 1 else [])
    return [
        (chain[k], chain[:k])
        for k in picks
        if constant_loop(Loop(chain[k])) and _nest_ops(chain[k]) is not None
    ]


def _serial_chain(j) -> list:
    """The plain serial loops nested under the serial loop `j`, each the last op of the body
    above it after pure ops only, outermost first."""
    chain, loop = [], j
    while serial_loop(loop):
        ops = body_ops(loop.regions[0].blocks[0])
        if not ops or not all(pure(o) or o.name == "affine.apply" for o in ops[:-1]):
            break
        if not serial_loop(ops[-1]):
            break
        loop = ops[-1]
        chain.append(loop)
    return chain if serial_loop(j) else []


def _nest_ops(loop):
    """The accesses in `loop`'s body at any depth, when it holds nothing but them, pure ops,
    `affine.if`s and loops of constant bounds without results, each unrolled here or small
    enough for LLVM to unroll whole (None otherwise)."""
    out = []
    for o in walk(loop):
        if o.name in ACCESSES:
            out.append(o)
        elif o.name == "affine.for":
            if len(o.operands) or len(o.results) or not _unrolled_whole(o):
                return None
        elif o.name == "affine.if":
            if len(o.results):
                return None
        elif not (pure(o) or o.name in ("affine.apply", "affine.yield")):
            return None
    return out


def _unrolled_whole(op) -> bool:
    if Loop(op).kind == "unroll":
        return True
    loops = [op, *(o for o in walk(op) if o.name == "affine.for")]
    # (a loop over symbolic sizes or outer loop variables is never unrolled whole)
    return all(constant_loop(Loop(o)) for o in loops) and _unrolled_ops(op) <= UNROLLED_BAND_OPS


def _unrolled_ops(op) -> int:
    """The ops of an `affine.for` of constant bounds unrolled whole: trip count x (its stores
    and its ops on values other than indices, inner loops and ifs counted unrolled)."""
    body = 0
    for o in walk(op):
        if o.name in ("affine.for", "affine.if", "affine.yield", "arith.constant"):
            continue
        if o.name == "memref.store" or any(not isinstance(r.type, ir.IndexType) for r in o.results):
            trips = 1
            for p in ancestors(o):
                if p == op:
                    break
                if p.name == "affine.for":
                    trips *= constant_extent(Loop(p))
            body += trips
    return constant_extent(Loop(op)) * body


def _store_alone(store, accesses: list) -> bool:
    """Whether `store` is on a buffer of static positive strides (row-major, or rows padded by
    `storage_align`: `independent` checks the addresses it writes are apart) that no other
    access reaches at another address."""
    return (
        store.static
        and all(s > 0 for s in store.strides)
        and not any(
            a.may_alias(store) and (a.memref != store.memref or a.index != store.index)
            for a in accesses
        )
    )


def independent(accesses: list, leaves: list, j, inner, between=()) -> bool:
    """Whether every store is alone on its buffer (`_store_alone`) and writes another element
    at every iteration of `j`, `inner` and the loops `between` them and in `inner` its address
    moves with: the (j, inner) iterations touch disjoint elements, and the updates of each
    element keep their order (the loops it does not move with keep their places)."""
    extents = {0: constant_extent(Loop(j)), 1: constant_extent(Loop(inner))}
    for p, m in enumerate(between, start=2):
        extents[p] = constant_extent(Loop(m))
    for o in walk(inner):
        if o.name == "affine.for":
            iv = loop_iv(o)
            for p, leaf in enumerate(leaves):
                if leaf == iv:
                    extents[p] = constant_extent(Loop(o))
    for s in accesses:
        if not s.store:
            continue
        if not _store_alone(s, accesses):
            return False
        steps = [(s.stride(p), n) for p, n in extents.items() if s.depends_on(p) or p < 2]
        if any(st is None for st, _ in steps) or not (s.stride(0) and s.stride(1)):
            return False
        span = 0
        for st, n in sorted((abs(st), n) for st, n in steps if st):  # type: ignore[arg-type]
            if st <= span:
                return False
            span += st * (n - 1)
    return True


def serial_loop(op) -> bool:
    """A serial loop of constant bounds, step 1, no annotation (a copy `version-guards` made
    counts: its twin is another loop of the same kind)."""
    if op.name != "affine.for" or len(op.operands):
        return False
    if set(op.attributes) - PLAIN_LOOP_ATTRS - {LOOP_COPY}:
        return False
    loop = Loop(op)
    return loop.kind == "serial" and loop.step == 1 and constant_extent(loop) > 1


def _least_trips(accesses: list) -> int:
    """The fewest iterations of `j` worth moving the lanes into: one 128-bit register's lanes of
    the narrowest float stored, MIN_VECTOR_TRIPS at most, and MIN_VECTOR_TRIPS when some store is
    an integer (integer rows inside a reduction are `rows-outside`'s, which runs each as one
    contiguous dot with its sum in a register: better than a short vector of columns whose sums
    go through memory at every step)."""
    stores = [a for a in accesses if a.store]
    if not stores or not all(isinstance(a.element_type, ir.FloatType) for a in stores):
        return MIN_VECTOR_TRIPS
    return min([MIN_VECTOR_TRIPS, *(MIN_BITS // (8 * a.elem_bytes) for a in stores)])


def _profitable(accesses: list, j) -> bool:
    """Whether `j` runs enough iterations for a vector (the module's docstring), along `j`
    every store is contiguous (the loads: `_loads_near`), and, along the lanes, some access is apart and none contiguous but a load the same for all iterations of
    `j` (loaded once, outside the vector loop, after the swap)."""
    if constant_extent(Loop(j)) < _least_trips(accesses):
        return False
    moving = [a for a in accesses if a.stride(1) != 0]
    apart = [a.stride(1) not in (1, -1) for a in moving]
    kept = all(x or (not a.store and a.stride(0) == 0) for a, x in zip(moving, apart))
    along = all(a.stride(0) == 1 for a in accesses if a.store)
    return any(apart) and kept and along


def _tile_loops(accesses: list, between: int) -> bool:
    """Whether every one of the `between` loops (leaves 2 on) moves some store."""
    stores = [a for a in accesses if a.store]
    return all(any(a.stride(p) for a in stores) for p in range(2, 2 + between))


def rotate_loops(j, inner, between):
    """`j` moves innermost of the nest `j`, `between`, `inner`, each of the others one step out:
    every loop op takes the range (and name) of the loop nested right under it, and `inner` takes
    `j`'s; the pure ops of the bodies above `inner` move into its body, as in `swap_loops`."""
    loops = [j, *between, inner]
    first = body_ops(inner.regions[0].blocks[0])[0]
    for loop in loops[:-1]:
        for o in body_ops(loop.regions[0].blocks[0])[:-1]:
            o.move_before(first)
    rotate_headers(loops, -1)
    rotate_ivs([loop_iv(op) for op in loops], -1, j)


def swap_loops(j, lanes, between=()):
    """`j` takes the lane loop's range, the lane loop `j`'s (kinds stay in place); the pure ops
    of the bodies of `j` and of the loops `between` move into the lane loop's, where the uses
    of its IV now are."""
    inner = lanes.regions[0].blocks[0]
    first = body_ops(inner)[0]
    for loop in (j, *between):
        for o in body_ops(loop.regions[0].blocks[0])[:-1]:
            o.move_before(first)
    rotate_headers([j, lanes], 1)
    rotate_ivs(_ivs(j, lanes), 1, j)
