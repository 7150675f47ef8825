"""InlineConstantScalars: inline a block that only stores a constant into a 0-d buffer
(what a graph importer emits for a scalar constant: `compile_engine_const[()] = 59`), so
that its consumers read the constant itself and can be inlined in turn (TVM's rule of the
same name). An output block (one writing a function parameter) is kept.
"""

from typing import List

from tir_mlir.meta_schedule.schedule_rule.schedule_rule import ScheduleRule


class InlineConstantScalars(ScheduleRule):
    def apply(self, sch, block) -> List:
        view = sch.get(block)
        writes = list(view.writes)
        if (
            not list(view.reads)
            and len(writes) == 1
            and writes[0].endswith("[()]")
            and not sch.is_output_block(block)
        ):
            sch.compute_inline(block)
        return [sch]
