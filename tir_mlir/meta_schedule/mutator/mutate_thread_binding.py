"""MutateThreadBinding (TVM's): pick another candidate of a sample_categorical that sets a
thread count: the factor of a split whose inner loop is bound to threadIdx.x (AutoBind's and
CrossThreadReduction's sampled thread extents)."""

from tir_mlir.meta_schedule.mutator.mutator import Mutator, as_rng, insts_named
from tir_mlir.schedule.handles import ExprRV


class MutateThreadBinding(Mutator):
    def apply(self, trace, rand_state=-1):
        rng = as_rng(rand_state)
        bound = {
            i.args["loop"].name
            for i in insts_named(trace, "bind")
            if i.args.get("thread_axis") == "threadIdx.x"
        }
        factors = set()
        for split in insts_named(trace, "split"):
            outs = split.output_list()
            last = split.args["factors"][-1] if split.args["factors"] else None
            if outs and outs[-1].name in bound and isinstance(last, ExprRV):
                factors.add(last.name)
        cands = [
            i
            for i in insts_named(trace, "sample_categorical")
            if i.outputs is not None and i.outputs.name in factors and len(i.args["candidates"]) > 1
        ]
        if not cands:
            return None
        inst = rng.choice(cands)
        old = inst.args["decision"]
        new = rng.choice([k for k in range(len(inst.args["candidates"])) if k != old])
        return trace.with_decision(inst, new, remove_postproc=True)
