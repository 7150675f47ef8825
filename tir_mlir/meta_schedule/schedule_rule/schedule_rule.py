"""The schedule rule interface: `apply(sch, block) -> list of schedules`.

A rule is any callable `(sch, block) -> list[Schedule]` (return `[sch]` to leave the block
alone, several schedules to branch the design space). Classes derive from ScheduleRule to
also see the tuning context (target, cores) before use.
"""
import copy
from typing import Callable, List


class ScheduleRule:
    target = None

    def initialize_with_tune_context(self, context) -> None:
        self.target = context.target

    def apply(self, sch, block) -> List:
        raise NotImplementedError

    def __call__(self, sch, block) -> List:
        return self.apply(sch, block)

    def clone(self) -> "ScheduleRule":
        return copy.deepcopy(self)


class PyScheduleRule(ScheduleRule):
    """A plain function used as a rule (TVM's PyScheduleRule / derived_object)."""

    def __init__(self, fn: Callable):
        self.fn = fn

    def apply(self, sch, block) -> List:
        return list(self.fn(sch, block))


def as_rule(rule) -> ScheduleRule:
    if isinstance(rule, ScheduleRule):
        return rule
    if callable(rule):
        return PyScheduleRule(rule)
    raise TypeError(f"a schedule rule must be a ScheduleRule or a callable (sch, block) -> "
                    f"list of schedules, got {type(rule).__name__}")
