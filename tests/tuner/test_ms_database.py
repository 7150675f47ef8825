"""Databases: round trips, queries (target-aware, failures never chosen), TVM's JSON format,
concurrent writers and kill -9 at random points."""

import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path

import pytest

import tir_mlir
from tir_mlir.meta_schedule.arg_info import ArgInfo
from tir_mlir.meta_schedule.database import (
    JSONDatabase,
    MemoryDatabase,
    SQLiteDatabase,
    TuningRecord,
    Workload,
)
from tir_mlir.meta_schedule.target_key import canonical_target, host_cpu

ROOT = Path(__file__).parent.parent.parent
MM_RELU = (ROOT / "examples" / "mm_relu.tir").read_text()
WRITER = Path(__file__).parent.parent / "support" / "ms_helpers" / "db_writer.py"


def _sched(mod, factor, parallel=False):
    sch = tir_mlir.Schedule(mod)
    i, j, k = sch.get_loops(sch.get_block("Y"))
    sch.split(j, factors=[None, factor])
    if parallel:
        sch.parallel(i)
    return sch


def _databases(tmp_path):
    return {
        "memory": lambda: MemoryDatabase(),
        "sqlite": lambda: SQLiteDatabase(tmp_path / "db.sqlite"),
        "json": lambda: JSONDatabase(tmp_path / "w.json", tmp_path / "r.json"),
    }


@pytest.mark.parametrize("kind", ["memory", "sqlite", "json"])
def test_round_trip_and_queries(tmp_path, kind):
    make = _databases(tmp_path)[kind]
    mod = tir_mlir.parse(MM_RELU)
    db = make()
    assert not db.has_workload(mod) and db.query_best(mod, "llvm") is None
    w = db.commit_workload(mod)
    infos = ArgInfo.from_entry_func(mod)
    db.commit_tuning_records(
        [
            TuningRecord(_sched(mod, 4).trace, w, [3e-3, 3.2e-3], "llvm", infos),
            TuningRecord(_sched(mod, 8, True).trace, w, [1e-3], "llvm", infos),
            TuningRecord(_sched(mod, 16).trace, w, [1e-4], "llvm -mcpu=otheruarch", infos),
            TuningRecord(_sched(mod, 32).trace, w, None, "llvm", infos, "WrongResult: buffer 'C'"),
        ]
    )
    if kind != "memory":
        db.close()
        db = make()  # read back from disk
    assert len(db) == 4
    renamed = tir_mlir.parse(
        MM_RELU.replace("vi", "ii").replace("Y = ", "Z = ").replace("Y[", "Z[")
    )
    assert db.has_workload(renamed)  # the workload key ignores names
    best = db.query_best(renamed, "llvm")
    assert best.run_secs == [1e-3] and best.target == canonical_target("llvm")
    assert best.target == f"llvm -mcpu={host_cpu()} -num-cores={len(os.sched_getaffinity(0))}"
    assert best.args_info == infos
    assert str(best.trace) == str(_sched(mod, 8, True).trace)
    # another CPU's record is found only on that CPU
    assert db.query_best(mod, "llvm -mcpu=otheruarch").run_secs == [1e-4]
    assert db.query_best(mod, "llvm -mcpu=thirdcpu") is None
    top = db.get_top_k(db.commit_workload(mod), 10, canonical_target("llvm"))
    assert [r.run_secs for r in top] == [[1e-3], [3e-3, 3.2e-3]]  # the failure is never chosen
    assert sum(r.error_msg is not None for r in db.get_all_tuning_records()) == 1
    got = db.query_ir_module(mod, "llvm")
    tir_mlir.assert_structural_equal(got, _sched(mod, 8, True).mod)
    assert db.query_schedule(mod, "llvm").mod.script() == got.script()


def test_structural_hash_sees_real_changes():
    mod = tir_mlir.parse(MM_RELU)
    other = tir_mlir.parse(MM_RELU.replace("T.max(Y[vi, vj], T.float32(0))", "Y[vi, vj]"))
    assert Workload(mod) == Workload(tir_mlir.parse(MM_RELU))
    assert Workload(mod) != Workload(other)
    assert Workload(mod) != Workload(_sched(mod, 4).mod)


def test_sqlite_rejects_a_newer_format(tmp_path):
    import sqlite3

    path = tmp_path / "db.sqlite"
    SQLiteDatabase(path).close()
    con = sqlite3.connect(path)
    con.execute("PRAGMA user_version = 99")
    con.close()
    with pytest.raises(ValueError, match="newer than this tir-mlir"):
        SQLiteDatabase(path)


def test_json_database_drops_a_torn_last_line_and_appends_after_it(tmp_path):
    mod = tir_mlir.parse(MM_RELU)
    paths = tmp_path / "w.json", tmp_path / "r.json"
    db = JSONDatabase(*paths)
    w = db.commit_workload(mod)
    db.commit_tuning_record(TuningRecord(_sched(mod, 4).trace, w, [2e-3], "llvm"))
    with open(paths[1], "a") as f:
        f.write('[0,[[[["GetBlock",[],["Y"')  # a writer killed mid-line
    with pytest.warns(UserWarning, match="incomplete last line"):
        db = JSONDatabase(*paths)
    assert len(db) == 1
    db.commit_tuning_record(TuningRecord(_sched(mod, 8).trace, w, [1e-3], "llvm"))
    lines = paths[1].read_text().splitlines()
    assert len(lines) == 2 and all(json.loads(x)[0] == 0 for x in lines)
    assert JSONDatabase(*paths).query_best(mod, "llvm").run_secs == [1e-3]


