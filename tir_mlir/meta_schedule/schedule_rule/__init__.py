"""Schedule rules: what PostOrderApply applies to every block to build a design space."""

from tir_mlir.meta_schedule.schedule_rule.add_rfactor import AddRFactor
from tir_mlir.meta_schedule.schedule_rule.apply_custom_rule import ApplyCustomRule
from tir_mlir.meta_schedule.schedule_rule.auto_bind import AutoBind
from tir_mlir.meta_schedule.schedule_rule.auto_inline import AutoInline
from tir_mlir.meta_schedule.schedule_rule.cross_thread_reduction import CrossThreadReduction
from tir_mlir.meta_schedule.schedule_rule.inline_constant_scalars import InlineConstantScalars
from tir_mlir.meta_schedule.schedule_rule.multi_level_tiling import MultiLevelTiling, ReuseConfig
from tir_mlir.meta_schedule.schedule_rule.multi_level_tiling_tensor_core import (
    MultiLevelTilingTensorCore,
)
from tir_mlir.meta_schedule.schedule_rule.multi_level_tiling_with_intrin import (
    MultiLevelTilingWithIntrin,
)
from tir_mlir.meta_schedule.schedule_rule.parallel_vectorize_unroll import (
    ParallelizeVectorizeUnroll,
)
from tir_mlir.meta_schedule.schedule_rule.random_compute_location import RandomComputeLocation
from tir_mlir.meta_schedule.schedule_rule.schedule_rule import PyScheduleRule, ScheduleRule, as_rule
from tir_mlir.meta_schedule.schedule_rule.defaults import create

__all__ = [
    "AddRFactor",
    "ApplyCustomRule",
    "AutoBind",
    "AutoInline",
    "CrossThreadReduction",
    "InlineConstantScalars",
    "MultiLevelTiling",
    "MultiLevelTilingTensorCore",
    "MultiLevelTilingWithIntrin",
    "ReuseConfig",
    "ParallelizeVectorizeUnroll",
    "RandomComputeLocation",
    "ScheduleRule",
    "PyScheduleRule",
    "as_rule",
    "create",
]
