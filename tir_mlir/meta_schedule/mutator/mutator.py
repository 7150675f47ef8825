"""The mutator interface: `apply(trace, rng) -> new trace or None` changes one decision of
a sampling instruction (the trace without its postprocessing part is returned; the search
replays it and runs the postprocessors again)."""
import copy


class Mutator:
    target = None

    def initialize_with_tune_context(self, context) -> None:
        self.target = context.target

    def apply(self, trace, rng):
        raise NotImplementedError

    def clone(self) -> "Mutator":
        return copy.deepcopy(self)


class PyMutator(Mutator):
    """The class a TVM user's mutator derives from (with `@derived_object`): it overrides
    `apply(trace, rand_state) -> Trace or None` (`rand_state` is a `random.Random` here)
    and optionally `_initialize_with_tune_context`."""
    _py_interface = True

    def initialize_with_tune_context(self, context) -> None:
        super().initialize_with_tune_context(context)
        self._initialize_with_tune_context(context)

    def _initialize_with_tune_context(self, context) -> None:
        pass


def insts_named(trace, name: str):
    return [inst for inst in trace.without_postproc().insts if inst.name == name]
