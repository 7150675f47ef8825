"""MutateComputeLocation: move a block sampled by sample_compute_location to another of its
possible locations (found by replaying the trace up to that instruction): a loop, the root
(-1), or inlined into its consumers (-2) when compute_inline accepts it (TVM's candidates)."""

from typing import List

from tir_mlir.errors import ScheduleError
from tir_mlir.meta_schedule.mutator.mutator import Mutator, as_rng, insts_named
from tir_mlir.schedule.trace import Trace


class MutateComputeLocation(Mutator):
    def __init__(self):
        self.mod = None

    def initialize_with_tune_context(self, context) -> None:
        super().initialize_with_tune_context(context)
        self.mod = context.mod

    def apply(self, trace, rand_state=-1):
        rng = as_rng(rand_state)
        from tir_mlir.schedule.schedule import Schedule

        cands = insts_named(trace, "sample_compute_location")
        if not cands or self.mod is None:
            return None
        inst = rng.choice(cands)
        k = trace.insts.index(inst)
        sch = Schedule(self.mod)
        try:
            Trace(trace.insts[:k]).apply_to_schedule(sch, trusted=True)
            choices = _locations(sch, trace.insts[:k], inst)
        except ScheduleError:
            return None
        choices = [d for d in choices if d != inst.args["decision"]]
        if not choices:
            return None
        return trace.with_decision(inst, rng.choice(choices), remove_postproc=True)


def _locations(sch, prefix, inst) -> List[int]:
    """The decisions sample_compute_location can take for the block of `inst` in the
    replayed schedule (TVM's candidates: inline, the root, loops)."""
    name = inst.args["block"].name
    for i in prefix:
        outs = i.output_list()
        if any(o.name == name for o in outs) and i.name == "get_block":
            block = sch.get_block(i.args["name"], i.args["func_name"])
            return sch.compute_location_decisions(block)
    return []  # a block made by a primitive: leave its location alone
