"""`Database`: what every tuning-record store offers (TVM's `ms.database.Database`).

Subclasses store workloads and records; the queries here pick the best valid record for a
program on a target (records for another CPU, or failed ones, never qualify) and replay it."""

from typing import List, Optional

from tir_mlir.meta_schedule.database.record import TuningRecord
from tir_mlir.meta_schedule.database.workload import Workload

# TVM's module_equality values; workloads are always compared by structural hash here (a
# constant tensor's data is part of it, and there is no anchor-block mode yet).
MODULE_EQUALITIES = ("structural", "ignore-ndarray", "anchor-block")

_CURRENT: List["Database"] = []  # the databases of the enclosing `with` statements


def check_module_equality(module_equality: str) -> str:
    if module_equality not in MODULE_EQUALITIES:
        raise ValueError(
            f"module_equality must be one of {', '.join(MODULE_EQUALITIES)}, "
            f"got {module_equality!r}"
        )
    return module_equality


class Database:
    # --- storage: subclasses ------------------------------------------------------------------
    def has_workload(self, mod) -> bool:
        return self._find_workload(Workload(mod).shash) is not None

    def commit_workload(self, mod) -> Workload:
        """The stored workload of `mod`, added when new."""
        raise NotImplementedError

    def commit_tuning_record(self, record: TuningRecord) -> None:
        self.commit_tuning_records([record])

    def commit_tuning_records(self, records: List[TuningRecord]) -> None:
        """Store a batch at once (SQLite: one transaction; all or nothing)."""
        raise NotImplementedError

    def get_top_k(
        self, workload: Workload, top_k: int, target: Optional[str] = None
    ) -> List[TuningRecord]:
        """The `top_k` fastest valid records of `workload` (on `target` when given)."""
        raise NotImplementedError

    def get_all_tuning_records(self) -> List[TuningRecord]:
        raise NotImplementedError

    def _find_workload(self, shash: str) -> Optional[Workload]:
        raise NotImplementedError

    def __len__(self) -> int:
        raise NotImplementedError

    # --- queries ------------------------------------------------------------------------------
    def query_best(self, mod, target) -> Optional[TuningRecord]:
        """The fastest valid record of `mod` measured on `target`, or None."""
        from tir_mlir.meta_schedule.target_key import canonical_target

        workload = self._find_workload(Workload(mod).shash)
        if workload is None:
            return None
        top = self.get_top_k(workload, 1, canonical_target(target))
        return top[0] if top else None

    def query_tuning_record(self, mod, target, workload_name: str = "main"):
        return self.query_best(mod, target)

    def query(self, mod, target, *, workload_name: str = "main", kind: str = "schedule"):
        """TVM's one query: the best record (`kind="record"`), a Schedule with its trace
        replayed ("schedule") or the scheduled module ("ir_module"); None when there is
        none."""
        queries = {
            "record": self.query_tuning_record,
            "schedule": self.query_schedule,
            "ir_module": self.query_ir_module,
        }
        if kind not in queries:
            raise ValueError(f"unknown query kind {kind!r}: expected record, schedule or ir_module")
        return queries[kind](mod, target, workload_name)

    def query_schedule(self, mod, target, workload_name: str = "main"):
        """A Schedule of `mod` with the best record's trace replayed, or None."""
        from tir_mlir.schedule.schedule import Schedule

        record = self.query_best(mod, target)
        if record is None:
            return None
        sch = Schedule(mod)
        record.trace.apply_to_schedule(sch, remove_postproc=False)
        return sch

    def query_ir_module(self, mod, target, workload_name: str = "main"):
        sch = self.query_schedule(mod, target, workload_name)
        return None if sch is None else sch.mod

    def close(self) -> None:
        """Release files and connections (committed data is already safe)."""

    @staticmethod
    def current() -> Optional["Database"]:
        """The database of the innermost `with database:` (TVM's Database.current())."""
        return _CURRENT[-1] if _CURRENT else None

    def __enter__(self):
        _CURRENT.append(self)
        return self

    def __exit__(self, *exc):
        _CURRENT.remove(self)
        self.close()
