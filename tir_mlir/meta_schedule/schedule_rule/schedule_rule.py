"""The schedule rule interface: `apply(sch, block) -> list of schedules`.

A rule is any callable `(sch, block) -> list[Schedule]` (return `[sch]` to leave the block
alone, several schedules to branch the design space). Classes derive from ScheduleRule to
also see the tuning context (target, cores) before use.
"""

import copy
from typing import Callable, List, Optional


class ScheduleRule:
    target = None
    # PostOrderApply also visits each function's root block (`get_block("root")`, after its
    # blocks, as TVM does) with the rules that set this: the others never see the root.
    visits_root = False

    def initialize_with_tune_context(self, context) -> None:
        self.target = context.target

    def apply(self, sch, block) -> List:
        raise NotImplementedError

    def __call__(self, sch, block) -> List:
        return self.apply(sch, block)

    def clone(self) -> "ScheduleRule":
        return copy.deepcopy(self)


class PyScheduleRule(ScheduleRule):
    """A rule written in Python, as TVM users write one: a subclass (with `@derived_object`)
    overriding `apply` and optionally `_initialize_with_tune_context` (TVM's name), or a
    plain function `PyScheduleRule(fn)` (what `as_rule` makes of one)."""

    _py_interface = True

    def __init__(self, fn: Optional[Callable] = None):
        self.fn = fn

    def initialize_with_tune_context(self, context) -> None:
        super().initialize_with_tune_context(context)
        self._initialize_with_tune_context(context)

    def _initialize_with_tune_context(self, context) -> None:
        pass

    def apply(self, sch, block) -> List:
        if self.fn is None:
            raise NotImplementedError(f"{type(self).__name__} does not override apply")
        return self.fn(sch, block)


def as_rule(rule) -> ScheduleRule:
    if isinstance(rule, ScheduleRule):
        return rule
    if callable(rule):
        return PyScheduleRule(rule)
    raise TypeError(
        f"a schedule rule must be a ScheduleRule or a callable (sch, block) -> "
        f"list of schedules, got {type(rule).__name__}"
    )
