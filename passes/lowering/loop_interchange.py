"""Stage `loop-interchange` (CPU, affine level): a serial reduction band that walks memory across
rows moves outside the serial loop around it, when that loop walks memory along rows.

    for j in 0..N:                           for j in 0..N:
      C[i, j] = 0                                C[i, j] = 0
      for k in 0..K:                  =>     for k in 0..K:
        C[i, j] += A[i, k] * B[k, j]             for j in 0..N:
                                                   C[i, j] += A[i, k] * B[k, j]

The unscheduled matmul's inner loop reads a new cache line of B at every k; interchanged, the
inner loop streams rows of B and C and vectorizes. A direct convolution's `x` loop moves inside
its `rc, ry, rx` band: the 3-step `rx` chain becomes a vector loop along a row (figures:
benchmarks/README.md, "session 9, stage figures"). Every element still sees its updates in the
same order: the numbers are those of the loops as written (an FMA may replace a mul + add, as
everywhere in TVM's builds).

A loop `j` qualifies when it and the loops of the band are plain serial loops (constant bounds,
step 1, no annotation), its body is a prologue of pure ops and stores followed by the band (a
perfect nest whose innermost body holds only loads, stores, pure ops and guarded loads: an
`scf.if` yielding loads and pure ops, as a padding inlined into a convolution reads its input
under `if 1 <= y + ry < 29 ...`; its loads count as the body's), and every access in
the nest to a buffer written there (or to one that may alias it) is at one address: the same
SSA memref, the same index expressions, none depending on the band's loops, and a nonzero
address stride in j on a row-major buffer. Then iterations of j touch disjoint elements of the
written buffers, so running all prologues first (in a copy of j) and then the band with j
innermost gives each element the same sequence of writes.
It is done when the band is too large for LLVM to unroll whole (`UNROLLED_BAND_OPS`) and the
innermost loop then touches at most half the cache lines (of the target's size: cpu_model.py)
per iteration (`Access.lines`), or at most twice as many but it vectorizes while the old one does
not: a loop order that already streams along rows, or a loop a schedule gave a kind, stays.

The band may end in a tail: one `T.vectorized` loop (its body accesses, pure ops and `affine.if`s
of them, as a T.init left in the loop) that stays innermost while j moves inside the band:

    for j in 0..32:                              for k in 0..1024:
      for k in 0..1024:                  =>        for j in 0..32:
        for l in T.vectorized(32):                   for l in T.vectorized(32):
          B[j * 32 + l] += A[k, j * 32 + l]            B[j * 32 + l] += A[k, j * 32 + l]

A column sum in 32-column strips reads 128 bytes of a row 4 KiB from the last at every k (a new
page per step, no prefetcher follows); moved, it reads A along its rows and B (4 KiB) stays in
L1. Then the elements j writes must be apart from those of every other j (its stride at least
the tail's span), and it is done when after the move every access steps along j to the next
element after the tail's span (or not at all) while before some access jumped more than a
cache line at each step of the band's innermost loop.
With a tail, j's prologue may hold a loop that only stores (decompose_reduction's init loop)
when it writes exactly the tail's elements of the band's store (the same index, its IV for
the tail's, the same trip count): it runs for every j first, in the copy of j, like a store.

A T.init the band's loops leave inside it (a split reduction: `if k_0 * 4 + k_1 == 0`) is an
`affine.if` at the head of the innermost body that holds at the band's first iteration only
(`_first_iteration_inits`); its stores, at addresses the band does not move, run before the
band, in j's prologue, like a decompose_reduction's: every element sees the same writes.

A parallel loop j (the schedule's choice: its iterations are what the threads share) that heads
a nest the stage would move were j serial is split (`split_loop`): `j_o` parallel around a serial
`j` of `width` iterations, which moves inside the band as above. A column sum parallel over
its columns walked each column (a new line and page per step); split, each thread streams
strips of rows, one vector accumulator per strip. `width` spans the elements of as many vector
registers as keep the adds busy (`fma_chains`), at most the registers `auto-vectorize` carries
(a wider serial strip stayed a scalar loop over the sums in memory): the largest divisor of j's
trip count up to that, leaving j_o two iterations.

A band that already walks rows (every access steps by at most one element along its innermost
loop) and updates a float element the band does not move is one chain of dependent adds per
iteration of j (a row sum, a softmax's max and sum, a layernorm's mean), bound by the add's
latency: floats are not reassociated, so each chain stays whole (LLVM splits an integer
chain into vector lanes itself). Then j (serial or parallel) is split the same way, `width`
the chains that keep the add units busy (`fma_chains` of the value's width), and the inner
part moves inside the band (`_jam_rows`): that many chains run side by side, each in its
order. An integer chain stays whole for LLVM to split into vector lanes, unless the band reads
a load across rows that j does not move (`shares_gather`: B's column under an int8 matmul's
rows, `for i: for k: C[i, j] += A[i, k] * B[k, j]`): the lanes of one chain would gather it, an
insert per byte. Then the rows are split the same way and the inner part, unrolled, moves inside
the band: LLVM vectorizes k over the rows' chains, which share each gathered vector of B.
The figures of these rules: benchmarks/README.md, "session 9, stage figures" and "session 14,
int8".

A band ending in a tail whose lanes are whole vectors or broadcasts (a matmul's 16-column strip
under the rows and strips fused and parallel, `for f, k: for l in T.vectorized(16)`) is one
chain of vector adds per iteration of j, the same way; a plain innermost loop the store steps
along counts as such a tail (auto-vectorize vectorizes it later). j is split to as many strips
as keep the FMA units busy over the tail's registers, the inner part moves inside the band,
unrolled, above the tail. A fused j's rows and columns (`f floordiv 4`, `f mod 4`) fold
(`_fold`: the split's width divides their divisors) to `j_o floordiv 2`, `(j_o mod 2) * 2 + j`:
linear in j, so `scalar-replace` tells the strips apart and carries their accumulators
(figures: benchmarks/README.md, "session 10, matmul strips").

The band may end in a register tile's rows above the tail (`for k: for i in 2: for l in
T.vectorized(4)`: loops the stores move with, after the reduction loops they do not): each row
is a chain already, so j is split to as many strips as keep the units busy over rows x tail,
and the strips move inside the rows, above the tail; a decomposed init over the rows and lanes
(a loop nest) runs for every strip first. Strips are apart when each of the strides of j, the
rows and the lanes is larger than the span of the smaller ones (`_apart`; a tail whose lanes
are rows passes when j's whole range lies within one row step), j's stride taken within a
strip of a fused loop, whose divisions the split folds (figures: benchmarks/README.md,
"session 11, row tiles").

A tile of accumulators under a reduction loop (`for k: for i in T.unroll(8): for l in
T.vectorized(64)`) that takes more vector registers than `scalar-replace` carries whole has
its rows split in strips that fit, the strips' loop moved outside `k` (`_rows_outside_registers`;
`_Sweep.legal`'s conditions: each element sees its updates in order). Not when `k` is the inner
part of a split reduction: the tile then goes through memory at every step of the outer part
anyway.
"""

import math
from typing import Optional

from mlir import ir
from mlir.dialects import affine

