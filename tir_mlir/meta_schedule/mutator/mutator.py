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


def insts_named(trace, name: str):
    return [inst for inst in trace.without_postproc().insts if inst.name == name]
