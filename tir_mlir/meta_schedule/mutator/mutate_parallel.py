"""MutateParallel: change the max parallel extent a block is annotated with
(meta_schedule.parallel), to a multiple of the cores between 1 and 4x the rule's value."""

from tir_mlir.meta_schedule.mutator.mutator import Mutator, as_rng, insts_named
from tir_mlir.schedule.trace import Instruction, Trace


class MutateParallel(Mutator):
    def __init__(self, max_jobs_per_core: int = 16):
        self.max_jobs_per_core = max_jobs_per_core

    def apply(self, trace, rand_state=-1):
        rng = as_rng(rand_state)
        cands = [
            i
            for i in insts_named(trace, "annotate")
            if i.args["ann_key"] == "meta_schedule.parallel"
        ]
        if not cands:
            return None
        inst = rng.choice(cands)
        cores = self.target.num_cores if self.target is not None else 1
        options = [cores * j for j in (1, 2, 4, 8, 16, 32, 64) if j <= 4 * self.max_jobs_per_core]
        options = [o for o in options if o != inst.args["ann_val"]]
        insts = list(trace.without_postproc().insts)
        k = next(n for n, x in enumerate(insts) if x is inst)
        insts[k] = Instruction(
            inst.name, {**inst.args, "ann_val": rng.choice(options)}, inst.outputs
        )
        return Trace(insts)
