"""Stage `transpose-tiles` (CPU, affine level, before `outer-lanes`): a loop nest that reads a
buffer down its columns inside and along its rows outside (a transpose) runs as tiles of K
columns by L rows: the inner loop is split by a vector register's lanes and vectorized, and K
steps of the outer loop are unrolled inside it, so that `transpose-gathers` loads each row's K
adjacent elements at once and transposes them in registers.

    for i in 0..8:                                 for j0 in 0..4:
      for j in 0..64:                      =>        (i = 0 .. 7 unrolled:)
        C[i, j] = A[j, i] + B[i, j]                    for j1 in T.vectorized(16):
                                                         C[i, 16 j0 + j1] = A[16 j0 + j1, i] + ...

Left as it was, LLVM's loop vectorizer takes `j` and builds each vector of A lane by lane from
rows a page apart (one scalar load and insert per lane, the addresses computed in vectors and
taken apart), and the next `i` reads the same rows' next elements again; TVM's build of such a
schedule keeps the `cache_read` copy that `forward-buffer-copies` drops here, whose short row
segments are its fast part (benchmarks/README.md, "session 14, transposes"). Tiled, each of the
L rows is one load of K elements and the columns come out of a register transpose. A schedule
that vectorizes `j` itself with the columns loop around it (the same gathers, once per column)
only needs the columns unrolled. A parallel columns loop runs its iterations as parallel groups
of K columns (`split parallel vectorize` of the rows, nothing reordered, was one column of
gathers per parallel step), and a serial strip loop of the rows between `i` and a vectorized
`j` trades places with the K columns:

    for i in T.parallel(1024):                     for i0 in T.parallel(128):
      for j0 in 0..128:                    =>        for j0 in 0..128:
        for j1 in T.vectorized(8):                     (i = 8 i0 .. 8 i0 + 7 unrolled:)
          C[i, 8 j0 + j1] = A[8 j0 + j1, i] + ...        for j1 in T.vectorized(8): ...

A pair the other way round, the rows outside the columns (swapped: stores contiguous along the
outer loop and scattered along the inner one, the transposed read contiguous along the inner),
trades places first and is then tiled the same way:

    for i0 in T.parallel(128):                     for i0 in T.parallel(128):
      for j in 0..1024:                    =>        for j0 in 0..64:
        for i1 in 0..8:                                (i1 = 0 .. 7 unrolled:)
          C[8 i0 + i1, j] = A[j, 8 i0 + i1] + ...        for j1 in T.vectorized(16): ...

LLVM fully unrolls such a short inner loop and vectorizes `j` across it: every vector of A is
built lane by lane from rows a page apart, its addresses computed in vectors and taken apart (0307
of seed 1220622965, `split reorder parallel`: 1.39 -> 0.66 ms at 1 thread on a Zen 4, where TVM's
build took 0.52-1.5 ms depending on where the process's arrays landed; benchmarks/README.md,
"session 18, transposes"). Both loops must be plain serial loops and nothing stand between them.

A pair qualifies when:
- `i` is a plain serial loop (constant bounds, step 1, no annotation), or a parallel one of more
  than K steps, whose body is pure ops and then `j`, or pure ops and a plain serial strip loop
  whose body is pure ops and then `j`; `j` is a plain serial loop or a `T.vectorized` one of
  constant bounds and step 1, holding only loads, stores and pure ops (no loop, no `affine.if`);
- every store is contiguous along `j`, alone on its buffer and writes another element at every
  (i, strip, j) (lane_interchange's `independent`: any order of the iterations computes the
  same);
- some load jumps a vector register's lanes of its element or more along `j` and is contiguous
  along `i` (the transposed read), and every other load is contiguous or the same along `j`;
- `j` splits into L lanes (its extent when vectorized, else the largest power of two up to a
  register's lanes dividing its extent; a register's lanes for a vectorized `j` of a power of
  two wider than that, which runs as strips of one register each, the rows `transpose-gathers`
  holds) and `i` into K columns (the largest power of two up to L dividing its extent), K at
  least MIN_COLUMNS (`transpose-gathers`' least group), L at least MIN_COLUMNS too (a 4 x 4
  tile is 8 shuffles where its columns built lane by lane are 12 inserts, `transpose-gathers'`
  own count: 0117 of seed 1418610677, 4 columns around 12 rows, ran 1.5 -> 0.96 ms on a Zen 4,
  benchmarks/README.md, "session 17, transpose tiles"). A schedule's
  vectorized `j` of lanes not a power of two (5, 6, 7, 12) stays: tiled, 64 columns around
  5 rows ran 1.4x slower (benchmarks/README.md, "session 14, transposes").
"""

