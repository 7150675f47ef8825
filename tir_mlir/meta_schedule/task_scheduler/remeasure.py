"""The end of a task's tuning: its best few distinct records are built again and measured
again, interleaved (A B C A B C ...), and those times are committed to the database as new
records, so the database's best is chosen among times measured side by side.

During the search each candidate is timed when its round comes; on a shared machine the
load changes between rounds, so a record's time says as much about its moment as about its
program (session 16: the pick of a 256-trial matmul tune timed 23.8 ms at one thread, four
records behind it 21.1-21.95 ms). Interleaving puts every candidate in every slow spell
alike. The re-measures are not trials: the budget counts the search's candidates only."""

import statistics
from typing import Callable, List, Optional

from tir_mlir.meta_schedule.builder import BuilderInput
from tir_mlir.meta_schedule.database.record import TuningRecord, trace_key
from tir_mlir.meta_schedule.measure_callback.remove_build_artifact import remove_artifacts
from tir_mlir.meta_schedule.runner import RunnerInput, RunnerResult
from tir_mlir.meta_schedule.target_key import canonical_target
from tir_mlir.schedule.schedule import Schedule

# How many distinct records are measured again: the search's times rank its candidates well
# except for a few within noise of each other at the top (the session-16 tune held five
# within 13% of each other); each more costs a build and ROUNDS runs.
REMEASURE_TOP_K = 4
# Interleaved rounds: each a measurement of every candidate (the runner's repeats), so a slow
# spell shorter than a round slows one measurement of each, not all of one.
REMEASURE_ROUNDS = 3
# No re-measure below this many trials of the task: the re-measure (REMEASURE_TOP_K builds,
# REMEASURE_TOP_K x REMEASURE_ROUNDS runs) would cost about as much as the search did, and a
# short tune has no crowd of near-equal records to sort out.
REMEASURE_MIN_TRIALS = 4 * REMEASURE_TOP_K


def best_distinct(database, workload, target: str, k: int) -> List[TuningRecord]:
    """The `k` fastest valid records of `workload` on `target`, one per trace."""
    out, seen = [], set()
    for record in database.get_top_k(workload, 4 * k, target):
        if trace_key(record) not in seen:
            seen.add(trace_key(record))
            out.append(record)
    return out[:k]


def remeasure_best(
    builder,
    runner,
    database,
    task,
    runner_input: Callable[[str], RunnerInput],
) -> Optional[str]:
    """Re-measure `task`'s (a TaskRecord's) best distinct records and commit their new
    times; the one-line summary, or None when there was nothing to do (fewer than
    REMEASURE_MIN_TRIALS trials, fewer than two distinct valid records)."""
    if task.trials < REMEASURE_MIN_TRIALS:
        return None
    target = canonical_target(str(task.ctx.target))
    records = best_distinct(database, task.workload, target, REMEASURE_TOP_K)
    if len(records) < 2:
        return None
    inputs = []
    for record in records:
        sch = Schedule(task.ctx.mod)
        record.trace.apply_to_schedule(sch, remove_postproc=False)
        inputs.append(BuilderInput(sch.mod, str(task.ctx.target)))
    built = builder.build(inputs)
    times: List[List[float]] = [[] for _ in records]
    failed: List[Optional[str]] = [b.error_msg for b in built]
    try:
        for _ in range(REMEASURE_ROUNDS):
            for k, b in enumerate(built):
                if failed[k] is None:
                    assert b.artifact_path is not None
                    result: RunnerResult = runner.run([runner_input(b.artifact_path)])[0].result()
                    failed[k] = result.error_msg
                    times[k].extend(result.run_secs or ())
    finally:
        remove_artifacts(built)
    again = [
        TuningRecord(r.trace, r.workload, secs, r.target, r.args_info)
        for r, secs, why in zip(records, times, failed)
        if why is None and secs
    ]
    database.commit_tuning_records(again)
    new = [None if why or not secs else statistics.fmean(secs) for secs, why in zip(times, failed)]
    best = database.get_top_k(task.workload, 1, target)
    return (
        f"re-measured the best {len(records)} x{REMEASURE_ROUNDS}, interleaved: "
        f"{_ms([r.mean_sec for r in records])} -> {_ms(new)} ms; "
        f"database best {_ms([best[0].mean_sec if best else None])} ms"
    )


def _ms(secs: List[Optional[float]]) -> str:
    return " ".join("failed" if s is None else f"{s * 1e3:.4g}" for s in secs)
