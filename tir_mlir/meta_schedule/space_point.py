"""One point of a module's default design space, as the tuner measures it.

A tuned point is its sketch plus the decisions of the sketch's sampling instructions; a user
who read a good tile off a log or a database (or chose one by hand) replays it here to build
and time that candidate alone, with the same postprocessors a tuning run applies.
"""

from typing import Any, Sequence

from tir_mlir.meta_schedule.tune_context import TuneContext
from tir_mlir.module import IRModule
from tir_mlir.schedule.schedule import Schedule
from tir_mlir.schedule.trace import SAMPLING_INSTRUCTIONS


def replay_space_point(
    mod: IRModule, target: str, decisions: Sequence[Any], *, write_cache: bool = False
) -> Schedule:
    """The candidate of `mod`'s default design space (for `target`) whose sketch has a write
    cache or not (`write_cache`) and whose sampling instructions decide `decisions`, in the
    order they stand in the trace, after the postprocessors. ValueError when `decisions` does
    not give one decision per sampling instruction, when no sketch matches, or when the point
    does not replay (a step or postprocessor fails)."""
    ctx = TuneContext(mod, target, search_strategy="replay-trace", rand_state=0)
    spaces = ctx.generate_design_space()
    traces = [s.trace for s in spaces]
    with_cache = [any(i.name == "cache_write" for i in t.insts) for t in traces]
    sketch = next((t for t, c in zip(traces, with_cache) if c == write_cache), None)
    if sketch is None:
        kind = "with" if write_cache else "without"
        raise ValueError(f"the default design space has no sketch {kind} a write cache")
    samples = [i for i in sketch.insts if i.name in SAMPLING_INSTRUCTIONS]
    if len(samples) != len(decisions):
        raise ValueError(
            f"the sketch has {len(samples)} sampling instructions, {len(decisions)} decisions given"
        )
    trace = sketch
    for inst, decision in zip(samples, decisions):
        trace = trace.with_decision(inst, decision, remove_postproc=True)
    strategy = ctx.search_strategy
    strategy.pre_tuning(1, 1, spaces)
    cand = strategy.replay(trace)
    if cand is None:
        raise ValueError(f"the space point does not replay: {dict(strategy.failures)}")
    return cand
