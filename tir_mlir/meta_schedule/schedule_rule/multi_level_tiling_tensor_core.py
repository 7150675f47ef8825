"""MultiLevelTilingTensorCore: TVM 0.21's rule that puts a matmul-like block on tensor cores
(WMMA, 16x16x16 fragments).

For each intrinsic group (`init`, `load_a`, `load_b`, `compute`, `store`: TVM's
`get_wmma_intrin_group` dicts) whose `compute` desc the block computes
(`get_auto_tensorize_mapping_info`), one sketch, built as TVM builds it:

1. the output and both inputs are `reindex`ed (buffers indexed by the block's iter vars), the
   reindex buffers laid out in the desc's index order (`transform_layout`: B is [k, j] for
   the non-transposed intrinsic) and the block's iter space mapped onto the desc's
   (`transform_block_layout`);
2. the block's inner 16x16x16 loops are `blockize`d; the outer block is marked
   `meta_schedule.auto_tensorize` = compute, `meta_schedule.auto_tensorize_init` = init and
   `warp_execution`;
3. the outer block is tiled as MultiLevelTiling tiles ("SSSRRSRS", the first levels fused and
   bound to `tile_binds`: blocks and warps, never threadIdx.x);
4. write reuse: the result goes through a `reuse_write.scope` ("shared") cache computed under
   tiling level `reuse_write.levels[0]` and a `wmma.accumulator` cache under the warp level,
   whose 16x16 tiles are blockized and marked with the store intrinsic; the reindex store is
   inlined into the shared write-back, fused and marked `meta_schedule.cooperative_fetch`
   (with a sampled vector length). (TVM also stores the accumulators straight to global
   memory when `reuse_write.req` is "no": not supported here yet, refused up front);
5. read reuse: each input is cached in `reuse_read.scope` ("shared") at the first reduction
   level (`reuse_read.levels[0]`) with a cooperative fetch, then in `wmma.matrix_a/b` at the
   second, whose tiles are blockized and marked with the load intrinsics; the reindex copies
   are inlined into the shared fetches (fp16 rows padded by `storage_align` as TVM does).

The postprocessors finish it: RewriteCooperativeFetch binds the fetches to the threads,
RewriteReductionBlock splits the init off (marked with the init intrinsic),
RewriteTensorize tensorizes every marked block. A block no group computes, or whose mapping
is not a plain permutation of its iter vars (a convolution's fused iters: not yet), is
returned unchanged for the other rules. Not yet as TVM: draws whose write-back tiles blockize
cannot separate (see TILE_DRAWS) are redrawn, and the accumulator keeps the 2-D layout (no
TransformIntermediateOutputLayout).
"""

from typing import Dict, List, Optional, Sequence

from tir_mlir.analysis import buffer_util
from tir_mlir.context import get_context
from tir_mlir.dialect.ops import Block
from tir_mlir.errors import ScheduleError
from tir_mlir.meta_schedule.schedule_rule.multi_level_tiling import MultiLevelTiling
from tir_mlir.meta_schedule.schedule_rule.multi_level_tiling_with_intrin import tile_for_intrin
from tir_mlir.schedule.analysis import get_auto_tensorize_mapping_info
from tir_mlir.schedule.tensor_intrin import TensorIntrin

AUTO_TENSORIZE_INIT = "meta_schedule.auto_tensorize_init"
COOPERATIVE_FETCH = "meta_schedule.cooperative_fetch"
GROUP_KEYS = ("init", "load_a", "load_b", "compute", "store")
# Tile draws tried per group. Some draws leave the accumulator's write-back bound through a
# fused block/warp loop (`f // 4 * 64 + i`), whose 16x16 tiles blockize does not separate
# yet: such a sketch is drawn again (the search counts replays that hit it as failures).
TILE_DRAWS = 8


