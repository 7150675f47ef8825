"""MultiLevelTiling: TVM's multi-level tiling of a compute block with data reuse.

TVM's sub-rules in TVM's order, each taking every sketch made so far:

1. TileLoopNest: every loop is split into as many sampled perfect tiles as its kind has
   letters in `structure` ("SSRSRS" on CPU: spatial, spatial, reduction, spatial, reduction,
   spatial; "SSSRRSRS" on GPU; a kind with one letter keeps its loops unsplit; a loop over a
   symbolic extent: constant factors from sample_categorical, the outermost inferred), the
   tiles reordered level by level, the innermost at most `max_innermost_factor` (a reduction
   loop's: the whole loop with `whole_reduction_tile`, below); on GPU the levels named in
   `tile_binds` are fused and bound to blockIdx/vthread/threadIdx; a target that names its
   `max_threads_per_block` (TVM's tags, e.g. "cuda -max_threads_per_block=1024
   -thread_warp_size=32") also bounds the block's threads for VerifyGPUCode
   (`meta_schedule.thread_extent_low_inclusive`: a warp when the spatial loops cover more
   than two warps, else 1; `_high_inclusive`: that max).
2. AddWriteReuse (`reuse_write`): the result is accumulated in a `scope` cache
   (`cache_write`), copied back under each level's innermost loop (one sketch per level).
   "may" also keeps the sketch without a cache, and when the block's single consumer is
   already a write cache (an elementwise copy of the result), that consumer is moved instead
   of adding a cache. A block annotated `meta_schedule.write_cache_level` must reuse at those
   levels.
3. AddReadReuse (`reuse_read`): every input (not the buffer written) is cached in `scope`
   for this block alone, computed at each level's innermost loop (one sketch per level), the
   copy's loops over the buffer fused and marked `meta_schedule.cooperative_fetch` with a
   sampled vector length the buffer's dtype allows (RewriteCooperativeFetch binds it).
"""

from dataclasses import dataclass, field
from typing import Callable, List, Optional, Sequence, Tuple

from mlir import ir

from tir_mlir.analysis import buffer_util
from tir_mlir.context import get_context
from tir_mlir.dialect.ops import Block
from tir_mlir.dtypes import dtype_of
from tir_mlir.errors import ScheduleError
from tir_mlir.meta_schedule.schedule_rule.schedule_rule import ScheduleRule

COOPERATIVE_FETCH = "meta_schedule.cooperative_fetch"
TILING_STRUCTURE = "meta_schedule.tiling_structure"
WRITE_CACHE_LEVEL = "meta_schedule.write_cache_level"
THREAD_EXTENT_LOW = "meta_schedule.thread_extent_low_inclusive"
THREAD_EXTENT_HIGH = "meta_schedule.thread_extent_high_inclusive"


@dataclass
class ReuseConfig:
    req: str = "no"  # "no" | "may" | "must"
    levels: List[int] = field(default_factory=list)
    scope: str = "global"

    def __post_init__(self):
        if self.req not in ("no", "may", "must"):
            raise ValueError(f"ReuseConfig.req must be no/may/must, got {self.req!r}")


# `whole_reduction_tile` (the llvm default's, not TVM's): a reduction loop's innermost tile may be
# the whole loop (TVM caps it at `max_innermost_factor` like a spatial one). With "SSRSRS" it is
# the number of steps the register tile (the innermost spatial level) accumulates between a
# load and a store of its accumulators, and the depth of the panels the level-2 spatial tiles
# stream: BLAS kernels run the whole k, or a kc of hundreds, per register tile. Capped at 64, a
# 1024 matmul's tile reloads and stores its accumulators at least 16 times, and each time its
# rows of C come back from L2 (benchmarks/README.md, "Issue 28, session 11, the tuned matmul").

# The constant tile factors sampled for a loop over a symbolic extent: up to 64 innermost
# (at most max_innermost_factor), up to 16 at the levels between.
SYMBOLIC_FACTORS = (1, 2, 4, 8, 16, 32, 64)
SYMBOLIC_INNER_MAX = 16


def _config(c) -> ReuseConfig:
    if c is None:
        return ReuseConfig()
    return c if isinstance(c, ReuseConfig) else ReuseConfig(**c)


class State:
    """One sketch in the making (TVM's State): the schedule and the tiles of each level."""

    def __init__(self, sch, block, tiles: Optional[List[list]] = None):
        self.sch, self.block = sch, block
        self.tiles: List[list] = tiles or []

    def copy(self) -> "State":
        return State(self.sch.copy(), self.block, [list(t) for t in self.tiles])


