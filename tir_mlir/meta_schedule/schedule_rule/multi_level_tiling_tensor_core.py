"""MultiLevelTilingTensorCore: TVM 0.21's rule that puts a matmul-like block on tensor cores
(WMMA, 16x16x16 fragments).

For each intrinsic group (`init`, `load_a`, `load_b`, `compute`, `store`: TVM's
`get_wmma_intrin_group` dicts) whose `compute` desc the block computes
(`get_auto_tensorize_mapping_info`), one sketch, built by TVM's sub-rules in TVM's order:

1. TransformForTensorization: the output and both inputs are `reindex`ed (buffers indexed
   by the block's iter vars); each reindexed buffer is laid out as the desc indexes its
   buffer (`transform_layout` by the sub-map of the mapping: B is [k, j] for the
   non-transposed intrinsic, a convolution's input [n*h*w, rh*rw*ci]), the reindex blocks and
   the block follow (`transform_block_layout`); the inner 16x16x16 loops are `blockize`d and
   the outer block marked `meta_schedule.auto_tensorize` = compute,
   `meta_schedule.auto_tensorize_init` = init and `warp_execution`;
2. TileLoopNest: the two innermost spatial loops and the reduction loops tiled as
   MultiLevelTiling tiles them ("SSSRRSRS"; outer spatial loops, a batch, join the first
   level), the first levels fused and bound to `tile_binds` (blocks and warps);
3. TransformIntermediateOutputLayout: the accumulator laid out per warp,
   [..., warp_m, warp_n, frag_m, frag_n, 16, 16], by a map over the sampled tile sizes (a
   SampledMap: the trace keeps the sizes' handles, as TVM's keeps its ExprRVs);
4. AddWriteReuse + AddWriteReuseTensorCore: the result goes through a `reuse_write.scope`
   cache under tiling level `reuse_write.levels[0]`, then a `wmma.accumulator` cache computed
   under that cache's fragment-row loop (the rows written back one at a time), its warp
   loops fused and bound to threadIdx.y and its 16x16 tiles blockized and marked with the
   store intrinsic; the reindex store is inlined into the shared write-back, whose loops are
   fused and marked `meta_schedule.cooperative_fetch` (a vector length the dtype allows);
5. AddReadReuse + AddReadReuseTensorCore: each input is cached in `reuse_read.scope` at
   tiling level `reuse_read.levels[0]` (fused, cooperative fetch), then in
   `wmma.matrix_a/b` under the second reduction level, whose tiles are blockized and marked
   with the load intrinsics; the reindex copies are inlined into the shared fetches and the
   shared rows padded (`storage_align`: 8 halves per 32 for fp16, 16 bytes for int8);
6. AddSoftwarePipeline (`use_software_pipeline`): the shared fetches get a local stage and
   double buffering, the two reduction loops TVM's pipeline stages and orders.

The postprocessors finish it: RewriteCooperativeFetch binds the fetches to the threads,
RewriteReductionBlock splits the init off (marked with the init intrinsic),
RewriteTensorize tensorizes every marked block. A block no group computes is returned
unchanged for the other rules.
"""

from typing import Dict, List, Optional, Sequence

from tir_mlir.analysis import buffer_util
from tir_mlir.context import get_context
from tir_mlir.dialect.ops import Block, Loop
from tir_mlir.errors import ScheduleError
from tir_mlir.meta_schedule.schedule_rule.multi_level_tiling import (
    MultiLevelTiling,
    write_dtype,
    write_type,
)
from tir_mlir.meta_schedule.schedule_rule.multi_level_tiling_with_intrin import AUTO_TENSORIZE
from tir_mlir.schedule.analysis import _desc_module, _desc_nest, get_auto_tensorize_mapping_info
from tir_mlir.schedule.handles import ExprRV
from tir_mlir.schedule.sampled_map import SampledMap
from tir_mlir.schedule.tensor_intrin import TensorIntrin
from tir_mlir.schedule.transform import tile_with_tensor_intrin

AUTO_TENSORIZE_INIT = "meta_schedule.auto_tensorize_init"
GROUP_KEYS = ("init", "load_a", "load_b", "compute", "store")


