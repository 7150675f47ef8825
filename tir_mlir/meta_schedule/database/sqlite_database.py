"""`SQLiteDatabase(path)`: tuning records in one SQLite file (the standard library's sqlite3).

Durability: WAL journal, one transaction per committed batch. A process killed at any point
(kill -9 included) loses at most the batch it was committing; the file always opens, and
several processes may write to it at once (writers wait for each other's transactions).
Opening does not read the records, so it takes the same time at 10 or 100,000 of them.

Tables (documented in docs/meta_schedule.md):
    workloads(id, shash UNIQUE, mod: MLIR text of the tir dialect, script: TVMScript)
    records(id, workload -> workloads.id, target, trace: JSON (instructions + decisions),
            run_secs: JSON list or NULL, mean_sec (NULL when failed), args_info: JSON,
            error, created: UNIX time)
"""

import json
import math
import sqlite3
import threading
from os import PathLike
from typing import List, Optional, Union

from tir_mlir.meta_schedule.database.database import Database
from tir_mlir.meta_schedule.database.record import TuningRecord
from tir_mlir.meta_schedule.database.workload import Workload

SCHEMA_VERSION = 1
_SCHEMA = """
CREATE TABLE IF NOT EXISTS workloads (
    id INTEGER PRIMARY KEY, shash TEXT NOT NULL UNIQUE, mod TEXT, script TEXT);
CREATE TABLE IF NOT EXISTS records (
    id INTEGER PRIMARY KEY, workload INTEGER NOT NULL REFERENCES workloads(id),
    target TEXT, trace TEXT NOT NULL, run_secs TEXT, mean_sec REAL, args_info TEXT,
    error TEXT, created REAL NOT NULL);
CREATE INDEX IF NOT EXISTS records_best ON records(workload, target, mean_sec);
"""
_COLUMNS = "r.target, r.trace, r.run_secs, r.args_info, r.error, r.created, w.shash, w.mod"