from typing import NamedTuple, Optional

from mlir import ir

from tir_mlir.analysis.buffer_util import NotAffine
from tir_mlir.dialect.ops import Loop, body_ops
from tir_mlir.passes.lowering.buffer_roots import noalias_args
from tir_mlir.passes.lowering.common import constant_extent, functions, loop_iv, walk
from tir_mlir.passes.lowering.cpu_model import VectorStage
from tir_mlir.passes.lowering.lane_interchange import independent, serial_loop, swap_loops
from tir_mlir.passes.lowering.loop_interchange import (
    ACCESSES,
    PLAIN_LOOP_ATTRS,
    Access,
    pure,
    split_loop,
)
from tir_mlir.passes.lowering.transpose_gathers import MIN_COLUMNS
from tir_mlir.passes.lowering.unroll import unroll
from tir_mlir.passes.lowering.version_guards import COPY as LOOP_COPY


class _Tile(NamedTuple):
    i: ir.Operation  # the columns loop (outer)
    j: ir.Operation  # the rows loop (inner)
    columns: int  # K: steps of `i` unrolled inside a strip of `j`
    lanes: int  # L: the vectorized strip of `j`
    strip: Optional[ir.Operation]  # a serial loop between `i` and `j` (rows by strips), or None
    swapped: bool = False  # `i` holds the rows and `j` the columns until they trade ranges


