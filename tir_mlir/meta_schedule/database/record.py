"""`TuningRecord`: one measured candidate: its trace (with sampling decisions), workload,
run times, target, argument info; failed candidates keep their error instead of times."""
import statistics
import time
from dataclasses import dataclass, field
from typing import List, Optional

from tir_mlir.meta_schedule.database.workload import Workload


@dataclass
class TuningRecord:
    trace: object                           # tir_mlir.Trace
    workload: Workload
    run_secs: Optional[List[float]] = None
    target: Optional[str] = None            # a canonical target string (target_key)
    args_info: Optional[list] = None        # list[ArgInfo]
    error_msg: Optional[str] = None         # "BuildError: ...", "WrongResult: ...", ...
    timestamp: float = field(default_factory=time.time)

    def __post_init__(self):
        if self.target is not None:
            from tir_mlir.meta_schedule.target_key import canonical_target
            self.target = canonical_target(self.target)
        if self.run_secs is not None:
            self.run_secs = [float(s) for s in self.run_secs]

    @property
    def is_valid(self) -> bool:
        """Measured without error: the only records queries return."""
        return self.error_msg is None and bool(self.run_secs)

    @property
    def mean_sec(self) -> Optional[float]:
        return statistics.fmean(self.run_secs) if self.is_valid else None