def test_json_records_are_in_tvm_form(tmp_path):
    mod = tir_mlir.parse(MM_RELU)
    db = JSONDatabase(tmp_path / "w.json", tmp_path / "r.json")
    w = db.commit_workload(mod)
    db.commit_tuning_record(
        TuningRecord(
            _sched(mod, 4, True).trace,
            w,
            [2e-3],
            "llvm -mcpu=skylake -num-cores=4",
            ArgInfo.from_entry_func(mod),
        )
    )
    db.commit_tuning_record(
        TuningRecord(
            _sched(mod, 4).trace, w, None, "llvm -mcpu=skylake -num-cores=4", None, "BuildError: no"
        )
    )
    good, failed = [json.loads(x) for x in (tmp_path / "r.json").read_text().splitlines()]
    assert good == [
        0,
        [
            [
                [
                    ["GetBlock", [], ["Y", "mm_relu"], ["b0"]],
                    ["GetLoops", ["b0"], [], ["l1", "l2", "l3"]],
                    ["Split", ["l2", "None", 4], [1, 0], ["l4", "l5"]],
                    ["Parallel", ["l1"], [], []],
                ],
                [],
            ],
            [2e-3],
            {"kind": "llvm", "tag": "", "keys": ["cpu"], "mcpu": "skylake", "num-cores": 4},
            [["TENSOR", "float32", [128, 128]]] * 3,
        ],
    ]
    assert failed[1][1] == [1e9]
    shash, payload = json.loads((tmp_path / "w.json").read_text())
    assert shash == w.shash


def _writer(path, writer, batches, size):
    return subprocess.Popen(
        [sys.executable, str(WRITER), str(path), str(writer), str(batches), str(size)],
        stdout=subprocess.PIPE,
        text=True,
    )


def test_sqlite_concurrent_writers(tmp_path):
    path = tmp_path / "db.sqlite"
    procs = [_writer(path, w, 15, 4) for w in range(3)]
    outs = [p.communicate(timeout=120)[0] for p in procs]
    assert all(p.returncode == 0 for p in procs)
    assert all(o.split() == [str(b) for b in range(15)] for o in outs)
    db = SQLiteDatabase(path)
    assert len(db) == 3 * 15 * 4
    import sqlite3

    assert sqlite3.connect(path).execute("SELECT COUNT(*) FROM workloads").fetchone()[0] == 1


def check_kill_survival(path, kills, seed=0):
    """Kill -9 a writer `kills` times at random points; after each kill the file opens and
    holds every batch the writer reported committed, each batch whole."""
    rng = random.Random(seed)
    size = 5
    committed = 0
    for _ in range(kills):
        p = _writer(path, 0, 0, size)
        first = p.stdout.readline()  # it has started committing
        assert first.strip().isdigit()
        time.sleep(rng.uniform(0, 0.15))
        p.kill()
        out = first + p.stdout.read()
        p.wait()
        reported = len(out.split())
        db = SQLiteDatabase(path)
        n = len(db)
        db.close()
        assert n % size == 0, "a batch was committed in part"
        assert n >= committed + reported * size, "a committed batch was lost"
        assert n <= committed + (reported + 1) * size
        committed = n
    return committed


def test_sqlite_survives_kill_9_at_random_points(tmp_path):
    assert check_kill_survival(tmp_path / "db.sqlite", kills=20) > 0


@pytest.mark.parametrize("separators", [(",", ":"), (", ", ": ")])
def test_json_record_run_time_and_target_read_from_the_line_end(separators):
    """Opening a JSON log does not parse the traces: run times and target come from the end
    of each line; lines the shortcut cannot read safely are parsed whole, same answers."""
    from tir_mlir.meta_schedule.database.json_database import _run_secs_and_target

    trace = [[["Annotate", ["b0", '{"k": [1, 2]}'], ["x"], []]], [[0, [4, 1]]]]
    target = {"kind": "llvm", "tag": "", "keys": ["cpu"], "mcpu": "znver4", "num-cores": 2}
    args = [["TENSOR", "float32", [64, 64]]]
    cases = [(target, args), (None, args), (target, None), (None, None)]
    for tgt, arg in cases:
        line = json.dumps([0, [trace, [0.5, 0.25], tgt, arg]], separators=separators).encode()
        secs, key = _run_secs_and_target(line)
        assert secs == [0.5, 0.25]
        assert key == (None if tgt is None else canonical_target("llvm -mcpu=znver4 -num-cores=2"))
    # a trace holding "],{" and a record without a target: found by the full parse
    odd = [[["Annotate", ["b0"], [[1], {"a": 1}], []]], []]
    line = json.dumps([0, [odd, [0.5], None, None]], separators=separators).encode()
    assert _run_secs_and_target(line) == ([0.5], None)
