"""sample_categorical: pick one of `candidates` with the given probabilities; the decision
is the index of the pick (TVM's format)."""

import random
from typing import Sequence

from tir_mlir.errors import ScheduleError


def check(candidates: Sequence[int], probs: Sequence[float]):
    if not candidates or len(candidates) != len(probs):
        raise ScheduleError(
            f"sample_categorical: {len(candidates)} candidates but {len(probs)} probabilities"
        )
    if any(p < 0 for p in probs) or sum(probs) <= 0:
        raise ScheduleError(f"sample_categorical: bad probabilities {list(probs)}")


def sample(rng: random.Random, probs: Sequence[float]) -> int:
    return rng.choices(range(len(probs)), weights=probs)[0]


def check_decision(candidates: Sequence[int], decision) -> int:
    if not isinstance(decision, int) or not 0 <= decision < len(candidates):
        raise ScheduleError(
            f"sample_categorical: decision {decision!r} is not an index into "
            f"{len(candidates)} candidates"
        )
    return decision
