"""sample_perfect_tile / sample_partitioned_tile: the random factorizations of a loop extent.

A perfect tile of `extent` into `n` parts is a list of n positive integers whose product is
exactly `extent` (no predicate, no padding), the innermost at most `max_innermost_factor`.
Sampling draws the innermost factor uniformly among the allowed divisors, then hands each
prime factor of the rest to a uniformly chosen outer position: every factorization has a
chance, and small extents are not starved. Pure arithmetic on ints: no IR is touched.
"""

import random
from typing import List, Optional, Sequence

from tir_mlir.errors import ScheduleError


def divisors(n: int) -> List[int]:
    return [d for d in range(1, n + 1) if n % d == 0]


def prime_factors(n: int) -> List[int]:
    out, p = [], 2
    while p * p <= n:
        while n % p == 0:
            out.append(p)
            n //= p
        p += 1
    return out + ([n] if n > 1 else [])


def sample(rng: random.Random, extent: int, n: int, max_innermost_factor: int) -> List[int]:
    inner = rng.choice([d for d in divisors(extent) if d <= max(1, max_innermost_factor)])
    factors = [1] * n
    factors[-1] = inner
    for p in prime_factors(extent // inner):
        factors[rng.randrange(n - 1) if n > 1 else 0] *= p
    return factors


def symbolic(
    n: int, decision: Optional[Sequence[int]], who: str = "sample_perfect_tile"
) -> List[int]:
    """The only tile of a symbolic extent (TVM, also for `sample_partitioned_tile`):
    [-1, 1, ..., 1], -1 inferred by split."""
    if n < 1:
        raise ScheduleError(f"{who}: n must be >= 1, got {n}")
    tile = [-1] + [1] * (n - 1)
    if decision is not None and list(decision) != tile:
        raise ScheduleError(
            f"{who}: the loop's extent is symbolic, so the only "
            f"decision is {tile}, got {list(decision)}"
        )
    return tile


def check(extent: int, n: int, max_innermost_factor: int, decision: Sequence[int]):
    """A decision given for replay must be a perfect tile of this loop."""
    if n < 1:
        raise ScheduleError(f"sample_perfect_tile: n must be >= 1, got {n}")
    dec = list(decision)
    if len(dec) != n or any(not isinstance(f, int) or f < 1 for f in dec):
        raise ScheduleError(f"sample_perfect_tile: decision {dec} is not {n} positive ints")
    prod = 1
    for f in dec:
        prod *= f
    if prod != extent:
        raise ScheduleError(
            f"sample_perfect_tile: decision {dec} multiplies to {prod}, the loop extent is {extent}"
        )


def sample_partitioned(
    rng: random.Random, extent: int, n: int, partition_pos: int, innerpart_factor: int
) -> List[int]:
    """A perfect tile whose parts from `partition_pos` on multiply to a multiple of
    `innerpart_factor` (TVM's sample_partitioned_tile)."""
    if extent % innerpart_factor:
        raise ScheduleError(
            f"sample_partitioned_tile: innerpart_factor {innerpart_factor} "
            f"does not divide the extent {extent}"
        )
    # the inner part: a multiple of innerpart_factor dividing extent, split among the inner
    # positions; the outer part: the rest, split among the outer positions
    inner = rng.choice([d for d in divisors(extent) if d % innerpart_factor == 0])
    outer_n, inner_n = partition_pos, n - partition_pos
    outer = sample(rng, extent // inner, outer_n, extent) if outer_n else []
    return outer + sample(rng, inner, inner_n, inner)


def check_partitioned(
    extent: int, n: int, partition_pos: int, innerpart_factor: int, decision: Sequence[int]
):
    check(extent, n, extent, decision)
    if not 0 <= partition_pos < n:
        raise ScheduleError(
            f"sample_partitioned_tile: partition_pos {partition_pos} is not in [0, {n})"
        )
    inner = 1
    for f in decision[partition_pos:]:
        inner *= f
    if inner % innerpart_factor:
        raise ScheduleError(
            f"sample_partitioned_tile: decision {list(decision)}: the parts "
            f"from {partition_pos} on are not a multiple of {innerpart_factor}"
        )
