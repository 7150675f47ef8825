"""The default rules per target kind (TVM 0.21's "from-target" lists for llvm and cuda, and
its "cuda-tensorcore" list: the tensor-core rule before the cuda rules)."""

from typing import List

from tir_mlir.meta_schedule.schedule_rule.add_rfactor import AddRFactor
from tir_mlir.meta_schedule.schedule_rule.apply_custom_rule import ApplyCustomRule
from tir_mlir.meta_schedule.schedule_rule.auto_bind import AutoBind
from tir_mlir.meta_schedule.schedule_rule.auto_inline import AutoInline
from tir_mlir.meta_schedule.schedule_rule.cross_thread_reduction import CrossThreadReduction
from tir_mlir.meta_schedule.schedule_rule.inline_constant_scalars import InlineConstantScalars
from tir_mlir.intrinsics.cuda import get_wmma_intrin_group
from tir_mlir.meta_schedule.schedule_rule.multi_level_tiling import MultiLevelTiling, ReuseConfig
from tir_mlir.meta_schedule.schedule_rule.multi_level_tiling_tensor_core import (
    MultiLevelTilingTensorCore,
)
from tir_mlir.meta_schedule.schedule_rule.parallel_vectorize_unroll import (
    ParallelizeVectorizeUnroll,
)
from tir_mlir.meta_schedule.schedule_rule.random_compute_location import RandomComputeLocation


def create(kind: str = "llvm") -> List:
    if kind == "llvm":
        return [
            ApplyCustomRule(),
            InlineConstantScalars(),
            AutoInline(into_producer=False, into_consumer=True, disallow_op=["tir.exp"]),
            AddRFactor(max_jobs_per_core=16, max_innermost_factor=64),
            MultiLevelTiling(
                structure="SSRSRS",
                max_innermost_factor=64,
                reuse_write=ReuseConfig(req="may", levels=[1, 2], scope="global"),
                whole_reduction_tile=True,
            ),
            ParallelizeVectorizeUnroll(
                max_jobs_per_core=16,
                max_vectorize_extent=64,
                unroll_max_steps=[0, 16, 64, 512],
                unroll_explicit=True,
            ),
            RandomComputeLocation(),
        ]
    if kind == "cuda":
        return [
            ApplyCustomRule(),
            InlineConstantScalars(),
            AutoInline(
                into_producer=True,
                into_consumer=True,
                disallow_if_then_else=False,
                require_injective=False,
                require_ordered=False,
            ),
            MultiLevelTiling(
                structure="SSSRRSRS",
                tile_binds=["blockIdx.x", "vthread.x", "threadIdx.x"],
                max_innermost_factor=64,
                vector_load_lens=[1, 2, 3, 4, 8, 16],
                reuse_read=ReuseConfig(req="must", levels=[4], scope="shared"),
                reuse_write=ReuseConfig(req="must", levels=[3], scope="local"),
            ),
            CrossThreadReduction(thread_extents=[4, 8, 16, 32, 64, 128, 256, 512]),
            ParallelizeVectorizeUnroll(
                max_jobs_per_core=-1,
                max_vectorize_extent=-1,
                unroll_max_steps=[0, 16, 64, 512, 1024],
                unroll_explicit=True,
            ),
            AutoBind(max_threadblocks=256, thread_extents=[32, 64, 128, 256, 512, 1024]),
        ]
    if kind == "cuda-tensorcore":
        groups = [
            get_wmma_intrin_group("shared.dyn", "shared.dyn", "float16", "float32", trans_b)
            for trans_b in (False, True)
        ]
        cuda = create("cuda")
        return [
            *cuda[:3],  # ApplyCustomRule, InlineConstantScalars, AutoInline
            MultiLevelTilingTensorCore(
                intrin_groups=groups,
                structure="SSSRRSRS",
                tile_binds=["blockIdx.y", "blockIdx.x", "threadIdx.y"],
                max_innermost_factor=4,
                vector_load_lens=[1, 2, 3, 4, 8, 16],
                reuse_read=ReuseConfig(req="must", levels=[4], scope="shared.dyn"),
                reuse_write=ReuseConfig(req="must", levels=[2], scope="shared.dyn"),
                use_software_pipeline=False,
            ),
            *cuda[3:],
        ]
    raise ValueError(f"no default schedule rules for target kind {kind!r}")