class MultiLevelTilingTensorCore(MultiLevelTiling):
    def __init__(
        self,
        intrin_groups: Sequence[Dict[str, str]],
        structure: str = "SSSRRSRS",
        tile_binds: Optional[Sequence[str]] = None,
        max_innermost_factor: Optional[int] = 4,
        vector_load_lens: Optional[Sequence[int]] = None,
        reuse_read=None,
        reuse_write=None,
        use_software_pipeline: bool = False,
    ):
        super().__init__(
            structure, tile_binds, max_innermost_factor, vector_load_lens, reuse_read, reuse_write
        )
        if "threadIdx.x" in self.tile_binds:
            raise ValueError("Cannot bind to threadIdx.x when using tensor core.")
        if "threadIdx.y" not in self.tile_binds:
            raise ValueError(
                "MultiLevelTilingTensorCore binds the warps to threadIdx.y: tile_binds must name it"
            )
        self.intrin_groups = []
        for group in intrin_groups:
            group = dict(group)
            missing = [k for k in GROUP_KEYS if k not in group]
            if missing:
                raise ValueError(
                    f"an intrinsic group needs {', '.join(GROUP_KEYS)}; "
                    f"missing {', '.join(missing)}"
                )
            for k in GROUP_KEYS:
                TensorIntrin.get(group[k])  # ScheduleError now for an unknown name
            self.intrin_groups.append(group)
        if self.reuse_write.req == "no" or not self.reuse_write.scope.startswith("shared"):
            raise ValueError(
                "MultiLevelTilingTensorCore writes the accumulators back through "
                "shared memory (reuse_write req 'must', scope shared or "
                "shared.dyn); storing them straight to global memory is not "
                "supported yet"
            )
        self.use_software_pipeline = use_software_pipeline

    def apply(self, sch, block) -> List:
        if not sch.is_top_level_block(block) or not self.needs_tiling(sch, block):
            return [sch]
        reads, writes = sch.get_block_buffers(block)
        if len(reads) != 2 or len(writes) != 1:  # matmul-like blocks only (TVM's)
            return [sch]
        out = []
        for group in self.intrin_groups:
            if get_auto_tensorize_mapping_info(sch, block, group["compute"]) is None:
                continue
            for _ in range(TILE_DRAWS):
                s = sch.copy()
                s.seed(sch.fork_seed())
                try:
                    done = self._sketch(s, block, group)
                except ScheduleError:
                    continue  # these tile sizes do not fit: draw again
                if done is not None:
                    out.append(done)
                break
        return out or [sch]

    # --- the steps (each returns the schedule it continues on: tile_for_intrin copies) ----------
    def _sketch(self, sch, block, group):
        sch.annotate(block, "meta_schedule.tiling_structure", self.structure)
        store = sch.reindex(block, ("write", 0))
        reindex_reads = [sch.reindex(block, ("read", 0)), sch.reindex(block, ("read", 1))]
        info = get_auto_tensorize_mapping_info(sch, block, group["compute"])
        if info is None or not _is_permutation(info.mappings[0]):
            return None
        _layout_as_desc(sch, block, info, group["compute"])
        sch.transform_block_layout(block, info.mappings[0])
        tiled = tile_for_intrin(sch, block, group["compute"])
        if tiled is None:
            return None
        sch, outer = tiled
        sch.annotate(outer, AUTO_TENSORIZE_INIT, group["init"])
        sch.annotate(outer, "warp_execution", 1)
        tiles = self._tile(sch, outer)
        self._bind(sch, tiles)
        sch = self._write_reuse_tc(sch, outer, tiles, group, store)
        return self._read_reuse_tc(sch, outer, tiles, group, reindex_reads)

    def _write_reuse_tc(self, sch, outer, tiles, group, store):
        cfg = self.reuse_write
        level = cfg.levels[0] if cfg.levels else 2
        shared = sch.cache_write(outer, 0, cfg.scope)
        sch.reverse_compute_at(shared, tiles[level - 1][-1], preserve_unit_loops=True)
        acc = sch.cache_write(outer, 0, "wmma.accumulator")
        warp = self.tile_binds.index("threadIdx.y")
        sch.reverse_compute_at(acc, tiles[warp][-1], preserve_unit_loops=True)
        sch.reverse_compute_inline(store)
        sch = _tensorize_tiles(sch, acc, group["store"])
        self._cooperative_fetch(sch, shared)
        return sch

    def _read_reuse_tc(self, sch, outer, tiles, group, reindex_reads):
        r_levels = [k for k, c in enumerate(self.structure) if c == "R"]
        cfg = self.reuse_read
        if cfg.req != "no":
            level = cfg.levels[0] if cfg.levels else r_levels[0] + 1
            for k in range(2):
                cache = sch.cache_read(outer, k, cfg.scope)
                sch.compute_at(cache, tiles[level - 1][-1], preserve_unit_loops=True)
                self._cooperative_fetch(sch, cache)
        for k, (scope, intrin) in enumerate(
            (("wmma.matrix_a", group["load_a"]), ("wmma.matrix_b", group["load_b"]))
        ):
            frag = sch.cache_read(outer, k, scope)
            sch.compute_at(frag, tiles[r_levels[1]][-1], preserve_unit_loops=True)
            sch = _tensorize_tiles(sch, frag, intrin)
        for copy in reindex_reads:
            sch.compute_inline(copy)
        return sch

    def _cooperative_fetch(self, sch, block):
        """Fuse the copy's own loops and mark it for RewriteCooperativeFetch, with a sampled
        vector length (TVM's AnnotateCooperativeFetching)."""
        loops = sch.get_loops(block)
        n = len(sch.get_iter_types(block))
        inner = loops[-n:] if n else []
        if len(inner) > 1:
            sch.fuse(*inner)
        lens = self.vector_load_lens or [1]
        v = sch.sample_categorical(lens, [1 / len(lens)] * len(lens))
        sch.annotate(block, COOPERATIVE_FETCH, v)


