"""MutateTileShape: trade the innermost factors of two loops of one block, reshaping its
register tile (not in TVM).

MutateTileSize moves a factor between the levels of one loop, so widening one loop's
innermost tile while narrowing another's (8 filters x 8 lanes -> 2 filters x 56 lanes: the
same 16 vector registers of accumulators) takes several moves through tiles that are slow or
spill, which the search rarely keeps. This mutator does it in one: it picks two perfect tiles
of the same depth sampled for loops of the same block (the same `get_loops`; with
MultiLevelTiling's structures, two spatial loops or two reduction loops), whose extents allow
another innermost factor, gives the first another innermost
factor and moves the second's the other way (smaller when the first grew, larger when it
shrank), each loop's outer levels taking up or giving back the primes that changed. The
search keeps only mutants whose tiles fit the target's register budget (register_budget.py).
"""

import math
import random
from typing import Dict, List, Optional, Tuple

from tir_mlir.meta_schedule.mutator.mutator import Mutator, as_rng, insts_named
from tir_mlir.passes.schedule.sample_perfect_tile import divisors, prime_factors


class MutateTileShape(Mutator):
    def apply(self, trace, rand_state=-1):
        rng = as_rng(rand_state)
        groups = [g for g in _tiles_by_block(trace) if len(g) > 1]
        if not groups:
            return None
        a, b = rng.sample(rng.choice(groups), 2)
        dec_a, dec_b = list(a.args["decision"]), list(b.args["decision"])
        inner_a = [d for d in _inner_choices(a) if d != dec_a[-1]]
        if not inner_a:
            return None
        new_a = rng.choice(inner_a)
        grew = new_a > dec_a[-1]
        inner_b = [d for d in _inner_choices(b) if (d < dec_b[-1] if grew else d > dec_b[-1])]
        if not inner_b:
            return None
        new_b = rng.choice(inner_b)
        trace = trace.with_decision(a, retile(dec_a, new_a, rng), remove_postproc=True)
        return trace.with_decision(b, retile(dec_b, new_b, rng), remove_postproc=True)


def retile(decision: List[int], inner: int, rng: random.Random) -> List[int]:
    """`decision` (a perfect tile) with innermost factor `inner` (a divisor of its extent):
    the primes the innermost gives up go to outer levels drawn at random, those it takes come
    from outer levels that hold them."""
    dec = list(decision)
    common = math.gcd(dec[-1], inner)
    for p in prime_factors(dec[-1] // common):
        dec[rng.randrange(len(dec) - 1)] *= p
    for p in prime_factors(inner // common):
        dec[rng.choice([k for k in range(len(dec) - 1) if dec[k] % p == 0])] //= p
    dec[-1] = inner
    return dec


def _inner_choices(inst) -> List[int]:
    extent = math.prod(inst.args["decision"])
    return [d for d in divisors(extent) if d <= inst.args["max_innermost_factor"]]


def _tiles_by_block(trace) -> List[list]:
    """The sample_perfect_tile instructions with more than one level, a constant extent and
    another innermost factor allowed, grouped by the get_loops instruction that gave their
    loops (one block's loops) and their number of levels."""
    owner: Dict[str, int] = {}
    for k, inst in enumerate(insts_named(trace, "get_loops")):
        outs = inst.outputs if isinstance(inst.outputs, (list, tuple)) else [inst.outputs]
        for rv in outs:
            if rv is not None:
                owner[rv.name] = k
    groups: Dict[Tuple[int, int], list] = {}
    for inst in insts_named(trace, "sample_perfect_tile"):
        dec = inst.args["decision"]
        block: Optional[int] = owner.get(getattr(inst.args["loop"], "name", None) or "")
        if block is None or len(dec) < 2 or any(f < 1 for f in dec):
            continue
        if len(_inner_choices(inst)) > 1:
            groups.setdefault((block, len(dec)), []).append(inst)
    return list(groups.values())
