"""The mutator interface: `apply(trace, rand_state=-1) -> new trace or None` changes one decision of
a sampling instruction (the trace without its postprocessing part is returned; the search
replays it and runs the postprocessors again)."""

import copy
import random


class Mutator:
    target = None

    def initialize_with_tune_context(self, context) -> None:
        self.target = context.target

    def apply(self, trace, rand_state=-1):
        """`rand_state`: a random.Random (the search's), a seed, or -1 for a fresh one
        (TVM's parameter)."""
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


def as_rng(rand_state) -> random.Random:
    """The random generator of TVM's `rand_state` argument (a seed, -1: any)."""
    if isinstance(rand_state, random.Random):
        return rand_state
    return random.Random(None if rand_state is None or rand_state < 0 else rand_state)


def insts_named(trace, name: str):
    return [inst for inst in trace.without_postproc().insts if inst.name == name]
