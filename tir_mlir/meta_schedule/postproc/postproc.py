"""The postprocessor interface: `apply(sch) -> bool`, run on every sampled candidate after
`sch.enter_postproc()`. False (or a ScheduleError) rejects the candidate: the search drops
it and counts it, it never stops the tuning."""

import copy


class Postproc:
    target = None

    def initialize_with_tune_context(self, context) -> None:
        self.target = context.target

    def apply(self, sch) -> bool:
        raise NotImplementedError

    def clone(self) -> "Postproc":
        return copy.deepcopy(self)


class PyPostproc(Postproc):
    """The class a TVM user's postprocessor derives from (with `@derived_object`): it
    overrides `apply(sch) -> bool` and optionally `_initialize_with_tune_context`."""

    _py_interface = True

    def initialize_with_tune_context(self, context) -> None:
        super().initialize_with_tune_context(context)
        self._initialize_with_tune_context(context)

    def _initialize_with_tune_context(self, context) -> None:
        pass


def blocks(sch):
    """(func, block name) of every block of the schedule's module, in program order."""
    return [(f, n) for f in list(sch.mod.functions) for n in sch.get_block_names(f)]