from tir_mlir.ir.affine_exprs import dims_of
from tir_mlir.dialect.ops import Loop, body_ops, integer_set
from tir_mlir.passes.lowering.auto_vectorize import MAX_REGISTERS as CARRIED_REGISTERS
from tir_mlir.passes.lowering.buffer_roots import noalias_args, root
from tir_mlir.passes.lowering.common import (
    UNROLLED_BAND_OPS,
    ancestors,
    constant_extent,
    constant_min,
    defined_outside,
    functions,
    index_const,
    loop_iv,
    walk,
)
from tir_mlir.passes.lowering.cpu_model import cpu_model
from tir_mlir.analysis.buffer_util import NotAffine, simplify, to_affine
from tir_mlir.analysis.linear import Linear, linear
from tir_mlir.passes.lowering.scalar_replace import FREE_REGISTERS, MAX_UNROLLED
from tir_mlir.passes.lowering.version_guards import COPY

# Fewer iterations than this make too short a vector loop to be worth moving a loop for.
MIN_VECTOR_TRIPS = 8
# Accumulator elements of one reduction step enumerated at most (`_Sweep.overflows`); more
# overflow an L1 set anyway.
MAX_SWEEP_POINTS = 1 << 16
# (COPY: version-guards' id of a loop copied into the two versions of a guarded tile; a
# versioned nest's loops are as plain as those of a nest with no guard.)
PLAIN_LOOP_ATTRS = {
    "lowerBoundMap",
    "upperBoundMap",
    "step",
    "operandSegmentSizes",
    "tir.kind",
    "tir.name",
    COPY,
}
# The loop header attributes that move with a range when loops are interchanged.
RANGE_ATTRS = ("lowerBoundMap", "upperBoundMap", "tir.name")
ACCESSES = {"memref.load": (0, 1), "memref.store": (1, 2)}  # memref operand, first index
# The element stride a stride over a symbolic size counts as (Access).
SIZE_STRIDE = 1 << 20
PURE_PREFIXES = ("arith.", "math.")


