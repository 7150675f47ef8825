"""`MemoryDatabase`: records in a Python list (tests, one-off tuning)."""

from typing import Dict, List, Optional

from tir_mlir.meta_schedule.database.database import Database, check_module_equality
from tir_mlir.meta_schedule.database.record import TuningRecord
from tir_mlir.meta_schedule.database.workload import Workload


class MemoryDatabase(Database):
    def __init__(self, module_equality: str = "structural"):
        self.module_equality = check_module_equality(module_equality)
        self.workloads: Dict[str, Workload] = {}
        self.records: List[TuningRecord] = []

    def commit_workload(self, mod) -> Workload:
        w = Workload(mod)
        return self.workloads.setdefault(w.shash, w)

    def commit_tuning_records(self, records):
        for r in records:
            self.workloads.setdefault(r.workload.shash, r.workload)
        self.records.extend(records)

    def _find_workload(self, shash) -> Optional[Workload]:
        return self.workloads.get(shash)

    def get_top_k(self, workload, top_k, target=None):
        return best_records(self.records, workload, top_k, target)

    def get_all_tuning_records(self):
        return list(self.records)

    def __len__(self):
        return len(self.records)


def best_records(records, workload, top_k, target=None) -> List[TuningRecord]:
    """The `top_k` fastest valid records of `workload` (and `target`), fastest first."""
    if top_k <= 0:
        return []
    mine = [
        r
        for r in records
        if r.is_valid
        and r.workload.shash == workload.shash
        and (target is None or r.target == target)
    ]
    return sorted(mine, key=lambda r: r.mean_sec)[:top_k]