class _State:
    """One sketch in the making (TVM's TensorCoreState)."""

    def __init__(self, sch, block, group: Dict[str, str]):
        self.sch, self.block, self.group = sch, block, group
        self.tiles: List[list] = []
        self.factors: List[list] = []
        self.store = self.read_a = self.read_b = None  # the reindex blocks
        self.write_cache = None
        self.read_caches: List = []


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
        self.s_levels = [k for k, c in enumerate(self.structure) if c == "S"]
        self.r_levels = [k for k, c in enumerate(self.structure) if c == "R"]

    def apply(self, sch, block) -> List:
        if not sch.is_top_level_block(block) or not self.needs_tiling(sch, block):
            return [sch]
        reads, writes = sch.get_block_buffers(block)
        if len(reads) != 2 or len(writes) != 1:  # matmul-like blocks only (TVM's)
            return [sch]
        groups = [
            g
            for g in self.intrin_groups
            if get_auto_tensorize_mapping_info(sch, block, g["compute"]) is not None
        ]
        out = []
        for group in groups:
            s = sch.copy()
            s.annotate(block, "meta_schedule.tiling_structure", self.structure)
            try:
                state = self._sketch(_State(s, block, group))
            except ScheduleError:
                continue  # this group's sketch does not fit the block
            if state is not None:
                out.append(state.sch)
        return out or [sch]

    def _sketch(self, st: _State) -> Optional[_State]:
        if not self._transform_for_tensorization(st):
            return None
        self._tile_loop_nest(st)
        self._transform_intermediate_output_layout(st)
        self._add_write_reuse(st)
        self._add_write_reuse_tensor_core(st)
        self._add_read_reuse(st)
        self._add_read_reuse_tensor_core(st)
        self._add_software_pipeline(st)
        return st

    # --- 1. reindex, lay out as the desc, blockize -------------------------------------------
    def _transform_for_tensorization(self, st: _State) -> bool:
        sch, block, group = st.sch, st.block, st.group
        st.store = sch.reindex(block, ("write", 0))
        st.read_a = sch.reindex(block, ("read", 0))
        st.read_b = sch.reindex(block, ("read", 1))
        info = get_auto_tensorize_mapping_info(sch, block, group["compute"])
        if info is None:
            return False
        maps = _sub_index_maps(sch, block, info, group["compute"])
        if maps is None:
            return False
        reads, writes = sch.get_block_buffers(block)
        for kind, names in (("read", reads), ("write", writes)):
            for i, name in enumerate(names):
                sch.transform_layout(block, (kind, i), maps[name], assume_injective_transform=True)
        copies = ((st.store, writes[0]), (st.read_a, reads[0]), (st.read_b, reads[1]))
        for copy, name in copies:
            sch.transform_block_layout(copy, maps[name])
        sch.transform_block_layout(block, info.mappings[0])
        # (a block the intrinsic's shape does not divide is padded: pad_einsum)
        loop = tile_with_tensor_intrin(sch, block, group["compute"], allow_padding=True)
        if loop is None:
            return False
        st.block = sch.blockize(loop)
        sch.annotate(st.block, AUTO_TENSORIZE, group["compute"])
        sch.annotate(st.block, AUTO_TENSORIZE_INIT, group["init"])
        sch.annotate(st.block, "warp_execution", 1)
        return True

    # --- 2. tiles ----------------------------------------------------------------------------
    def _tile_loop_nest(self, st: _State) -> None:
        """MultiLevelTiling's tiles of the two innermost spatial loops and the reduction
        loops (TVM's TileLoopNest(state, 2)); outer spatial loops join the first level."""
        sch, block = st.sch, st.block
        loops = sch.get_loops(block)
        types = sch.get_iter_types(block)
        n_spatial = sum(1 for t in types if t == "S")
        skip = n_spatial - 2
        tiles: List[list] = [[] for _ in self.structure]
        factors: List[list] = [[] for _ in self.structure]
        skipped = []
        for loop, kind in zip(loops, types):
            if kind == "S" and skip > 0:
                skipped.append(loop)
                skip -= 1
                continue
            levels = self.s_levels if kind == "S" else self.r_levels
            if len(levels) == 1:
                tiles[levels[0]].append(loop)
                continue
            fs = sch.sample_perfect_tile(
                loop, n=len(levels), max_innermost_factor=self.max_innermost_factor
            )
            for level, part, f in zip(levels, sch.split(loop, fs), fs):
                tiles[level].append(part)
                factors[level].append(f)
        sch.reorder(*[lp for level in tiles for lp in level])
        if skipped and self.tile_binds:
            tiles[0] = skipped + tiles[0]
        for k, axis in enumerate(self.tile_binds[: len(tiles)]):
            fused = sch.fuse(*tiles[k])
            sch.bind(fused, axis)
            tiles[k] = [fused]
        st.tiles, st.factors = tiles, factors

    # --- 3. the accumulator per warp ---------------------------------------------------------
    def _transform_intermediate_output_layout(self, st: _State) -> None:
        sch = st.sch
        frag_m, frag_n = _init_fragment(st.group["init"])
        warp = self.tile_binds.index("threadIdx.y")
        inner = [self.s_levels[i] for i in range(warp + 1, len(self.s_levels))]
        values: Dict[str, ExprRV] = {}

        def product(pos: int) -> str:
            names = []
            for level in inner:
                rv = st.factors[level][pos]
                values[rv.trace_name] = rv
                names.append(rv.trace_name)
            return names[0] if len(names) == 1 else "(" + " * ".join(names) + ")"

        warp_m, warp_n = product(-2), product(-1)
        ndim = _write_rank(sch, st.block)
        idx = [f"i{k}" for k in range(ndim)]
        m, n = idx[-2], idx[-1]
        outs = idx[:-2] + [
            f"{m} // {frag_m} // {warp_m}",
            f"{n} // {frag_n} // {warp_n}",
            f"{m} // {frag_m} % {warp_m}",
            f"{n} // {frag_n} % {warp_n}",
            f"{m} % {frag_m}",
            f"{n} % {frag_n}",
        ]
        index_map = SampledMap(f"lambda {', '.join(idx)}: ({', '.join(outs)})", values)
        sch.transform_layout(st.block, ("write", 0), index_map, assume_injective_transform=True)

    # --- 4. write reuse ----------------------------------------------------------------------
    def _add_write_reuse(self, st: _State) -> None:
        cfg = self.reuse_write
        level = cfg.levels[0] if cfg.levels else 2
        st.write_cache = st.sch.cache_write(st.block, 0, cfg.scope)
        st.sch.reverse_compute_at(st.write_cache, st.tiles[level - 1][-1], preserve_unit_loops=True)

    def _add_write_reuse_tensor_core(self, st: _State) -> None:
        """The accumulators written back one row of fragments at a time (TVM's comment: the
        shared cache then holds one row, not the whole block tile)."""
        sch = st.sch
        acc = sch.cache_write(st.block, 0, "wmma.accumulator")
        i0, j0, i1, j1 = sch.get_loops(st.write_cache)[-6:-2]
        sch.reorder(i1, i0, j0, j1)
        sch.compute_at(acc, i1, preserve_unit_loops=True)
        a_i0, a_j0 = sch.get_loops(acc)[-6:-4]
        sch.bind(sch.fuse(a_i0, a_j0), "threadIdx.y")
        sch.reverse_compute_inline(st.store)
        store = sch.blockize(sch.get_loops(acc)[-2])
        sch.annotate(store, AUTO_TENSORIZE, st.group["store"])
        sch.fuse(*sch.get_loops(st.write_cache)[-5:])
        self._cooperative_fetch(sch, st.write_cache)

    # --- 5. read reuse -----------------------------------------------------------------------
    def _add_read_reuse(self, st: _State) -> None:
        cfg = self.reuse_read
        if cfg.req == "no":
            return
        sch = st.sch
        level = cfg.levels[0] if cfg.levels else self.r_levels[0] + 1
        for k in range(2):
            cache = sch.cache_read(st.block, k, cfg.scope, consumer_blocks=[st.block])
            sch.compute_at(cache, st.tiles[level - 1][-1], preserve_unit_loops=True)
            ndim = _write_rank(sch, cache)
            sch.fuse(*sch.get_loops(cache)[-ndim:])
            self._cooperative_fetch(sch, cache)
            st.read_caches.append(cache)

    def _add_read_reuse_tensor_core(self, st: _State) -> None:
        sch = st.sch
        r_tiles = st.tiles[self.r_levels[1]]
        for k, (scope, intrin) in enumerate(
            (("wmma.matrix_a", st.group["load_a"]), ("wmma.matrix_b", st.group["load_b"]))
        ):
            frag = sch.cache_read(st.block, k, scope)
            sch.compute_at(frag, r_tiles[-1], preserve_unit_loops=True)
            loop = tile_with_tensor_intrin(sch, frag, intrin)
            if loop is None:
                raise ScheduleError(f"a fragment copy does not match the intrinsic {intrin}")
            sch.annotate(sch.blockize(loop), AUTO_TENSORIZE, intrin)
        for cache in st.read_caches:
            sch.compute_inline(sch.get_producers(cache)[0])  # the reindex (or padding) copy
            dtype = write_dtype(sch, cache)
            if dtype == "float16":
                sch.storage_align(cache, 0, -2, 32, 8)
            elif dtype == "int8":
                sch.storage_align(cache, 0, -2, 32, 16)

    # --- 6. software pipeline ----------------------------------------------------------------
    def _add_software_pipeline(self, st: _State) -> None:
        if not self.use_software_pipeline or len(self.r_levels) < 2 or not st.read_caches:
            return
        sch = st.sch
        length = 1
        for level in self.r_levels:
            for loop in st.tiles[level]:
                length *= sch.get(loop).extent
        if length <= 1:
            return
        for cache in st.read_caches:
            sch.annotate(cache, "tir.manifest_shared_memory_local_stage", 1)
            sch.annotate(cache, "double_buffer_scope", 0)
        inner = st.tiles[self.r_levels[1]][-1]
        sch.annotate(inner, "software_pipeline_stage", [0, 0, 1])
        sch.annotate(inner, "software_pipeline_order", [0, 1, 2])
        outer = st.tiles[self.r_levels[0]][-1]
        sch.annotate(outer, "software_pipeline_stage", [0, 0, 0, 0, 0, 1, 1])
        sch.annotate(outer, "software_pipeline_order", [0, 3, 1, 4, 5, 2, 6])