class TransposeTiles(VectorStage):
    name = "transpose-tiles"

    def __call__(self, module: ir.Module):
        for f in functions(module):
            noalias = noalias_args(f)
            tiles = [self._tile(o, noalias) for o in walk(f) if _columns_loop(o)]
            taken = set()
            for tile in tiles:
                if tile is not None and tile.j not in taken:
                    taken.add(tile.j)
                    _rewrite(tile)

    def _tile(self, i, noalias) -> Optional[_Tile]:
        """The tile of the pair (`i`, the loop its body ends in, or the loop the body of a
        serial strip loop there ends in), when it qualifies."""
        j, strip = _inner(i), None
        if j is None:
            strip = _strip(i)
            j = _inner(strip) if strip is not None else None
        if j is None:
            return None
        between = () if strip is None else (strip,)
        leaves = [loop_iv(i), loop_iv(j), *(loop_iv(s) for s in between)]
        try:
            accesses = [Access(o, leaves, noalias) for o in _accesses(j) or []]
        except NotAffine:
            return None
        if not accesses or not independent(accesses, leaves, i, j, between):
            return None
        register = self.vector_bits // 8
        rows, cols, swapped = j, i, False
        if not _transposes(accesses, register):
            # The columns inside the rows: the stores scatter down the columns, the transposed
            # read runs along a row (the module's docstring, "swapped").
            if strip is not None or not (serial_loop(i) and serial_loop(j)):
                return None
            if not _transposes(accesses, register, rows=0, columns=1):
                return None
            rows, cols, swapped = i, j, True
        lanes = _lanes(rows, register // max(a.elem_bytes for a in accesses))
        if lanes is None:
            return None
        extent = constant_extent(Loop(cols))
        columns = _power_of_two_divisor(extent, lanes)
        if columns < MIN_COLUMNS or (Loop(cols).kind == "parallel" and extent <= columns):
            return None
        return _Tile(i, j, columns, lanes, strip, swapped)


def _columns_loop(op) -> bool:
    """A plain serial loop, or a parallel one of constant bounds, step 1 and no annotation
    (its iterations run as parallel groups of K columns)."""
    if serial_loop(op):
        return True
    if op.name != "affine.for" or len(op.operands) or len(op.results):
        return False
    loop = Loop(op)
    plain = not set(op.attributes) - PLAIN_LOOP_ATTRS - {LOOP_COPY}
    return plain and loop.kind == "parallel" and loop.step == 1 and constant_extent(loop) > 1


def _strip(i) -> Optional[ir.Operation]:
    """The plain serial loop `i`'s body ends in after pure ops (a strip of rows around `j`)."""
    ops = body_ops(i.regions[0].blocks[0])
    if not ops or not all(pure(o) or o.name == "affine.apply" for o in ops[:-1]):
        return None
    return ops[-1] if serial_loop(ops[-1]) and not len(ops[-1].results) else None


def _inner(i) -> Optional[ir.Operation]:
    """The loop `i`'s body ends in after pure ops, when it is a plain serial or vectorized loop
    of constant bounds and step 1 holding only accesses and pure ops."""
    ops = body_ops(i.regions[0].blocks[0])
    if not ops or not all(pure(o) or o.name == "affine.apply" for o in ops[:-1]):
        return None
    j = ops[-1]
    if j.name != "affine.for" or len(j.operands) or len(j.results):
        return None
    if not (serial_loop(j) or (Loop(j).kind == "vectorized" and Loop(j).step == 1)):
        return None
    if _accesses(j) is None:
        return None
    return j


def _accesses(j) -> Optional[list]:
    """The loads and stores of `j`'s body, when it holds nothing else but pure ops."""
    out = []
    for o in body_ops(j.regions[0].blocks[0]):
        if o.name in ACCESSES:
            out.append(o)
        elif not (pure(o) or o.name == "affine.apply"):
            return None
    return out


def _transposes(accesses: list, register_bytes: int, rows: int = 1, columns: int = 0) -> bool:
    """Whether some load jumps a register's lanes or more along the rows (leaf `rows`: `j`'s
    IV) and is contiguous along the columns (leaf `columns`: `i`'s), every store is contiguous
    along the rows, and every other load contiguous or the same along them."""
    found = False
    for a in accesses:
        along, across = a.stride(rows), a.stride(columns)
        if along is None or across is None:
            return False
        if a.store:
            if along != 1:
                return False
        elif abs(along) * a.elem_bytes >= register_bytes and across == 1:
            found = True
        elif along not in (0, 1):
            return False
    return found


def _lanes(j, most: int) -> Optional[int]:
    """L: `j`'s extent when it is vectorized (`most` when that is a power of two above it: the
    rows run as strips of a register), else the largest power of two up to `most` dividing it
    (None: not a power of two or under MIN_COLUMNS)."""
    extent = constant_extent(Loop(j))
    lanes = extent if Loop(j).kind == "vectorized" else _power_of_two_divisor(extent, most)
    if lanes & (lanes - 1):
        return None  # 5 or 12 vectorized rows: measured slower tiled (the module's docstring)
    return min(lanes, most) if lanes >= MIN_COLUMNS else None


def _power_of_two_divisor(extent: int, most: int) -> int:
    """The largest power of two up to `most` dividing `extent`."""
    width = 1
    while width * 2 <= most and extent % (width * 2) == 0:
        width *= 2
    return width


def _rewrite(tile: _Tile) -> None:
    """i -> i_o, i (a parallel `i` keeps i_o parallel, K serial columns inside); a strip loop
    between trades ranges with the columns; j -> j_o, j (vectorized); then i and j_o trade
    ranges and the K steps of `i`, now inside j_o, are unrolled."""
    i, j = tile.i, tile.j
    if tile.swapped:
        swap_loops(i, j)  # i takes the columns' range, j (inside) the rows'
    if constant_extent(Loop(i)) > tile.columns:
        i = split_loop(Loop(i), tile.columns)
    if tile.strip is not None:
        swap_loops(i, tile.strip)  # i takes the strip's range, the strip (inside) the columns'
        i = tile.strip
    if constant_extent(Loop(j)) > tile.lanes:
        lanes = split_loop(Loop(j), tile.lanes)
        swap_loops(i, j)  # i takes j_o's range, j (now inside) the columns'
        i, j = j, lanes
    Loop(j).set(kind="vectorized")
    unroll(i)