class MultiLevelTiling(ScheduleRule):
    def __init__(
        self,
        structure: str = "SSRSRS",
        tile_binds: Optional[Sequence[str]] = None,
        max_innermost_factor: Optional[int] = 64,
        vector_load_lens: Optional[Sequence[int]] = None,
        reuse_read=None,
        reuse_write=None,
        filter_fn=None,
        whole_reduction_tile: bool = False,
    ):
        if set(structure) - {"S", "R"} or "S" not in structure or "R" not in structure:
            raise ValueError(f"tiling structure must use S and R, got {structure!r}")
        self.structure = structure
        self.tile_binds = list(tile_binds or [])
        self.max_innermost_factor = max_innermost_factor or 1 << 30
        self.vector_load_lens = list(vector_load_lens or [])
        self.reuse_read = _config(reuse_read)
        self.reuse_write = _config(reuse_write)
        self.filter_fn = filter_fn
        self.whole_reduction_tile = whole_reduction_tile

    def needs_tiling(self, sch, block) -> bool:
        """TVM's condition: a compute block with trivial bindings, a reduction, and data
        reuse (some read buffer is indexed by fewer than all spatial iter vars)."""
        if self.filter_fn is not None:
            return bool(self.filter_fn(sch, block))
        types = sch.get_iter_types(block)
        if "R" not in types or set(types) - {"S", "R"} or not sch.has_trivial_bindings(block):
            return False
        reads = sch.get_read_iter_vars(block)
        spatial = {k for k, t in enumerate(types) if t == "S"}
        return len(reads) >= 2 and any(spatial - used for used in reads)

    def apply(self, sch, block) -> List:
        if not sch.is_top_level_block(block) or not self.needs_tiling(sch, block):
            return [sch]
        sch.annotate(block, TILING_STRUCTURE, self.structure)
        states = [State(sch, block)]
        for step in self._sub_rules():
            states = [out for st in states for out in step(st)]
        return [st.sch for st in states]

    def _sub_rules(self) -> List[Callable[[State], List[State]]]:
        return [self._tile_loop_nest, self._add_write_reuse, self._add_read_reuse]

    # --- 1. TileLoopNest ------------------------------------------------------------------
    def _tile_loop_nest(self, st: State) -> List[State]:
        sch, block = st.sch, st.block
        s_levels = [k for k, c in enumerate(self.structure) if c == "S"]
        r_levels = [k for k, c in enumerate(self.structure) if c == "R"]
        tiles: List[list] = [[] for _ in self.structure]
        spatial_product: Optional[int] = 1
        for loop in sch.get_loops(block):
            kind = sch.get_loop_iter_type(loop)
            if kind not in ("S", "R"):
                continue
            levels = s_levels if kind == "S" else r_levels
            extent = sch.get(loop).extent
            if kind == "S" and spatial_product is not None:
                spatial_product = spatial_product * extent if isinstance(extent, int) else None
            if len(levels) == 1:  # one tile level: the loop itself, unsplit
                tiles[levels[0]].append(loop)
                continue
            if isinstance(extent, int):
                factors = sch.sample_perfect_tile(
                    loop, n=len(levels), max_innermost_factor=self._innermost_max(kind, extent)
                )
            else:
                factors = self._symbolic_tile(sch, len(levels))
            for level, part in zip(levels, sch.split(loop, factors)):
                tiles[level].append(part)
        sch.reorder(*[lp for level in tiles for lp in level])
        for k, axis in enumerate(self.tile_binds[: len(tiles)]):
            fused = sch.fuse(*tiles[k])
            sch.bind(fused, axis)
            tiles[k] = [fused]
        limits = self._thread_limits()
        if limits is not None:
            high, warp = limits
            low = warp if spatial_product is not None and spatial_product > 2 * warp else 1
            sch.annotate(block, THREAD_EXTENT_LOW, low)
            sch.annotate(block, THREAD_EXTENT_HIGH, high)
        st.tiles = tiles
        return [st]

    def _innermost_max(self, kind: str, extent: int) -> int:
        """The largest innermost tile of a loop of `kind` ("S"/"R") and constant `extent`."""
        if kind == "R" and self.whole_reduction_tile:
            return max(extent, self.max_innermost_factor)
        return self.max_innermost_factor

    def _thread_limits(self) -> Optional[Tuple[int, int]]:
        """(max threads per block, warp size) when the target names its max threads per
        block (TVM's tags do, a plain "cuda" does not), else None: no thread bounds."""
        attrs = self.target.attrs if self.target is not None else {}
        if not attrs.get("max_threads_per_block"):
            return None
        return int(attrs["max_threads_per_block"]), int(attrs.get("thread_warp_size") or 32)

    def _symbolic_tile(self, sch, n: int) -> list:
        """Tile factors of a loop over a symbolic extent (no perfect tile exists for every
        size): the outermost inferred, each inner one a sample_categorical over constants
        (the split guards what they do not divide); one kernel then serves all sizes."""
        factors = [None]
        for k in range(1, n):
            top = self.max_innermost_factor if k == n - 1 else SYMBOLIC_INNER_MAX
            cands = [c for c in SYMBOLIC_FACTORS if c <= top] or [1]
            factors.append(sch.sample_categorical(cands, [1 / len(cands)] * len(cands)))
        return factors

    # --- 2. AddWriteReuse -----------------------------------------------------------------
    def _add_write_reuse(self, st: State) -> List[State]:
        cfg = self.reuse_write
        req, levels = cfg.req, list(cfg.levels)
        annotated = st.sch.get_annotations(st.block).get(WRITE_CACHE_LEVEL)
        if annotated is not None:
            req, levels = "must", [int(v) for v in annotated]
        if req == "no":
            return [st]
        out: List[State] = []
        if req == "may":
            consumers = st.sch.get_consumers(st.block)
            if len(consumers) == 1 and is_write_cache(st.sch, consumers[0]):
                out += self._at_levels(st, consumers[0], levels)
                return out + [st]
            out.append(st.copy())
        try:
            cache = st.sch.cache_write(st.block, 0, cfg.scope)
        except ScheduleError:
            return out
        return out + self._at_levels(st, cache, levels)

    @staticmethod
    def _at_levels(st: State, consumer, levels: Sequence[int]) -> List[State]:
        out = []
        for level in levels:
            new = st.copy()
            try:
                new.sch.reverse_compute_at(consumer, new.tiles[level - 1][-1], True)
            except ScheduleError:
                continue
            out.append(new)
        return out

    # --- 3. AddReadReuse ------------------------------------------------------------------
    def _add_read_reuse(self, st: State) -> List[State]:
        cfg = self.reuse_read
        if cfg.req == "no":
            return [st]
        out = [st.copy()] if cfg.req == "may" else []
        ndims = read_buffer_ndims(st.sch, st.block)
        for level in cfg.levels:
            new = st.copy()
            sch = new.sch
            try:
                for k, ndim in enumerate(ndims):
                    if ndim < 0:
                        continue
                    cache = sch.cache_read(new.block, k, cfg.scope, [new.block])
                    sch.compute_at(cache, new.tiles[level - 1][-1], True)
                    loops = sch.get_loops(cache)
                    sch.fuse(*loops[len(loops) - ndim :])
                    self._cooperative_fetch(sch, cache)
            except ScheduleError:
                continue
            out.append(new)
        return out

    def _cooperative_fetch(self, sch, block) -> None:
        """Mark the copy for RewriteCooperativeFetch with a sampled vector length among those
        its dtype allows (TVM's AnnotateCooperativeFetching)."""
        lens = valid_vector_lens(self.vector_load_lens, write_dtype(sch, block))
        if lens:
            v = sch.sample_categorical(lens, [1 / len(lens)] * len(lens))
            sch.annotate(block, COOPERATIVE_FETCH, v)


