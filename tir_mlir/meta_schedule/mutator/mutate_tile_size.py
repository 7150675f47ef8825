"""MutateTileSize: move a prime factor between two parts of a sampled perfect tile (the
product stays the loop extent; the innermost part stays within its maximum); for the tile of
a loop over a symbolic extent, draw another constant for one of its sampled factors."""

from tir_mlir.meta_schedule.mutator.mutator import Mutator, as_rng, insts_named
from tir_mlir.passes.schedule.sample_perfect_tile import divisors


class MutateTileSize(Mutator):
    def apply(self, trace, rand_state=-1):
        rng = as_rng(rand_state)
        cands = [
            i
            for i in insts_named(trace, "sample_perfect_tile")
            if len(i.args["decision"]) > 1 and any(f > 1 for f in i.args["decision"])
        ]
        factors = _split_factors(trace)
        if factors and (not cands or rng.random() < len(factors) / (len(factors) + len(cands))):
            # the tile of a symbolic loop: another constant for one of its factors
            inst = rng.choice(factors)
            old = inst.args["decision"]
            new = rng.choice([k for k in range(len(inst.args["candidates"])) if k != old])
            return trace.with_decision(inst, new, remove_postproc=True)
        if not cands:
            return None
        inst = rng.choice(cands)
        dec = list(inst.args["decision"])
        src = rng.choice([k for k, f in enumerate(dec) if f > 1])
        dst = rng.choice([k for k in range(len(dec)) if k != src])
        moved = rng.choice([d for d in divisors(dec[src]) if d > 1])
        if dst == len(dec) - 1 and dec[dst] * moved > inst.args["max_innermost_factor"]:
            return None
        dec[src] //= moved
        dec[dst] *= moved
        return trace.with_decision(inst, dec, remove_postproc=True)


def _split_factors(trace) -> list:
    """The sample_categorical instructions whose value is a split factor (MultiLevelTiling's
    tiles of loops over symbolic extents), with more than one candidate."""
    used = {
        f.name for i in insts_named(trace, "split") for f in i.args["factors"] if hasattr(f, "name")
    }
    return [
        i
        for i in insts_named(trace, "sample_categorical")
        if i.outputs is not None and i.outputs.name in used and len(i.args["candidates"]) > 1
    ]
