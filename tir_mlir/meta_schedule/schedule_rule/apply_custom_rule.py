"""ApplyCustomRule (TVM 0.21's): a block annotated `schedule_rule` = NAME is scheduled by the
function registered (`tir_mlir.register_func` / `tvm.register_func` after
`import tir_mlir.tvm as tvm`) as `meta_schedule.<key>.NAME`, for the first of the target's
keys that has one ("cpu" for llvm; "cuda", "gpu" for cuda). The function is called as
`fn(sch, block)` and returns the list of schedules, as a rule does. An unknown NAME is
warned about and the annotation removed (the block is then left alone); NAME "None" leaves
the block alone. PostOrderApply applies no other rule to an annotated block."""

import logging

from tir_mlir.meta_schedule.schedule_rule.schedule_rule import ScheduleRule
from tir_mlir.runtime.packed import get_global_func

log = logging.getLogger("tir_mlir.meta_schedule")
ANNOTATION = "schedule_rule"


class ApplyCustomRule(ScheduleRule):
    def apply(self, sch, block) -> list:
        if self.target is None:
            raise ValueError(
                "ApplyCustomRule is not initialized with TuneContext that has a Target."
            )
        name = sch.get_annotations(block).get(ANNOTATION)
        if name is None or name == "None":
            return [sch]
        keys = self.target.keys
        for key in keys:
            fn = get_global_func(f"meta_schedule.{key}.{name}", allow_missing=True)
            if fn is not None:
                return list(fn(sch, block))
        log.warning(
            'Unknown schedule rule "%s" for target keys %s. Checked functions:%s',
            name,
            keys,
            "".join(f"\n  meta_schedule.{k}.{name}" for k in keys),
        )
        sch.unannotate(block, ANNOTATION)
        return [sch]


def has_custom_rule(sch, block) -> bool:
    """Whether the block is left to ApplyCustomRule (any `schedule_rule` annotation)."""
    return ANNOTATION in sch.get_annotations(block)
