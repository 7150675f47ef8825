"""`TuningRecord`: one measured candidate: its trace (with sampling decisions), workload,
run times, target, argument info; failed candidates keep their error instead of times."""

import json
import math
import numbers
import statistics
import time
from dataclasses import dataclass, field
from typing import List, Optional

from tir_mlir.meta_schedule.database.workload import Workload
from tir_mlir.schedule.trace import Trace


@dataclass
class TuningRecord:
    trace: Trace
    workload: Workload
    run_secs: Optional[List[float]] = None
    target: Optional[str] = None  # a canonical target string (target_key)
    args_info: Optional[list] = None  # list[ArgInfo]
    error_msg: Optional[str] = None  # "BuildError: ...", "WrongResult: ...", ...
    timestamp: float = field(default_factory=time.time)

    def __post_init__(self):
        if self.target is not None:
            from tir_mlir.meta_schedule.target_key import canonical_target

            self.target = canonical_target(self.target)
        if self.error_msg is not None and not isinstance(self.error_msg, str):
            self.error_msg = str(self.error_msg)
        if self.run_secs is not None:
            why = bad_run_secs(self.run_secs, allow_zero=True)
            if why:  # (from a runner or a file: never a time that could be chosen)
                self.run_secs = None
                self.error_msg = self.error_msg or f"InvalidResult: {why}"
            else:
                self.run_secs = [float(s) for s in self.run_secs]

    @property
    def is_valid(self) -> bool:
        """Measured without error: the only records queries return. Times that are all
        TVM's stub for an unmeasured run (MAX_MEAN_TIME) are no measurement."""
        return (
            self.error_msg is None
            and bool(self.run_secs)
            and not all(s >= MAX_MEAN_TIME for s in self.run_secs)
        )

    def as_json(self) -> list:
        """TVM's JSON form of a record, `[trace, run_secs, target, args_info]` (a line of
        JSONDatabase's records file without its workload number)."""
        from tir_mlir.meta_schedule.database.json_database import record_to_json

        return record_to_json(self)

    @staticmethod
    def from_json(json_obj, workload: Workload) -> "TuningRecord":
        """The record of `as_json()` output (TVM's form) for `workload`."""
        from tir_mlir.meta_schedule.database.json_database import record_from_json

        return record_from_json(json_obj, workload)

    @property
    def mean_sec(self) -> Optional[float]:
        return statistics.fmean(self.run_secs) if self.run_secs and self.is_valid else None


def by_mean_sec(record: TuningRecord) -> float:
    """Sort key of records, fastest first (one without a valid measurement last)."""
    mean = record.mean_sec
    return math.inf if mean is None else mean


def trace_key(record: TuningRecord) -> str:
    """The record's trace as TVM's JSON text: equal for records of the same candidate."""
    return json.dumps(record.trace.as_json())


# TVM's stand-in time of a run that was not measured (its records sort such runs last).
MAX_MEAN_TIME = 1e10


def bad_run_secs(run_secs, allow_zero: bool = False) -> str:
    """Why `run_secs` is not a list of measured times ("" when it is): each a finite number
    of seconds above zero (`allow_zero`: or zero, which TVM's records allow)."""
    if not isinstance(run_secs, (list, tuple)):
        return f"run_secs is a {type(run_secs).__name__}, not a list of seconds"
    for s in run_secs:
        if isinstance(s, bool) or not isinstance(s, numbers.Real):
            return f"run time {str(s)[:40]!r} is not a number"
        if not math.isfinite(s) or s < 0 or (s == 0 and not allow_zero):
            return f"run time {s!r} is not a positive number of seconds"
    return ""
