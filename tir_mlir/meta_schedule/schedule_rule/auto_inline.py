"""AutoInline: inline elementwise blocks into their consumers (or producers), so the
tiling rules see one compute block per reduction (TVM's AutoInline).

A block is inlined into its consumers when it is spatial only and does not write a function
parameter; compute_inline itself checks the rest (single store, injective indices) and the
rule leaves the block alone when it refuses.
"""
from typing import List

from tir_mlir.errors import ScheduleError
from tir_mlir.meta_schedule.schedule_rule.schedule_rule import ScheduleRule


class AutoInline(ScheduleRule):
    def __init__(self, into_producer: bool = False, into_consumer: bool = True,
                 inline_const_tensor: bool = True, disallow_if_then_else: bool = True,
                 require_injective: bool = True, require_ordered: bool = True,
                 disallow_op=None):
        self.into_producer = into_producer
        self.into_consumer = into_consumer
        self.inline_const_tensor = inline_const_tensor
        self.disallow_if_then_else = disallow_if_then_else
        self.require_injective = require_injective
        self.require_ordered = require_ordered
        self.disallow_op = list(disallow_op or [])

    def apply(self, sch, block) -> List:
        if "R" in sch.get_iter_types(block) or not sch.is_top_level_block(block):
            return [sch]
        if self.into_consumer and not sch.is_output_block(block) and sch.get_consumers(block):
            try:
                sch.compute_inline(block)
                return [sch]
            except ScheduleError:
                pass
        if self.into_producer and sch.get_producers(block):
            try:
                sch.reverse_compute_inline(block)
            except ScheduleError:
                pass
        return [sch]
