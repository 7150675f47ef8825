"""`PyDatabase`: the class a TVM user's database derives from (with `@derived_object`).

The subclass stores workloads and records its own way, overriding TVM's methods:
`has_workload(mod)`, `commit_workload(mod)`, `commit_tuning_record(record)`,
`get_all_tuning_records()`, `get_top_k(workload, top_k)` and `__len__`; the queries
(`query_tuning_record`, `query_schedule`, `query_ir_module`, `query`) work through those
unless it overrides them too (TVM's defaults: the best of `get_top_k(commit_workload(mod), 1)`
when `has_workload(mod)`)."""

from typing import List

from tir_mlir.meta_schedule.database.database import Database
from tir_mlir.meta_schedule.database.record import TuningRecord


class PyDatabase(Database):
    _py_interface = True

    def __init__(self, module_equality: str = "structural"):
        self.module_equality = module_equality

    def has_workload(self, mod) -> bool:
        raise NotImplementedError(f"{type(self).__name__} does not override has_workload")

    def commit_tuning_records(self, records: List[TuningRecord]) -> None:
        for r in records:
            self.commit_tuning_record(r)

    def commit_tuning_record(self, record: TuningRecord) -> None:
        raise NotImplementedError(f"{type(self).__name__} does not override commit_tuning_record")

    def query_best(self, mod, target):
        if not self.has_workload(mod):
            return None
        top = self.get_top_k(self.commit_workload(mod), 1)
        return top[0] if top else None