def _tensorize_tiles(sch, block, intrin: str):
    """The schedule with the block's 16x16 tiles blockized and marked with `intrin`."""
    tiled = tile_for_intrin(sch, block, intrin)
    if tiled is None:
        raise ScheduleError(f"a copy block does not match the tensor intrinsic {intrin}")
    return tiled[0]


def _is_permutation(mapping: str) -> bool:
    """Whether a `lambda a, b, c: (x, y, z)` map only reorders its variables."""
    params, _, body = mapping.partition(":")
    names = [p.strip() for p in params.replace("lambda", "").split(",")]
    outs = [o.strip() for o in body.strip().strip("()").split(",") if o.strip()]
    return sorted(outs) == sorted(names)


def _index_orders(block_op) -> Dict[str, List[Optional[int]]]:
    """Per buffer the block accesses: its indices as positions of the block's iter vars
    (None for an index that is not a plain iter var), from the first access."""
    b = Block(block_op)
    args = list(b.body.arguments)
    out: Dict[str, List[Optional[int]]] = {}
    for op, kind, buf in buffer_util.accesses(b.op):
        first = 1 if kind == "load" else 2
        pos = []
        for idx in list(op.operands)[first:]:
            hit = [k for k, a in enumerate(args) if a == idx]
            pos.append(hit[0] if hit else None)
        out.setdefault(buffer_util.buffer_name(buf), pos)
    return out


def _layout_as_desc(sch, block, info, desc_name: str) -> None:
    """Lay each reindexed buffer out in the order its desc buffer is indexed in (TVM's
    sub-index-map transform_layout), the block's iter vars already the desc's, in order."""
    from tir_mlir.schedule.analysis import _desc_module, _desc_nest

    with get_context():
        d_block, _ = _desc_nest(_desc_module(desc_name))
        desc_order = _index_orders(d_block.op)
        mine = _index_orders(sch._block(block))
    order = {name: k for k, name in enumerate(info.lhs_iters)}
    perm = [order[m] for m in _outputs(info.mappings[0])]  # desc iter -> block iter
    reads, writes = sch.get_block_buffers(block)
    for kind, names in (("read", reads), ("write", writes)):
        for i, name in enumerate(names):
            t, d = mine.get(name), desc_order.get(info.lhs_buffer_map.get(name, ""))
            if t is None or d is None or None in t or None in d:
                continue
            want = [perm[p] for p in d]
            if want == t or sorted(want) != sorted(t):
                continue
            vs = [f"v{k}" for k in range(len(t))]
            sch.transform_layout(
                block,
                (kind, i),
                f"lambda {', '.join(vs)}: ({', '.join(vs[t.index(p)] for p in want)})",
            )


def _outputs(mapping: str) -> List[str]:
    return [
        o.strip() for o in mapping.partition(":")[2].strip().strip("()").split(",") if o.strip()
    ]
