"""Read-only unions of databases (TVM's `UnionDatabase`, `OrderedUnionDatabase`): a query
answers from the member databases; committing to a union is an error (commit to a member)."""

from typing import List, NoReturn, Optional

from tir_mlir.meta_schedule.database.database import Database
from tir_mlir.meta_schedule.database.record import TuningRecord, by_mean_sec


class UnionDatabase(Database):
    """The fastest record any member database holds for the program."""

    def __init__(self, *databases: Database):
        self.databases = list(databases)

    def query_best(self, mod, target) -> Optional[TuningRecord]:
        found = [
            r
            for r in (db.query_tuning_record(mod, target) for db in self.databases)
            if r is not None and r.is_valid
        ]
        return min(found, key=by_mean_sec) if found else None

    def has_workload(self, mod) -> bool:
        return any(db.has_workload(mod) for db in self.databases)

    def commit_workload(self, mod) -> NoReturn:
        raise self._read_only()

    def commit_tuning_records(self, records: List[TuningRecord]) -> NoReturn:
        raise self._read_only()

    def _read_only(self) -> RuntimeError:
        return RuntimeError(f"{type(self).__name__} is read-only: commit to one of its databases")

    def get_top_k(self, workload, top_k, target=None):
        found = [r for db in self.databases for r in db.get_top_k(workload, top_k, target)]
        return sorted(found, key=by_mean_sec)[: max(top_k, 0)]

    def get_all_tuning_records(self):
        return [r for db in self.databases for r in db.get_all_tuning_records()]

    def __len__(self):
        return sum(len(db) for db in self.databases)


class OrderedUnionDatabase(UnionDatabase):
    """The record of the first member database (in the order given) that has one."""

    def query_best(self, mod, target) -> Optional[TuningRecord]:
        for db in self.databases:
            r = db.query_tuning_record(mod, target)
            if r is not None:
                return r
        return None