def valid_vector_lens(lens: Sequence[int], dtype: str) -> List[int]:
    """The vector lengths a cooperative fetch of `dtype` may use (TVM's filter)."""
    if dtype == "float32":
        return [v for v in lens if v <= 4]
    if dtype == "float16":
        return [v for v in lens if (v == 1 or v % 2 == 0) and v <= 8]
    if dtype == "int8":
        return [v for v in lens if v <= 16]
    return list(lens)


def write_type(sch, block) -> ir.MemRefType:
    """The memref type of the first buffer `block` writes."""
    with get_context():
        return ir.MemRefType(buffer_util.block_writes(Block(sch._block(block)))[0].type)


def write_dtype(sch, block) -> str:
    with get_context():
        return dtype_of(write_type(sch, block).element_type)


def read_buffer_ndims(sch, block) -> List[int]:
    """Per buffer the block reads (T.reads order): its rank, -1 for the buffer it writes
    (TVM's GetReadBufferNDims)."""
    with get_context():
        b = Block(sch._block(block))
        written = buffer_util.block_writes(b)[:1]
        return [
            -1 if any(buf == w for w in written) else ir.MemRefType(buf.type).rank
            for buf in buffer_util.block_reads(b)
        ]


def is_write_cache(sch, block) -> bool:
    """TVM's IsWriteCache: the block writes one buffer, at indices that are its iter vars,
    and reads every buffer at constants or those vars (shifted by constants at most), each
    var at most once and in the written order: an elementwise copy of its input."""
    with get_context():
        b = Block(sch._block(block))
        acc = buffer_util.accesses(b.op)
        written = buffer_util.block_writes(b)
        if len(written) != 1:
            return False
        stores = [op for op, kind, buf in acc if kind == "store" and buf == written[0]]
        w_index = [list(stores[0].operands)[2:] for _ in stores[:1]]
        if not w_index or any(not isinstance(v.owner, ir.Block) for v in w_index[0]):
            return False
        w_vars = w_index[0]
        for op, kind, _ in acc:
            if kind != "load":
                continue
            mapped = []
            for v in list(op.operands)[1:]:
                leaves: list = []
                try:
                    e = buffer_util.to_affine(v, leaves)
                except buffer_util.NotAffine:
                    return False
                if not leaves:
                    continue  # a constant index
                if len(leaves) != 1 or not _var_plus_const(e):
                    return False
                hit = [k for k, w in enumerate(w_vars) if w == leaves[0]]
                if not hit:
                    return False
                mapped.append(hit[0])
            if len(set(mapped)) != len(mapped) or mapped != sorted(mapped):
                return False
        return True


def _var_plus_const(e: ir.AffineExpr) -> bool:
    """d0, or d0 shifted by a constant."""
    m = ir.AffineMap.get(1, 0, [e - ir.AffineExpr.get_dim(0)])
    return isinstance(m.results[0], ir.AffineConstantExpr)
