"""MutateUnroll: pick another candidate of the sample_categorical that sets a block's max
unroll step (meta_schedule.unroll_explicit / _implicit)."""

from tir_mlir.meta_schedule.mutator.mutator import Mutator, as_rng, insts_named


class MutateUnroll(Mutator):
    def apply(self, trace, rand_state=-1):
        rng = as_rng(rand_state)
        unroll_vars = {
            i.args["ann_val"].name
            for i in insts_named(trace, "annotate")
            if str(i.args["ann_key"]).startswith("meta_schedule.unroll")
            and hasattr(i.args["ann_val"], "name")
        }
        cands = [
            i
            for i in insts_named(trace, "sample_categorical")
            if i.outputs is not None
            and i.outputs.name in unroll_vars
            and len(i.args["candidates"]) > 1
        ]
        if not cands:
            return None
        inst = rng.choice(cands)
        old = inst.args["decision"]
        new = rng.choice([k for k in range(len(inst.args["candidates"])) if k != old])
        return trace.with_decision(inst, new, remove_postproc=True)
