"""The unscheduled program as a tuning candidate: its trace is the empty trace.

The task scheduler measures every CPU task's program as given (trial 0, through the task's
builder and runner like any candidate) and stores it as a record with the empty trace, so a
database's best record is the fastest program measured, "no schedule" included: tuning never
picks a schedule slower than its input. TVM's MetaSchedule measures only its design spaces,
which need not contain the input program (a small elementwise or convolution function the
lowering already handles well can beat every sampled schedule of a small budget).
"""

from typing import Optional

from tir_mlir.meta_schedule.database.record import TuningRecord
from tir_mlir.schedule.trace import SAMPLING_INSTRUCTIONS, Trace


def is_unscheduled(trace: Trace) -> bool:
    """Whether `trace` schedules nothing (the postprocessors' part aside)."""
    return not trace.without_postproc().insts


def has_decisions(trace: Trace) -> bool:
    """Whether `trace` samples anything: only then can a mutator derive another from it."""
    return any(i.name in SAMPLING_INSTRUCTIONS for i in trace.insts)


def unscheduled_record(database, workload, target: str) -> Optional[TuningRecord]:
    """The record of the unscheduled program of `workload` on `target` (canonical) that
    `database` holds, valid or not (a program that failed to run is not tried again), or
    None."""
    for r in database.get_all_tuning_records():
        if r.workload == workload and r.target == target and is_unscheduled(r.trace):
            return r
    return None