def _write_rank(sch, block) -> int:
    return write_type(sch, block).rank


def _init_fragment(init: str) -> tuple:
    """The (m, n) extents of the init intrinsic's two loops: the accumulator fragment."""
    with get_context():
        _, loops = _desc_nest(_desc_module(init))
        ext = [Loop(lp).extent for lp in loops]
    return ext[0], ext[1]


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


def _sub_index_maps(sch, block, info, desc_name: str) -> Optional[Dict[str, str]]:
    """Per reindexed buffer of the block, the map from its indices (the block's iter vars it
    is indexed by) to the desc buffer's indices under the mapping (TVM's sub index map): the
    mapping's unmapped iter vars kept first, then, per desc index, the mapping's expression
    of that desc iter var."""
    with get_context():
        d_block, _ = _desc_nest(_desc_module(desc_name))
        desc_order = _index_orders(d_block.op)
        mine = _index_orders(sch._block(block))
    names = info.lhs_iters
    outs = _outputs(info.mappings[0])
    offset = len(outs) - len(info.rhs_iters)
    unmapped = set(outs[:offset])
    maps = {}
    for buf, pos in mine.items():
        d = desc_order.get(info.lhs_buffer_map.get(buf, ""))
        if d is None or None in pos or None in d:
            return None
        params = [names[p] for p in pos if p is not None]
        targets = [p for p in params if p in unmapped]
        targets += [outs[offset + k] for k in d if k is not None]
        maps[buf] = f"lambda {', '.join(params)}: ({', '.join(targets)},)"
    return maps


def _outputs(mapping: str) -> List[str]:
    return [
        o.strip() for o in mapping.partition(":")[2].strip().strip("()").split(",") if o.strip()
    ]
