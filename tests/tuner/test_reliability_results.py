"""Measured results are data from workers and files: a time that is negative, not a number or
not finite is a failure (never chosen), a database row whose stored mean_sec disagrees with its
run times is skipped, a database holding a trigger or view is refused, JSONDatabase writers in
two processes keep every record, and a damaged reference.npz is made again on resume."""

import json
import multiprocessing
import sqlite3

import numpy as np
import pytest
from click.testing import CliRunner

import tir_mlir
from shared_programs import MATMUL_16 as MM
from tune_cli_options import FAST, MATMUL
from tir_mlir import Schedule
from tir_mlir.cli import main
from tir_mlir.meta_schedule.database import JSONDatabase, SQLiteDatabase, TuningRecord
from tir_mlir.meta_schedule.runner.reference import is_reference
from tir_mlir.meta_schedule.runner.runner import RunnerResult


@pytest.mark.parametrize(
    "secs", [[-1e-3], [0.0], [float("nan")], [float("inf")], ["fast"], [None], [True], "0.1", 5]
)
def test_bad_run_times_are_failures(secs):
    r = RunnerResult(secs)
    assert r.run_secs is None and r.error_msg.startswith("InvalidResult: ")
    mod = tir_mlir.parse(MM)
    rec = TuningRecord(
        Schedule(mod).trace, SQLiteDatabase(":memory:").commit_workload(mod), secs, "llvm"
    )
    if secs == [0.0]:  # no runner measures 0 s, but a record may hold it, as TVM's do
        assert rec.is_valid and rec.mean_sec == 0.0
    else:
        assert not rec.is_valid and rec.mean_sec is None


def test_good_run_times_pass():
    assert RunnerResult([np.float32(1e-3), 2e-3]).run_secs == pytest.approx([1e-3, 2e-3])


def _db_with_records(path, times):
    mod = tir_mlir.parse(MM)
    db = SQLiteDatabase(path)
    w = db.commit_workload(mod)
    db.commit_tuning_records([TuningRecord(Schedule(mod).trace, w, [t], "llvm") for t in times])
    return db, mod, w


def test_tampered_rows_are_never_best(tmp_path):
    db, mod, w = _db_with_records(tmp_path / "db.sqlite", [3e-3, 2e-3, 4e-3])
    db.close()
    conn = sqlite3.connect(tmp_path / "db.sqlite")
    conn.execute("UPDATE records SET mean_sec = -1 WHERE id = 1")  # 3 ms claims -1
    conn.execute("UPDATE records SET run_secs = '[-5.0]', mean_sec = -5 WHERE id = 3")
    conn.execute("UPDATE records SET run_secs = '[\"x\"]', mean_sec = -9 WHERE id = 2")
    conn.execute(
        "INSERT INTO records (workload, target, trace, run_secs, mean_sec, created) "
        "SELECT workload, target, trace, '[5e-3]', 5e-3, created FROM records "
        "WHERE id = 1"
    )
    conn.commit()
    conn.close()
    db = SQLiteDatabase(tmp_path / "db.sqlite")
    best = db.get_top_k(w, 3)
    assert [r.mean_sec for r in best] == [5e-3]
    assert db.query_best(mod, "llvm").mean_sec == 5e-3


@pytest.mark.parametrize(
    "sql",
    [
        "CREATE TRIGGER wipe AFTER INSERT ON records BEGIN DELETE FROM records; END",
        "CREATE VIEW v AS SELECT * FROM records",
    ],
)
def test_database_with_a_trigger_or_view_is_refused(tmp_path, sql):
    _db_with_records(tmp_path / "db.sqlite", [1e-3])[0].close()
    conn = sqlite3.connect(tmp_path / "db.sqlite")
    conn.execute(sql)
    conn.commit()
    conn.close()
    with pytest.raises(ValueError, match="not a tir-mlir tuning database"):
        SQLiteDatabase(tmp_path / "db.sqlite")


def _writer(paths, n, start):
    mod = tir_mlir.parse(MM)
    db = JSONDatabase(*paths)
    w = db.commit_workload(mod)
    start.wait()
    for k in range(n):
        db.commit_tuning_records([TuningRecord(Schedule(mod).trace, w, [1e-3 + k * 1e-6], "llvm")])


def test_json_database_concurrent_writers_keep_every_record(tmp_path):
    paths = (str(tmp_path / "w.json"), str(tmp_path / "r.json"))
    JSONDatabase(*paths)
    ctx = multiprocessing.get_context("spawn")
    start = ctx.Barrier(2)
    procs = [ctx.Process(target=_writer, args=(paths, 150, start)) for _ in range(2)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    lines = (tmp_path / "r.json").read_text().splitlines()
    assert len(lines) == 300 and all(json.loads(x)[0] == 0 for x in lines)
    assert len((tmp_path / "w.json").read_text().splitlines()) == 1
    assert len(JSONDatabase(*paths).get_all_tuning_records()) == 300


def test_is_reference(tmp_path):
    good = tmp_path / "good.npz"
    np.savez(good, in0=np.ones(3), out0=np.zeros(3))
    assert is_reference(str(good))
    empty = tmp_path / "empty.npz"
    empty.write_bytes(b"")
    assert not is_reference(str(empty)) and not is_reference(str(tmp_path / "missing.npz"))
    odd = tmp_path / "odd.npz"
    np.savez(odd, in0=np.ones(3), out0=np.zeros(4))
    assert not is_reference(str(odd))


def test_resume_with_an_empty_reference_makes_it_again(tmp_path):
    src = tmp_path / "mm.tir"
    src.write_text(MATMUL)
    work = tmp_path / "work"
    run = ["tune", str(src), "--work-dir", str(work), *FAST]
    assert CliRunner().invoke(main, [*run, "--trials", "1"]).exit_code == 0
    (work / "reference.npz").write_bytes(b"")
    r = CliRunner().invoke(main, [*run, "--trials", "2", "--resume"], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    assert is_reference(str(work / "reference.npz"))
    db = SQLiteDatabase(work / "database.sqlite")
    assert all(rec.is_valid for rec in db.get_all_tuning_records())