class SQLiteDatabase(Database):
    def __init__(self, path: Union[str, PathLike], timeout_sec: float = 60.0):
        """`timeout_sec`: how long a writer waits for another process's transaction."""
        self.path = str(path)
        self._lock = threading.RLock()
        self._conn = sqlite3.connect(
            self.path, timeout=timeout_sec, isolation_level=None, check_same_thread=False
        )
        self._conn.execute("PRAGMA trusted_schema=OFF")  # no SQL functions from the file
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute("PRAGMA synchronous=NORMAL")  # WAL: safe against process kills
        version = self._conn.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:
            raise ValueError(
                f"{self.path}: database format {version} is newer than this "
                f"tir-mlir's ({SCHEMA_VERSION})"
            )
        if version < SCHEMA_VERSION:
            with self._transaction() as c:
                c.executescript(
                    "BEGIN IMMEDIATE;" + _SCHEMA + f"PRAGMA user_version = {SCHEMA_VERSION};"
                )
        self._check_schema()
        self._workloads = {}  # shash -> (row id, Workload), filled as they are used

    def _check_schema(self):
        """The file is data: a trigger or view in it would run SQL on every write or read (a
        planted trigger deleted each record as it was committed), so only tir-mlir's own
        tables and indexes are accepted."""
        with self._transaction() as conn:
            objects = conn.execute("SELECT type, name FROM sqlite_master").fetchall()
        kinds = dict((name, kind) for kind, name in objects)
        bad = [f"{kind} {name!r}" for kind, name in objects if kind not in ("table", "index")]
        bad += [
            f"{kinds.get(t, 'no table')} {t!r}"
            for t in ("workloads", "records")
            if kinds.get(t) != "table"
        ]
        if bad:
            raise ValueError(
                f"{self.path}: not a tir-mlir tuning database as written by "
                f"tir-mlir (it holds {', '.join(bad)})"
            )

    class _Tx:
        def __init__(self, db, begin):
            self.db, self.begin = db, begin

        def __enter__(self):
            self.db._lock.acquire()
            if self.begin:
                self.db._conn.execute("BEGIN IMMEDIATE")
            return self.db._conn

        def __exit__(self, exc_type, *_):
            try:
                if self.db._conn.in_transaction:
                    self.db._conn.execute("ROLLBACK" if exc_type else "COMMIT")
                if exc_type:
                    self.db._workloads.clear()  # may name rows the rollback removed
            finally:
                self.db._lock.release()

    def _transaction(self, begin=False):
        return self._Tx(self, begin)

    # --- workloads ----------------------------------------------------------------------------
    def _workload_id(self, conn, w: Workload) -> int:
        """The row of `w`, inserted when new (inside the caller's transaction)."""
        if w.shash in self._workloads:
            return self._workloads[w.shash][0]
        row = conn.execute("SELECT id FROM workloads WHERE shash = ?", (w.shash,)).fetchone()
        if row is None:
            script = None
            if w.mod is not None:
                try:
                    script = w.mod.script()
                except Exception:  # noqa: BLE001 - the script is for humans; the MLIR is kept
                    script = None
            row = (
                conn.execute(
                    "INSERT INTO workloads (shash, mod, script) VALUES (?, ?, ?)",
                    (w.shash, w.mlir_text, script),
                ).lastrowid,
            )
        self._workloads[w.shash] = (row[0], w)
        return row[0]

    def commit_workload(self, mod) -> Workload:
        w = Workload(mod)
        with self._transaction(begin=True) as conn:
            self._workload_id(conn, w)
        return self._workloads[w.shash][1]

    def _find_workload(self, shash) -> Optional[Workload]:
        if shash in self._workloads:
            return self._workloads[shash][1]
        with self._transaction() as conn:
            row = conn.execute("SELECT id, mod FROM workloads WHERE shash = ?", (shash,)).fetchone()
        if row is None:
            return None
        w = Workload(shash=shash, mlir_text=row[1])
        self._workloads[shash] = (row[0], w)
        return w

    # --- records ------------------------------------------------------------------------------
    def commit_tuning_records(self, records: List[TuningRecord]) -> None:
        with self._transaction(begin=True) as conn:
            rows = []
            for r in records:
                rows.append(
                    (
                        self._workload_id(conn, r.workload),
                        r.target,
                        json.dumps(r.trace.as_json()),
                        None if r.run_secs is None else json.dumps(r.run_secs),
                        r.mean_sec,
                        None
                        if r.args_info is None
                        else json.dumps([a.as_json() for a in r.args_info]),
                        r.error_msg,
                        r.timestamp,
                    )
                )
            conn.executemany(
                "INSERT INTO records (workload, target, trace, run_secs, mean_sec, "
                "args_info, error, created) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                rows,
            )

    def get_top_k(self, workload: Workload, top_k: int, target=None) -> List[TuningRecord]:
        if top_k <= 0:
            return []
        sql = (
            f"SELECT {_COLUMNS} FROM records r JOIN workloads w ON r.workload = w.id "
            f"WHERE w.shash = ? AND r.mean_sec IS NOT NULL AND r.error IS NULL"
        )
        args = [workload.shash]
        if target is not None:
            sql += " AND r.target = ?"
            args.append(target)
        sql = sql.replace(f"SELECT {_COLUMNS}", f"SELECT {_COLUMNS}, r.mean_sec")
        sql += " ORDER BY r.mean_sec, r.id"
        # The stored mean_sec orders the rows; a row is returned only when its run times are
        # valid and give that mean (a tampered mean_sec is skipped, not chosen).
        out = []
        with self._transaction() as conn:
            cursor = conn.execute(sql, args)
            while len(out) < top_k:
                rows = cursor.fetchmany(max(16, top_k))
                if not rows:
                    break
                for row in rows:
                    r = self._record(row[:-1])
                    mean = r.mean_sec  # (None unless r.is_valid)
                    if (
                        mean is not None
                        and isinstance(row[-1], float)
                        and math.isclose(mean, row[-1], rel_tol=1e-9)
                    ):
                        out.append(r)
        return out[:top_k]

    def get_all_tuning_records(self) -> List[TuningRecord]:
        with self._transaction() as conn:
            rows = conn.execute(
                f"SELECT {_COLUMNS} FROM records r JOIN workloads w "
                f"ON r.workload = w.id ORDER BY r.id"
            ).fetchall()
        return [self._record(row) for row in rows]

    def _record(self, row) -> TuningRecord:
        from tir_mlir.meta_schedule.arg_info import ArgInfo
        from tir_mlir.schedule.trace import Trace

        target, trace, run_secs, args_info, error, created, shash, mod = row
        if shash not in self._workloads:
            self._find_workload(shash)
        w = self._workloads[shash][1]
        return TuningRecord(
            Trace.from_json(trace),
            w,
            None if run_secs is None else json.loads(run_secs),
            target,
            None if args_info is None else [ArgInfo.from_json(a) for a in json.loads(args_info)],
            error,
            created,
        )

    def __len__(self):
        with self._transaction() as conn:
            return conn.execute("SELECT COUNT(*) FROM records").fetchone()[0]

    def close(self):
        with self._lock:
            self._conn.close()