class LoopInterchange:
    name = "loop-interchange"

    def __init__(
        self,
        line_bytes: int = 64,
        accumulator_elems=None,
        chains=None,
        vector_bits=0,
        l1=None,
        registers: int = 32,
    ):
        self.line_bytes = line_bytes
        # (sets, ways) of the L1 data cache (None: no reduction loop moves for its sweep)
        self.l1 = l1
        self.registers = registers  # vector registers (`_Sweep.carried`)
        self.vector_bits = vector_bits  # the widest vector register (0: unknown)
        # value bits -> the independent chains that keep the add units busy (None: no loop
        # is split for its chains)
        self.chains = chains
        # element bits -> the elements a split parallel loop's serial part spans (None: such
        # loops are not split)
        self.accumulator_elems = accumulator_elems

    @classmethod
    def for_target(cls, target):
        model = cpu_model(target)

        def accumulator_elems(bits: int) -> int:
            # (registers auto-vectorize carries: a wider strip stays a scalar loop)
            registers = min(model.fma_chains(model.vector_bits), CARRIED_REGISTERS)
            return model.vector_lanes(bits) * registers

        return cls(
            model.line_bytes,
            accumulator_elems,
            model.fma_chains,
            model.vector_bits,
            (model.l1d_sets, model.l1d_ways),
            model.vector_registers,
        )

    def __call__(self, module: ir.Module):
        for f in functions(module):
            noalias = noalias_args(f)
            moved = []  # loops of an interchanged nest are not looked at again
            for op in reversed([o for o in walk(f) if o.name == "affine.for"]):
                nest = _nest(op, noalias) or self._split_parallel(op, noalias, moved)
                if not (
                    nest is not None
                    and _free(nest, moved)
                    and nest.legal()
                    and nest.profitable(self.line_bytes)
                ):
                    nest = self._jam_rows(op, noalias, moved)
                if nest is not None and _free(nest, moved) and nest.legal():
                    nest.interchange()
                    jam = self._jam_around(nest, noalias, moved)
                    moved.extend(nest.loops + (jam.loops if jam is not None else []))
                else:
                    moved.extend(
                        self._sweep_inside(op, noalias, moved)
                        or self._rows_outside_registers(op, noalias, moved)
                    )

    def _split_parallel(self, j, noalias, moved):
        """The nest of the serial part of parallel loop `j` split in two, when the nest `j`
        heads would be interchanged were `j` serial (else None, `j` unchanged).

        A parallel loop over columns around a reduction down them (a column sum: each
        iteration walks a column, a new cache line and page per step) cannot move inside
        the reduction: its iterations are what the threads share. Split, each thread runs
        strips of columns whose serial loop moves inside: it streams along rows, a vector
        accumulator per strip, as many registers as keep the add units busy."""
        if self.accumulator_elems is None or not plain_loop(j, kinds=("parallel",)):
            return None
        nest = _nest(j, noalias, kinds=("parallel",))
        if (
            nest is None
            or not _free(nest, moved)
            or not nest.legal()
            or not nest.profitable(self.line_bytes)
        ):
            return None
        stores = [a for a in nest.accesses if a.store]
        span = max(abs(a.stride(0) or 1) for a in stores)
        elems = self.accumulator_elems(8 * max(a.elem_bytes for a in stores))
        least = 2 if nest.tail is not None else MIN_VECTOR_TRIPS
        width = split_width(constant_extent(Loop(j)), max(1, elems // span), least)
        if width is None:
            return None
        return _nest(split_loop(Loop(j), width), noalias)

    def _jam_rows(self, j, noalias, moved):
        """The nest of the inner part of loop `j` split in two, when the band `j` heads walks
        rows and updates elements that do not move with the band (else None, `j` unchanged).

        Such a band is one chain of dependent adds per iteration of `j` (a row sum), bound by
        the add's latency; floats are not reassociated, so the chain stays. Split, the inner
        part moves inside the band: its iterations' chains run side by side, as many as keep
        the add units busy (`fma_chains`), each in the order it had. A band ending in a tail
        (a vectorized loop, or a plain innermost loop the store steps along) is one chain of
        vector adds per iteration of `j` (a matmul's strip of a row): split to as many strips
        as keep the units busy over the tail's registers, the inner part moves inside the band
        unrolled, above the tail, and its floordivs and mods fold (`_fold`) so that later
        stages carry the strips' accumulators in registers."""
        if self.chains is None or not plain_loop(j, kinds=("serial", "parallel")):
            return None
        leaf_tail = False
        nest = _nest(j, noalias, kinds=("serial", "parallel"))
        if nest is None or (nest.tail is None and not nest.legal()):
            leaf_tail = True
            nest = _nest(j, noalias, kinds=("serial", "parallel"), leaf_tail=True)
        divisors = []
        if nest is not None and nest.tail is not None:
            # (j's rows and columns must stay linear in the split's inner part: `_fold`)
            divisors = _divisors(nest)
            if divisors is None:
                return None
            nest.rows = nest.row_loops()
            nest.strip = math.gcd(constant_extent(Loop(j)), *divisors)
        if (
            nest is None
            or not _free(nest, moved)
            or not nest.legal()
            or not nest.latency_bound(self.line_bytes)
        ):
            return None
        stores = [a for a in nest.accesses if a.store]
        integer = not all(isinstance(a.element_type, ir.FloatType) for a in stores)
        if integer and not nest.shares_gather():
            return None  # (LLVM reassociates an integer chain itself, into vector lanes)
        bits = 8 * max(a.elem_bytes for a in stores)
        extent = constant_extent(Loop(j))
        tail = nest.tail is not None
        if tail:
            rows = math.prod(_extent(Loop(o)) for o in nest.loops[len(nest.loops) - nest.rows :])
            chains = self._tail_chains(bits * _extent(Loop(nest.tail))) // rows
            width = split_width(extent, chains, 2, nest.strip)
        else:
            width = split_width(extent, self.chains(bits), 2)
        if width is None:
            return None
        rows = nest.rows
        nest = _nest(split_loop(Loop(j), width, divisions=tail), noalias, leaf_tail=leaf_tail)
        if nest is not None:
            nest.unroll_j = tail or integer
            nest.rows = rows
        return nest

    def _jam_around(self, nest, noalias, moved):
        """The nest of the loop around `nest`, split and jammed as `_jam_rows` does, once
        `nest`'s j has moved inside its band (else None, nothing changed).

        A short column loop under the rows (`for i: for j in 4: for k`) moves inside `k` and
        ends the band as its tail: each row is then one chain of vector adds down the whole
        reduction, which the row loop around it could split into chains side by side were
        its band not the one just moved."""
        if nest.unroll_j:
            return None
        parent = nest.loops[0].parent
        if parent is None or parent.name != "affine.for":
            return None
        jam = self._jam_rows(parent.opview, noalias, moved)
        if jam is None or not _free(jam, moved) or not jam.legal():
            return None
        jam.interchange()
        return jam

    def _sweep_inside(self, r, noalias, moved) -> list:
        """The loops of the nest loop `r` heads, moved inside its band above the tail, when
        the accumulators one step of `r` sweeps overflow an L1 set (`_Sweep`); then its rows,
        now around `r`, are split as `_jam_rows` splits them. ([]: nothing moved.)

        A matmul tile whose reduction loop runs outside its rows (`for k: for i: for j`)
        loads and stores every accumulator at each `k`: from L1 while the tile fits, but rows
        a power of two apart share a few sets (a 64 x 64 f32 tile of a 512-wide C: 256 lines
        in 8 sets of 12 ways), and then every step reads the tile from L2. Moved inside the
        rows, each row's accumulators stay in registers over `r`. A tile `scalar-replace`
        carries in registers whole (`_Sweep.carried`) is not swept through memory and stays,
        as does one whose tail's lanes are not adjacent elements (rows of a column: each row's
        accumulators would be lanes of a gather and a scatter)."""
        if self.l1 is None or not plain_loop(r):
            return []
        nest = _nest(r, noalias, leaf_tail=True)
        if nest is None or not _free(nest, moved):
            return []
        sweep = _Sweep(nest)
        sets, ways = self.l1
        if (
            not sweep.legal()
            or not sweep.adjacent_lanes()
            or sweep.carried(self.vector_bits, self.registers)
            or not sweep.overflows(sets, ways, self.line_bytes)
        ):
            return []
        sweep.interchange()
        jam = self._jam_rows(sweep.loops[0], noalias, moved)
        if jam is None:
            return sweep.loops
        jam.interchange()
        return sweep.loops + jam.loops

    def _rows_outside_registers(self, r, noalias, moved) -> list:
        """The band's outer rows loop split, its outer part moved outside reduction loop `r`,
        when the tile of accumulators `r` updates takes more registers than `scalar-replace`
        carries whole (the target's less FREE_REGISTERS) and a strip of the rows fits. ([]:
        nothing moved.)

        An 8 x 64 f32 tile under `k` (`for k: for i in T.unroll(8): for l in
        T.vectorized(64)`) is 32 zmm accumulators, plus B's 4 and a broadcast: `scalar-replace`
        carries 6 rows, LLVM promotes the other 2 anyway, spills 7 registers at every step and
        shuffles the rest through ~40 register moves. Split `for i_o in 2: for k: for i in
        T.unroll(4)`, each strip's 16 accumulators stay in registers, and B's k x 64 strip is
        read once a strip (benchmarks/README.md, "session 17, cache_write tiles").
        Each element still sees its updates in the order it had (`_Sweep.legal`)."""
        if not self.vector_bits or not plain_loop(r):
            return []
        nest = _nest(r, noalias, leaf_tail=True, band_kinds=("serial", "unroll"))
        if nest is None or not _free(nest, moved) or len(nest.loops) < 2 or nest.prologue:
            return []
        # (`r` the inner part of a split reduction, under its guard when the split does not
        # divide or a loop of one iteration: the tile's loads and stores around it run at every
        # step of the outer part, and strips outside `r` ran up to 2.8x slower)
        parent = next((a for a in ancestors(r) if not _passes_through(a)), None)
        if parent is not None and parent.name == "affine.for" and plain_loop(parent.opview):
            leaves = [loop_iv(parent.opview)]
            stores = [Access(a.op, leaves, noalias) for a in nest.accesses if a.store]
            if not any(s.depends_on(0) for s in stores):
                return []
        sweep = _Sweep(nest)
        if not sweep.legal() or not sweep.adjacent_lanes():
            return []
        rows = Loop(nest.loops[1])
        copies = math.prod(_extent(Loop(op)) for op in nest.loops[1:])
        per_row = (copies // _extent(rows)) * sweep.copy_registers(self.vector_bits)
        budget = self.registers - FREE_REGISTERS
        if copies > MAX_UNROLLED or _extent(rows) * per_row <= budget:
            return []
        width = split_width(_extent(rows), budget // per_row, 2)
        if width is None:
            return []
        kind = rows.kind
        inner = Loop(split_loop(rows, width))
        inner.set(kind=kind)
        rows.set(kind="serial")
        pair = [r, rows.op]
        ivs = [loop_iv(o) for o in pair]
        rotate_headers(pair, -1)
        rotate_ivs(ivs, -1, r)
        return pair + [inner.op]

    def _tail_chains(self, bits: int) -> int:
        """The iterations of j to run side by side over a tail of `bits`: its registers are
        chains already, so the chains that keep the FMA units busy over as many."""
        assert self.chains is not None
        widest = self.vector_bits or bits
        registers = -(-bits // widest)
        return self.chains(min(bits, widest)) // registers


def streams(j, noalias, line_bytes: int) -> bool:
    """Whether serial loop `j` heads a nest the stage would interchange (its first rule), or
    one whose band LLVM unrolls whole (`UNROLLED_BAND_OPS`) with `j` then a vector loop
    around it (`_vectorizable`): either way `j` ends up walking along rows."""
    nest = _nest(j, noalias)
    if nest is None or not nest.legal():
        return False
    return nest.profitable(line_bytes) or (nest.small() and nest._vectorizable(0))


def _passes_through(op) -> bool:
    """Whether `op`, around a loop, leaves it the body of the loop around `op`: a guard (an
    `affine.if`) or a loop of one iteration (`scalar-replace` inlines it)."""
    if op.name == "affine.if":
        return True
    return op.name == "affine.for" and _extent(Loop(op.opview)) == 1


def _free(nest, moved) -> bool:
    """Whether no loop of `nest` belongs to a nest already interchanged."""
    return not any(l == m for l in nest.loops for m in moved)


def plain_loop(op, sizes: bool = False, kinds=("serial",)) -> bool:
    """A loop of `kinds` (serial) of constant bounds (`sizes`: or bounds over symbolic sizes,
    `range(n)`), step 1, no annotation, more than one iteration."""
    if (
        op.name != "affine.for"
        or (len(op.operands) and not (sizes and _over_sizes(op)))
        or set(op.attributes) - PLAIN_LOOP_ATTRS
    ):
        return False
    loop = Loop(op)
    return loop.kind in kinds and loop.step == 1 and _extent(loop) > 1


def _over_sizes(op) -> bool:
    lmap = ir.AffineMapAttr(op.attributes["lowerBoundMap"]).value
    umap = ir.AffineMapAttr(op.attributes["upperBoundMap"]).value
    return (
        not lmap.n_dims
        and not umap.n_dims
        and len(umap.results) == 1
        and isinstance(lmap.results[0].maybe_downcast(), ir.AffineConstantExpr)
    )


def _extent(loop: Loop) -> int:
    """The trip count; a loop over a size counts as long (it is the size of a tensor)."""
    extent = loop.extent
    return extent if isinstance(extent, int) else SIZE_STRIDE


def _body(op) -> list:
    return body_ops(op.regions[0].blocks[0])


def pure(op) -> bool:
    return not len(op.regions) and op.name.startswith(PURE_PREFIXES)


def _index_or_pure(op) -> bool:
    """A pure op or an `affine.apply` (a block's binding of its iter vars: any scheduled
    block's indices go through one)."""
    return pure(op) or op.name == "affine.apply"


def _nest(j, noalias, kinds=("serial",), leaf_tail=False, band_kinds=("serial",)):
    """The loop nest `j` (of `kinds`) heads, when it has the shape the stage rewrites; else
    None. With `leaf_tail`, a plain innermost loop under the band is its tail, as a vectorized
    one is (`auto-vectorize` vectorizes it later). The band's loops are of `band_kinds`."""
    if not plain_loop(j, sizes=True, kinds=kinds):  # (j may run over a size; the band may not)
        return None
    ops = _body(j)
    fors = [k for k, o in enumerate(ops) if o.name == "affine.for"]
    if not fors:
        return None
    prologue, band, epilogue = ops[: fors[-1]], [ops[fors[-1]]], ops[fors[-1] + 1 :]
    if not all(_index_or_pure(o) or o.name == "memref.store" or _init_loop(o) for o in prologue):
        return None
    if not all(_index_or_pure(o) or o.name in ACCESSES for o in epilogue):
        return None
    tail = None
    inits = []
    while True:
        if not plain_loop(band[-1], kinds=band_kinds):
            if len(band) < 2 or not is_vectorized_leaf(band[-1]):
                return None
            tail = band.pop()
            body = leaf_ops(tail)
            break
        body = _body(band[-1])
        if len(body) == 1 and body[0].name == "affine.for":
            band.append(body[0])
            continue
        if leaf_tail and len(band) >= 2 and not len(band[-1].operands):
            tail = band.pop()
            body = leaf_ops(tail)
            if body is None:
                return None
            break
        inits = _first_iteration_inits(body, band)
        body = [o for o in body if not any(o == i for i in inits)]
        if all(_index_or_pure(o) or o.name in ACCESSES or _guarded_load(o) for o in body):
            break
        return None
    try:
        return _Nest(j, prologue, band, body, noalias, tail, inits, epilogue)
    except NotAffine:
        return None


def _guarded_load(op) -> bool:
    """Whether `op` is an `scf.if` that yields values computed by loads and pure ops only (an
    inlined padding's `if 1 <= y + ry < 29 ...: A[...] else 0`): a read, like a load."""
    return (
        op.name == "scf.if"
        and len(op.results) > 0
        and all(
            _index_or_pure(o) or o.name == "memref.load" or o.name == "scf.yield"
            for r in op.regions
            for b in r.blocks
            for o in body_ops(b)
        )
    )


def _and_guarded(ops) -> list:
    """`ops` with the ops inside their guarded loads (`_guarded_load`) after each."""
    out = []
    for o in ops:
        out.append(o)
        if o.name == "scf.if":
            out += [x for r in o.regions for b in r.blocks for x in body_ops(b)]
    return out


def _first_iteration_inits(body, band) -> list:
    """The `affine.if`s at the head of the band's innermost body that hold only stores and
    pure ops, of values and at addresses computed in them or outside the band (or by
    `affine.apply`s of such values), and hold only at the band's first iteration: T.init left in the reduction. Each
    constraint is `sum(c * iv) == 0`, its coefficients of one sign over IVs of band loops
    from 0, and every band loop is in one: it holds when all of them are 0. Hoisted before
    the band, it stores as often and before the same updates."""
    inits = []
    ivs = [loop_iv(o) for o in band]
    if any(constant_min(Loop(o)) != 0 for o in band):
        return []
    for o in body:
        if o.name != "affine.if":
            if _index_or_pure(o):
                continue
            break
        if len(o.results) or _has_else(o) or not _first_iteration(o, ivs):
            break
        ops = body_ops(o.regions[0].blocks[0])
        if not any(s.name == "memref.store" for s in ops) or not all(
            (s.name == "memref.store" or pure(s))
            and all(_hoistable(v, band[0], o) for v in s.operands)
            for s in ops
        ):
            break
        inits.append(o)
    return inits


def _has_else(op) -> bool:
    return len(op.regions) > 1 and any(body_ops(b) for b in op.regions[1].blocks)


def _first_iteration(op, ivs) -> bool:
    iset = integer_set(op.attributes["condition"])
    operands = list(op.operands)
    covered = set()
    for c in iset.constraints:
        form = linear(c.expr)
        if not c.is_eq or form is None or form.const != 0 or not form.terms:
            return False
        if len({k > 0 for k in form.terms.values()}) != 1:
            return False
        for atom in form.terms:
            if not isinstance(atom, int) or atom >= iset.n_dims:
                return False
            k = next((n for n, iv in enumerate(ivs) if iv == operands[atom]), None)
            if k is None:
                return False
            covered.add(k)
    return len(covered) == len(ivs)


def _hoistable(value, band, init) -> bool:
    """Whether `value` is defined in `init`, outside loop `band`, or inside it by a constant
    or an `affine.apply` of values defined outside it."""
    owner = value.owner
    if defined_outside(value, band) or not defined_outside(value, init):
        return True
    if owner.name == "arith.constant":
        return True
    return owner.name == "affine.apply" and all(
        defined_outside(v, band) for v in _read_operands(owner)
    )


def _read_operands(apply) -> list:
    """The operands of `affine.apply` that its map reads: a scheduled block's binding lists
    the IV of every loop around it, the band's too, where it reads only the outer ones."""
    amap = ir.AffineMapAttr(apply.attributes["map"]).value
    read = set().union(*(dims_of(e) for e in amap.results))
    return [v for k, v in enumerate(apply.operands) if k >= amap.n_dims or k in read]


def _position(leaves, value) -> int:
    """The leaf `value` is (-1: none, an index the access does not read)."""
    return next((k for k, v in enumerate(leaves) if v == value), -1)


def _init_loop(op) -> bool:
    """A loop of constant bounds, step 1, that only stores (a decomposed T.init's loop), or
    holds one such loop (the T.init of a tile's rows and lanes)."""
    if op.name != "affine.for" or len(op.operands) or Loop(op).step != 1:
        return False
    return _init_leaf(op) is not None


def _init_leaf(op):
    """(the loops, outermost first; the innermost's ops) of an init loop nest, or None."""
    loops = [op]
    while True:
        body = _body(loops[-1])
        inner = [o for o in body if o.name == "affine.for"]
        if len(inner) == 1 and all(_index_or_pure(o) for o in body if o != inner[0]):
            if len(inner[0].operands) or Loop(inner[0]).step != 1:
                return None
            loops.append(inner[0])
            continue
        ops = leaf_ops(loops[-1])
        if ops is None or any(o.name == "memref.load" for o in ops):
            return None
        return loops, ops


def is_vectorized_leaf(op) -> bool:
    """Whether `op` is a `T.vectorized` loop of constant bounds, step 1, holding no loop: its
    body holds accesses, pure ops and `affine.if`s of them (see `leaf_ops`)."""
    loop = Loop(op)
    if loop.kind != "vectorized" or len(op.operands) or loop.step != 1 or _extent(loop) < 2:
        return False
    return leaf_ops(op) is not None


def leaf_ops(op) -> list | None:
    """The ops of a loop's body, those inside its `affine.if`s included, when all of them are
    accesses and pure ops (None: it holds another op, such as a loop or a call)."""
    out, todo = [], [op.regions[0].blocks[0]]
    while todo:
        for o in body_ops(todo.pop()):
            if o.name == "affine.if":
                todo.extend(b for r in o.regions for b in r.blocks)
            elif _index_or_pure(o) or o.name in ACCESSES:
                out.append(o)
            else:
                return None
    return out


class _Nest:
    def __init__(self, j, prologue, band, body, noalias, tail=None, inits=(), epilogue=()):
        self.j, self.prologue, self.body, self.tail = j, prologue, body, tail
        self.epilogue = list(epilogue)  # j's ops after the band: loads, stores, pure ops
        self.unroll_j = False  # j, moved inside the band, is unrolled (`_jam_rows`)
        # The band's last loops that walk the rows of a register tile above the tail: the
        # stores move with them (`_jam_rows`; 0: none).
        self.rows = 0
        # j's strides are those within a strip of it (`Access.stride`): `_jam_rows` checks a
        # nest before splitting j for `_fold`.
        self.strip = 0
        self.inits = list(inits)  # the band's first-iteration `affine.if`s
        self.loops = [j] + band
        self.ivs = [loop_iv(o) for o in self.loops]
        # The tail's IV is the leaf after the nest's (it does not move).
        tail_iv = [loop_iv(tail)] if tail is not None else []
        leaves = list(self.ivs) + tail_iv
        # A prologue loop's stores: (Access, the leaf of the loop's IV, its trip count).
        self.init_stores = []
        for o in prologue:
            if o.name == "affine.for":
                loops, ops = _init_leaf(o) or ([o], [])
                trips = [_extent(Loop(l)) for l in loops]
                for store in ops:
                    if store.name == "memref.store":
                        a = Access(store, leaves, noalias)  # (adds the loops' IVs it reads)
                        at = [_position(leaves, loop_iv(l)) for l in loops]
                        self.init_stores.append((a, at, trips))
        init_ops = [s for i in self.inits for s in body_ops(i.regions[0].blocks[0])]
        body_leaves = _and_guarded(body)
        accesses = [o for o in prologue + init_ops + body_leaves + epilogue if o.name in ACCESSES]
        self.accesses = [Access(o, leaves, noalias) for o in accesses]
        first = sum(o.name in ACCESSES for o in prologue + init_ops)
        count = sum(o.name in ACCESSES for o in body_leaves)
        self.body_accesses = self.accesses[first : first + count]

    def legal(self) -> bool:
        for s in self.accesses:
            if not s.store:
                continue
            if (
                not s.row_major
                or any(s.depends_on(p) for p in range(1, len(self.ivs) - self.rows))
                or not s.stride(0, bool(self.strip))
                or (self.tail is not None and not self._apart(s))
            ):
                return False
            if any(
                a.may_alias(s) and (a.memref != s.memref or a.index != s.index)
                for a in self.accesses
            ):
                return False
        return all(self._inits_lanes(*init) for init in self.init_stores)

    def _inits_lanes(self, init, at: list, trips: list) -> bool:
        """Whether a prologue loop's store writes, in each iteration of j, the elements the
        body's store writes (its loops the rows and the tail, renamed), and nothing else
        touches them."""
        if self.tail is None:
            return False
        # The leaves the init's loops stand for: the rows' (the band's last), the tail's.
        tail = len(self.ivs)
        targets = list(range(tail - self.rows, tail)) + [tail]
        extents = [_extent(Loop(o)) for o in self.loops[tail - self.rows :]]
        extents.append(_extent(Loop(self.tail)))
        if trips != extents:
            return False
        rename = dict(zip(at, targets))
        stores = [a for a in self.body_accesses if a.store and a.memref == init.memref]
        if not stores or any(
            a.may_alias(init) and a.memref != init.memref for a in self.body_accesses
        ):
            return False
        forms = [linear(e, division=_atom) for e in init.index]
        if any(f is None for f in forms):
            return False
        renamed = [
            ({rename.get(k, k): c for k, c in f.terms.items()}, f.const)
            for f in forms
            if f is not None
        ]
        for a in stores:
            want = [linear(e, division=_atom) for e in a.index]
            if any(w is None for w in want):
                return False
            if renamed != [(dict(w.terms), w.const) for w in want if w is not None]:
                return False
        return True

    def _apart(self, s) -> bool:
        """Whether the elements store `s` writes in one iteration of j (the tail's span, over
        the rows) are apart from those of any other iteration: taken by their strides, each
        larger than the span of the smaller ones."""
        tail = len(self.ivs)
        leaves = [0] + list(range(tail - self.rows, tail + 1))
        loops = [self.j] + self.loops[tail - self.rows :] + [self.tail]
        steps = []
        for p, op in zip(leaves, loops):
            strip = bool(self.strip) and p == 0
            step = s.stride(p, strip)
            if step is None or (p != tail and not step):
                return False
            steps.append((abs(step), self.strip if strip else _extent(Loop(op))))
        span = 0
        for step, trips in sorted(steps):
            if step and step <= span:
                return False
            span += step * (trips - 1)
        return True

    def row_loops(self) -> int:
        """The band's last loops (not all of them) whose IVs every store reads: a register
        tile's rows above the tail, which may stay around it while j moves inside them."""
        stores = [a for a in self.accesses if a.store]
        tail = len(self.ivs)
        rows = 0
        while rows + 2 < tail and stores and all(a.depends_on(tail - 1 - rows) for a in stores):
            rows += 1
        return rows

    def small(self) -> bool:
        """Whether LLVM unrolls the band whole (`UNROLLED_BAND_OPS`)."""
        trips = math.prod(constant_extent(Loop(op)) for op in self.loops[1:])
        return trips * len(self.body) <= UNROLLED_BAND_OPS

    def profitable(self, line_bytes: int) -> bool:
        if self.small():
            return False
        inner = len(self.ivs) - 1
        if self.tail is not None:
            return self._streams(0, line_bytes) and not self._streams(inner, line_bytes)
        before = sum(a.lines(inner, line_bytes) for a in self.body_accesses)
        after = sum(a.lines(0, line_bytes) for a in self.body_accesses)
        if before == 0:
            return False
        return 2 * after <= before or (
            after <= 2 * before and self._vectorizable(0) and not self._vectorizable(inner)
        )

    def latency_bound(self, line_bytes: int) -> bool:
        """Whether the band is too large to unroll and its innermost loop walks rows: every
        body access steps by at most one element (a store by none: legal), or, without a
        tail, a load by at most a cache line, and by any amount one whose address j does not
        move (the chains share it once j is inside: a direct convolution's input, read
        across its channels under the output channels). With a tail, its lanes do: whole
        vectors or broadcasts (a gather's loads, not the adds, would bound it), wherever the
        band's steps go."""
        trips = math.prod(constant_extent(Loop(op)) for op in self.loops[1:])
        leaf = len(self.ivs) - (self.tail is None)
        return trips * len(self.body) > UNROLLED_BAND_OPS and all(
            self._steps_along(a, leaf, line_bytes) for a in self.body_accesses
        )

    def shares_gather(self) -> bool:
        """Whether the band (without a tail) reads a load across rows that j does not move:
        LLVM's vector lanes of one integer chain would gather it, an insert per element (B's
        column under a matmul's rows, `for i: for k: C[i, j] += A[i, k] * B[k, j]`), where
        chains side by side share each element loaded."""
        leaf = len(self.ivs) - 1
        return self.tail is None and any(
            not a.store and a.stride(leaf) not in (0, 1) and a.stride(0) == 0
            for a in self.body_accesses
        )

    def _steps_along(self, a, leaf: int, line_bytes: int) -> bool:
        """Whether access `a` keeps leaf `leaf`'s steps latency-bound (`latency_bound`)."""
        step = a.stride(leaf)
        if step in (0, 1):
            return True
        if step is None or self.tail is not None or a.store:
            return False
        return a.stride(0) == 0 or abs(step) * a.elem_bytes <= line_bytes

    def _streams(self, p: int, line_bytes: int) -> bool:
        """Whether, with the tail inside leaf `p`, every access steps along `p` to the element
        after the tail's span (a span of adjacent lanes), stays, or moves by at most a cache
        line. (A tail whose lanes are rows apart touches a line per lane at every step: the
        next span is no nearer than any other.)"""
        lanes = _extent(Loop(self.tail))
        for a in self.body_accesses:
            step, lane = a.stride(p), a.stride(len(self.ivs))
            if step is None or lane is None:
                return False
            follows = step == lane * lanes and abs(lane) <= 1
            if step != 0 and not follows and abs(step) * a.elem_bytes > line_bytes:
                return False
        return True

    def _vectorizable(self, p: int) -> bool:
        """Whether the body vectorizes along leaf `p` as the innermost loop: enough iterations,
        every store contiguous, every load contiguous or the same for all iterations (an
        accumulator the loop does not move is a chain: floats are not reassociated)."""
        return _extent(Loop(self.loops[p])) >= MIN_VECTOR_TRIPS and all(
            a.stride(p) in ((1,) if a.store else (0, 1)) for a in self.body_accesses
        )

    def interchange(self):
        j = self.j
        if self.epilogue:
            self._move_epilogue()
        # The inits' stores join the prologue (the indices they need copied out of the band:
        # used by nothing else, they go with the stores).
        hoisted = [_hoist(i, self.loops[1]) for i in self.inits]
        indices = [o for applies, _ in hoisted for o in applies]
        self.prologue.extend(o for _, stores in hoisted for o in stores)
        stores = [o for o in self.prologue if o.name in ("memref.store", "affine.for")]
        pure = [o for o in self.prologue if o.name not in ("memref.store", "affine.for")]
        if stores:
            copy = j.clone(ir.InsertionPoint(j))  # the prologues run first, in a copy
            _body(copy)[-1].erase()
            for o in stores + indices:
                o.erase()
        # The prologue's pure ops left in j are recomputed where the body uses them: at the
        # head of the innermost loop (a tail's `affine.if`s may use them before `self.body[0]`).
        first = _body(self.tail if self.tail is not None else self.loops[-1])[0]
        for o in pure:
            o.move_before(first)
        # The loops keep their places; their ranges rotate (the outermost takes the band's
        # first range, ..., the innermost j's) and the uses of their IVs follow.
        operands = [list(op.operands) for op in self.loops]
        rotate_headers(self.loops, -1)
        if operands[0]:  # j runs over a size: its bound operands move with it
            self.loops[0] = _with_operands(self.loops[0], [])
            self.loops[-1] = _with_operands(self.loops[-1], operands[0])
            j = self.loops[0]
        rotate_ivs(self.ivs, -1, j)
        if self.unroll_j:
            Loop(self.loops[-1]).set(kind="unroll")

    def _move_epilogue(self):
        """j's epilogue moved into a copy of j after it (with the pure ops of the prologue
        it may use): it then runs for every j after the band has run for all of them."""
        ops = _body(self.j)
        at = next(k for k, o in enumerate(ops) if o == self.loops[1])
        copy = self.j.clone(ir.InsertionPoint(self.j))
        copy.move_after(self.j)
        for k, o in reversed(list(enumerate(_body(copy)))):
            if k == at or (k < at and not _index_or_pure(o)):
                o.erase()
        for o in reversed(self.epilogue):
            o.erase()


class _Sweep(_Nest):
    """A nest whose loop `j` is a reduction loop of the band's elements, moved inside the band
    (above the tail) instead: every element sees its updates in the order it had."""

    def __init__(self, nest: _Nest):
        self.__dict__.update(nest.__dict__)

    def legal(self) -> bool:
        """Whether the nest is a band of elements updated at each step of `j`: nothing runs
        around the band in `j` but pure ops, each store's address does not move with `j` and
        differs at each step of the band and tail (`_injective`), and every other access to a
        written buffer is at that address."""
        if (
            self.tail is None
            or self.epilogue
            or self.inits
            or any(not _index_or_pure(o) for o in self.prologue)
        ):
            return False
        stores = [a for a in self.accesses if a.store]
        for s in stores:
            if not s.row_major or s.depends_on(0) or not self._injective(s):
                return False
            if any(
                a.may_alias(s) and (a.memref != s.memref or a.index != s.index)
                for a in self.accesses
            ):
                return False
        return bool(stores)

    def _leaves(self) -> list:
        """(leaf, trip count) of the band's loops and the tail."""
        loops = self.loops[1:] + [self.tail]
        return [(p, _extent(Loop(op))) for p, op in enumerate(loops, start=1)]

    def _injective(self, s) -> bool:
        """Whether store `s` writes another element at every iteration of the band and tail."""
        return injective(s, self._leaves())

    def _stores(self) -> list:
        """The stores of the nest, one per address (buffer and indices)."""
        out = []
        for a in self.accesses:
            if a.store and not any(a.memref == b.memref and a.index == b.index for b in out):
                out.append(a)
        return out

    def adjacent_lanes(self) -> bool:
        """Whether every store steps by one element along the tail."""
        tail = len(self.ivs)
        return all(a.stride(tail) == 1 for a in self._stores())

    def carried(self, vector_bits: int, registers: int) -> bool:
        """Whether `scalar-replace` carries the whole tile over `j`: it unrolls the band (at
        most its MAX_UNROLLED copies) when the accumulators, a tail's registers of
        `vector_bits` per copy, fill at most the `registers` of the target."""
        if not vector_bits:
            return False
        copies = math.prod(_extent(Loop(op)) for op in self.loops[1:])
        needed = copies * self.copy_registers(vector_bits)
        return copies <= MAX_UNROLLED and needed <= registers

    def copy_registers(self, vector_bits: int) -> int:
        """The registers of `vector_bits` one copy of the tail's accumulators takes."""
        tail = _extent(Loop(self.tail))
        return sum(-(-tail * 8 * a.elem_bytes // vector_bits) for a in self._stores())

    def overflows(self, sets: int, ways: int, line_bytes: int) -> bool:
        """Whether the lines the stores write over one step of `j` (the accumulators, each
        buffer taken to start at set 0) hold more lines of one set of the L1 than its ways. A
        buffer the function allocates (a cache_write tile) counts as `compact-buffers` leaves
        it, the tile alone and contiguous: it overflows only past the L1's size."""
        leaves = self._leaves()
        per_set: dict = {}
        for s in self._stores():
            buffer, _ = s.root
            if buffer is not None and not isinstance(buffer.owner, ir.Block):
                tile = math.prod(t for _, t in leaves) * s.elem_bytes
                if tile > sets * ways * line_bytes:
                    return True
                continue
            if math.prod(t for _, t in leaves) > MAX_SWEEP_POINTS:
                return True
            offsets = {0}
            for p, trips in leaves:
                step = (s.stride(p) or 0) * s.elem_bytes
                offsets = {x + step * v for x in offsets for v in range(trips)}
            for line in {x // line_bytes for x in offsets}:
                per_set[line % sets] = per_set.get(line % sets, 0) + 1
        return max(per_set.values(), default=0) > ways


def injective(s, leaves) -> bool:
    """Whether access `s` touches another element at every iteration of the loops `leaves`
    ((leaf, trip count) pairs): taken by their strides, each larger than the span of the smaller
    ones."""
    steps = []
    for p, trips in leaves:
        step = s.stride(p)
        if not step:
            return False
        steps.append((abs(step), trips))
    span = 0
    for step, trips in sorted(steps):
        if step <= span:
            return False
        span += step * (trips - 1)
    return True


def split_width(extent: int, want: int, least: int, of: int = 0) -> Optional[int]:
    """The trip count of the inner part of a loop of `extent` split for a nest: the largest
    divisor of `extent` (and of `of`, when given) up to `want` that leaves the outer part two
    iterations or more (None: none does, or it is under `least`)."""
    for width in range(min(want, extent // 2), 1, -1):
        if extent % width == 0 and (of or width) % width == 0:
            return width if width >= least else None
    return None


def rotate_headers(loops, shift: int) -> None:
    """The ranges (bound maps and names) of the loops of a nest move `shift` places along it,
    round: loop i's goes to loop (i + shift) mod n. The loops, their kinds and bodies stay."""
    headers = [{k: op.attributes[k] for k in RANGE_ATTRS if k in op.attributes} for op in loops]
    for i, h in enumerate(headers):
        op = loops[(i + shift) % len(loops)]
        for k in RANGE_ATTRS:
            if k in h:
                op.attributes[k] = h[k]
            elif k in op.attributes:
                del op.attributes[k]


def rotate_ivs(ivs, shift: int, outer) -> None:
    """The uses of IV i move to IV (i + shift) mod n: they follow the ranges `rotate_headers`
    moved (`outer`: the outermost loop, a place for the temporaries)."""
    with ir.InsertionPoint(outer):
        tmps = [index_const(0, outer.location) for _ in ivs]
    for iv, tmp in zip(ivs, tmps):
        iv.replace_all_uses_with(tmp)
    for i, tmp in enumerate(tmps):
        tmp.replace_all_uses_with(ivs[(i + shift) % len(ivs)])
        tmp.owner.erase()


def split_loop(j: Loop, width: int, divisions: bool = False):
    """Loop `j` of constant bounds as a loop of its kind of `extent / width` iterations around
    a serial loop of `width` (returned), the body inside it:

        for j in T.parallel(lo, lo + n):        for j_o in T.parallel(n // width):
            BODY                          =>        for j in range(width):
                                                        BODY[j := lo + j_o * width + j]

    With `divisions`, an `affine.apply` of j reads j_o and j itself, a floordiv or mod of j
    by a multiple of `width` folded (`_fold_split`)."""
    op, n, lo = j.op, constant_extent(j), constant_min(j)
    ops = _body(op)
    uses = [(u.owner, u.operand_number) for u in j.iv.uses]
    with ir.InsertionPoint(ops[0]):
        inner = Loop.build(j.name, width, loc=op.location)
    for o in ops:
        o.move_before(list(inner.body.operations)[-1].operation)
    with ir.InsertionPoint(ops[0]):
        shift = ir.AffineMap.get(
            2, 0, [ir.AffineExpr.get_dim(0) * width + ir.AffineExpr.get_dim(1) + lo]
        )
        index = affine.AffineApplyOp(shift, [j.iv, inner.iv], loc=op.location).result
    for owner, k in uses:
        owner.operands[k] = index
    if divisions:
        applies = []
        for o, _ in uses:
            if o.name == "affine.apply" and not any(o == a for a in applies):
                applies.append(o)
        for a in applies:
            _fold_split(a, index, width)
    for key, value in (("lowerBoundMap", 0), ("upperBoundMap", n // width)):
        op.attributes[key] = ir.AffineMapAttr.get(ir.AffineMap.get_constant(value))
    j.set(name=j.name + "_o")
    return inner.op


def _fold_split(apply, index, width: int) -> None:
    """`affine.apply` `apply` of `index` (`j_o * width + j + lo`, `split_loop`'s) rewritten over
    j_o and j, a floordiv or mod of `width * X + j` by a multiple of `width` folded (`_fold`):
    a fused loop's row and column (`f floordiv 32`, `(f mod 32) * 16`) step with j alone, as
    linear forms of j at addresses later stages tell apart."""
    amap = ir.AffineMapAttr(apply.attributes["map"]).value
    if amap.n_symbols:
        return
    j_o, j = list(index.owner.operands)
    split = ir.AffineMapAttr(index.owner.attributes["map"]).value.results[0]
    n = amap.n_dims
    operands = list(apply.operands)
    dims = []
    for k, v in enumerate(operands):
        if v == index:
            at = ir.AffineMap.get(n + 1, 0, [ir.AffineExpr.get_dim(k), ir.AffineExpr.get_dim(n)])
            dims.append(split.compose(at))
            operands[k] = j_o
        else:
            dims.append(ir.AffineExpr.get_dim(k))
    rename = ir.AffineMap.get(n + 1, 0, dims)
    results = [simplify(_fold(e.compose(rename), n, width), n + 1) for e in amap.results]
    new = affine.AffineApplyOp(
        ir.AffineMap.get(n + 1, 0, results),
        operands + [j],
        loc=apply.location,
        ip=ir.InsertionPoint(apply),
    )
    apply.result.replace_all_uses_with(new.result)
    apply.erase()


def _divisors(nest) -> Optional[list]:
    """The numbers a split of j (leaf 0) must divide for `_fold` to fold the floordivs and
    mods of j in the nest's accesses (their divisors, the other terms of their dividends),
    when each divides j itself plus terms of other leaves; else None."""
    out = []

    def visit(e) -> bool:
        e = e.maybe_downcast()
        if not isinstance(e, ir.AffineBinaryExpr):
            return True
        if 0 in dims_of(e) and isinstance(e, (ir.AffineFloorDivExpr, ir.AffineModExpr)):
            form, c = linear(e.lhs), e.rhs.maybe_downcast()
            if form is None or form.terms.get(0) != 1 or not isinstance(c, ir.AffineConstantExpr):
                return False
            # (width must divide these: `_fold`'s `width * X`)
            out.extend([c.value, form.const] + [k for a, k in form.terms.items() if a != 0])
        return visit(e.lhs) and visit(e.rhs)

    return out if all(visit(e) for a in nest.accesses for e in a.index) else None


def _fold(e: ir.AffineExpr, j: int, width: int) -> ir.AffineExpr:
    """`e` with a floordiv or mod of `width * X + dj` (0 <= dj < width) by a multiple of
    `width` folded: `(width * X) floordiv c`, `(width * X) mod c + dj`."""
    e = e.maybe_downcast()
    if not isinstance(e, ir.AffineBinaryExpr):
        return e
    lhs, rhs = _fold(e.lhs, j, width), _fold(e.rhs, j, width)
    c = rhs.maybe_downcast()
    if isinstance(e, (ir.AffineFloorDivExpr, ir.AffineModExpr)) and isinstance(
        c, ir.AffineConstantExpr
    ):
        form = linear(lhs)
        if (
            c.value % width == 0
            and form is not None
            and form.terms.get(j) == 1
            and form.const % width == 0
            and all(k % width == 0 for a, k in form.terms.items() if a != j)
        ):
            rest = lhs - ir.AffineExpr.get_dim(j)
            if isinstance(e, ir.AffineFloorDivExpr):
                return ir.AffineFloorDivExpr.get(rest, c)
            return ir.AffineModExpr.get(rest, c) + ir.AffineExpr.get_dim(j)
    return _BINARY[type(e)](lhs, rhs)


_BINARY = {
    ir.AffineAddExpr: ir.AffineAddExpr.get,
    ir.AffineMulExpr: ir.AffineMulExpr.get,
    ir.AffineFloorDivExpr: ir.AffineFloorDivExpr.get,
    ir.AffineCeilDivExpr: ir.AffineCeilDivExpr.get,
    ir.AffineModExpr: ir.AffineModExpr.get,
}


def _hoist(init, band) -> tuple:
    """The ops of first-iteration `affine.if` `init` moved before `band`, with copies of the
    constants and `affine.apply`s inside the band they use; the `affine.if` erased: (the ops that are not
    stores, the stores)."""
    applies, stores = [], []
    for op in body_ops(init.regions[0].blocks[0]):
        for k, v in enumerate(op.operands):
            if defined_outside(v, init) and not defined_outside(v, band):
                ip = ir.InsertionPoint(band)
                if v.owner.name == "arith.constant":
                    copy = v.owner.clone(ip)
                else:
                    copy = _apply_of_read(v.owner, ip)
                op.operands[k] = copy.result
                applies.append(copy)
        op.move_before(band)
        (stores if op.name == "memref.store" else applies).append(op)
    init.erase()
    return applies, stores


def _apply_of_read(apply, ip):
    """A copy of `affine.apply` at `ip` over only the operands its map reads (those it does
    not read may be IVs of loops that `ip` is outside)."""
    amap = ir.AffineMapAttr(apply.attributes["map"]).value
    read = sorted(set().union(*(dims_of(e) for e in amap.results)))
    dims = [
        ir.AffineExpr.get_dim(read.index(k)) if k in read else ir.AffineExpr.get_constant(0)
        for k in range(amap.n_dims)
    ]
    syms = [ir.AffineExpr.get_symbol(k) for k in range(amap.n_symbols)]
    rename = ir.AffineMap.get(len(read), amap.n_symbols, dims + syms)
    new_map = ir.AffineMap.get(len(read), amap.n_symbols, [e.compose(rename) for e in amap.results])
    operands = list(apply.operands)
    kept = [operands[k] for k in read] + operands[amap.n_dims :]
    return affine.AffineApplyOp(new_map, kept, loc=apply.location, ip=ip)


def _with_operands(op, operands):
    """The `affine.for` rebuilt with new bound operands (its maps' symbols), its body moved."""
    attrs = {k: op.attributes[k] for k in op.attributes}
    lmap = ir.AffineMapAttr(attrs["lowerBoundMap"]).value
    n_lb = lmap.n_dims + lmap.n_symbols
    attrs["operandSegmentSizes"] = ir.DenseI32ArrayAttr.get([n_lb, len(operands) - n_lb, 0])
    new = ir.Operation.create(
        "affine.for",
        operands=operands,
        attributes=attrs,
        regions=1,
        loc=op.location,
        ip=ir.InsertionPoint(op),
    )
    op.regions[0].blocks[0].append_to(new.regions[0])
    op.erase()
    return new


class Access:
    """A load or store of the nest: its memref, its index expressions over `leaves` (the nest's
    IVs first, then values defined outside it) and its buffer's root."""

    def __init__(self, op, leaves, noalias):
        self.op = op
        self.store = op.name == "memref.store"
        m, first = ACCESSES[op.name]
        self.memref = op.operands[m]
        exprs = [to_affine(v, leaves) for v in list(op.operands)[first:]]
        self.index = [simplify(e, len(leaves)) for e in exprs]
        self.root = root(self.memref, noalias)[0]
        t = ir.MemRefType(self.memref.type)
        elem = self.element_type = t.element_type
        self.elem_bytes = (
            max(1, elem.width // 8) if isinstance(elem, (ir.IntegerType, ir.FloatType)) else 4
        )
        strides, _ = t.get_strides_and_offset()
        # A buffer of symbolic shape (`memref<?x?xf32>`) is row-major when its layout is the
        # identity; a stride over a size (`n * 64`, MLIR's dynamic marker) is at least a row,
        # counted as SIZE_STRIDE elements (a cache line or more per step).
        identity = isinstance(t.layout, ir.AffineMapAttr) and ir.AffineMapAttr(
            t.layout
        ).value == ir.AffineMap.get_identity(t.rank)
        static = all(abs(s) < 2**62 for s in strides)
        self.strides = [s if abs(s) < 2**62 else SIZE_STRIDE for s in strides]
        self.row_major = (static and self.strides == _row_major(t.shape)) or (
            not static and identity
        )
        self.static = static or identity

    def may_alias(self, other) -> bool:
        (a, shared_a), (b, shared_b) = self.root, other.root
        return a is None or b is None or a == b or (shared_a and shared_b)

    def depends_on(self, p: int) -> bool:
        return any(p in dims_of(e) for e in self.index)

    def stride(self, p: int, strip: bool = False):
        """Element stride of the address as leaf `p` steps by one (None: not linear). The
        dims' forms are summed before a floordiv or mod of `p` makes it so: a fused loop's
        row `f floordiv 32` and column `(f mod 32) * 16` of a 512-wide buffer are `16 * f`.
        `strip`: the stride within a strip of `p` that no divisor's multiple splits (where
        `_fold` takes `p`'s inner part of a split): its floordivs stay, as its rows do."""
        if not self.static:
            return None
        total = Linear()
        for e, s in zip(self.index, self.strides):
            if p in dims_of(e):
                form = linear(e, division=_atom)
                if form is None:
                    return None
                total += form.scale(s)
        if any(
            _enters(a, p) and not (strip and a[0] is ir.AffineFloorDivExpr)
            for a in total.terms
            if not isinstance(a, int)
        ):
            return None
        return total.terms.get(p, 0)

    def lines(self, p: int, line_bytes: int) -> float:
        """Cache lines of `line_bytes` per step of leaf `p` (a whole one when not linear)."""
        s = self.stride(p)
        if s is None:
            return 1.0
        return min(abs(s) * self.elem_bytes, line_bytes) / line_bytes


def _atom(kind: type, lhs: Linear, rhs: Linear) -> Linear:
    """A floordiv/mod as an atom of the form (its key names its operands' forms); a mod by a
    constant `c` as `lhs - c * (lhs floordiv c)`, so that a row's floordiv and a column's mod
    of one fused index cancel in the address."""
    if kind is ir.AffineModExpr and rhs.is_const and rhs.const > 0:
        return lhs - Linear({(ir.AffineFloorDivExpr, lhs.key(), rhs.key()): rhs.const})
    return Linear({(kind, lhs.key(), rhs.key()): 1})


def _enters(atom, p: int) -> bool:
    """Whether division atom `atom` (`_atom`'s key) reads leaf `p`."""
    if atom == p:
        return True
    if not isinstance(atom, tuple):
        return False
    return any(_enters(a, p) for side in atom[1:] for a, _ in side[1])


def _row_major(shape) -> list:
    strides, n = [], 1
    for d in reversed(shape):
        strides.append(n)
        n *= d
    return strides[::-1]
