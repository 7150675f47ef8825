"""MultiLevelTiling: TVM's multi-level tiling of a compute block with data reuse.

Every loop is split into as many sampled perfect tiles as its kind has letters in
`structure` (a loop over a symbolic extent: constant factors from sample_categorical, the
outermost inferred) ("SSRSRS" on CPU: spatial, spatial, reduction, spatial, reduction, spatial;
"SSSRRSRS" on GPU), and the tiles are reordered level by level. Write reuse (`reuse_write`)
adds one sketch per level where the result is accumulated in a cache (`cache_write` +
`reverse_compute_at` under that level's innermost loop), or where a single elementwise
consumer is computed instead; "may" also keeps the sketch without. On GPU, the outer
spatial levels named in `tile_binds` are fused and bound to blockIdx/vthread/threadIdx, and
`reuse_read` caches the inputs in shared memory at a reduction level
(`meta_schedule.cooperative_fetch` marks the loads for RewriteCooperativeFetch).
"""

from dataclasses import dataclass, field
from typing import List, Optional, Sequence

from tir_mlir.errors import ScheduleError
from tir_mlir.meta_schedule.schedule_rule.schedule_rule import ScheduleRule


@dataclass
class ReuseConfig:
    req: str = "no"  # "no" | "may" | "must"
    levels: List[int] = field(default_factory=list)
    scope: str = "global"

    def __post_init__(self):
        if self.req not in ("no", "may", "must"):
            raise ValueError(f"ReuseConfig.req must be no/may/must, got {self.req!r}")


# The constant tile factors sampled for a loop over a symbolic extent: up to 64 innermost
# (at most max_innermost_factor), up to 16 at the levels between.
SYMBOLIC_FACTORS = (1, 2, 4, 8, 16, 32, 64)
SYMBOLIC_INNER_MAX = 16


def _config(c) -> ReuseConfig:
    if c is None:
        return ReuseConfig()
    return c if isinstance(c, ReuseConfig) else ReuseConfig(**c)


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
        sch.annotate(block, "meta_schedule.tiling_structure", self.structure)
        tiles = self._tile(sch, block)
        sch = self._bind(sch, tiles)
        out = []
        for s in self._write_reuse(sch, block, tiles):
            out += self._read_reuse(s, block, tiles)
        return out

    def _tile(self, sch, block) -> List[list]:
        s_levels = [k for k, c in enumerate(self.structure) if c == "S"]
        r_levels = [k for k, c in enumerate(self.structure) if c == "R"]
        tiles = [[] for _ in self.structure]
        for loop in sch.get_loops(block):
            levels = s_levels if sch.get_loop_iter_type(loop) == "S" else r_levels
            if isinstance(sch.get(loop).extent, int):
                factors = sch.sample_perfect_tile(
                    loop, n=len(levels), max_innermost_factor=self.max_innermost_factor
                )
            else:
                factors = self._symbolic_tile(sch, len(levels))
            for level, part in zip(levels, sch.split(loop, factors)):
                tiles[level].append(part)
        sch.reorder(*[lp for level in tiles for lp in level])
        return tiles

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

    def _bind(self, sch, tiles):
        """GPU: fuse the first len(tile_binds) spatial levels and bind each."""
        for k, axis in enumerate(self.tile_binds):
            fused = sch.fuse(*tiles[k]) if len(tiles[k]) > 1 else tiles[k][0]
            sch.bind(fused, axis)
            tiles[k] = [fused]
        return sch

    def _write_reuse(self, sch, block, tiles) -> List:
        cfg = self.reuse_write
        out = [sch] if cfg.req == "no" else []
        if cfg.req == "may":
            out.append(sch.copy())
        if cfg.req == "no":
            return out
        for level in cfg.levels:
            s = sch.copy()
            try:
                consumer = self._fusible_consumer(s, block)
                if consumer is None:
                    consumer = s.cache_write(block, 0, cfg.scope)
                s.reverse_compute_at(consumer, tiles[level - 1][-1], preserve_unit_loops=True)
            except ScheduleError:
                continue
            out.append(s)
        return out

    def _fusible_consumer(self, sch, block):
        """The one elementwise consumer that can take the place of a write cache."""
        consumers = sch.get_consumers(block)
        if len(consumers) != 1 or not sch.is_top_level_block(consumers[0]):
            return None
        c = consumers[0]
        types = sch.get_iter_types(c)
        if "R" in types or not sch.has_trivial_bindings(c):
            return None
        spatial = sum(1 for t in sch.get_iter_types(block) if t == "S")
        return c if len(types) == spatial else None

    def _read_reuse(self, sch, block, tiles) -> List:
        """Cache every input at each reuse level (one sketch per level)."""
        cfg = self.reuse_read
        if cfg.req == "no":
            return [sch]
        out = [sch.copy()] if cfg.req == "may" else []
        n_reads = len(sch.get_read_iter_vars(block))
        for level in cfg.levels:
            s = sch.copy()
            try:
                for k in range(n_reads):
                    cache = s.cache_read(block, k, cfg.scope)
                    s.compute_at(cache, tiles[level - 1][-1], preserve_unit_loops=True)
                    if self.vector_load_lens:
                        n = len(self.vector_load_lens)
                        v = s.sample_categorical(self.vector_load_lens, [1 / n] * n)
                        s.annotate(cache, "meta_schedule.cooperative_fetch", v)
            except ScheduleError:
                continue
            out.append(s)
        return out
