"""No data input runs code (docs/security.md): a payload (Python that would create a marker
file, a pickle that would) is planted in each input tir-mlir reads, and the marker never
appears: trace JSON in both forms, MLIR schedule scripts, SQLite and JSON databases, an
export_library pair, the cache folder, `-i` .npy inputs and MLIR programs / imported linalg."""

import hashlib
import json
import os
import pickle
import sqlite3
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import tir_mlir
from shared_programs import MATMUL_16 as MM
from tir_mlir import Schedule
from tir_mlir.cli import main
from tir_mlir.errors import TIRError
from tir_mlir.meta_schedule.database import JSONDatabase, SQLiteDatabase, TuningRecord
from tir_mlir.schedule.tvm_trace import to_tvm_json
from tir_mlir.schedule.mlir_script import trace_to_mlir

CODE = "__import__('os').system('touch {marker}')"


class _Pickled:
    def __init__(self, marker):
        self.marker = str(marker)

    def __reduce__(self):
        return (open, (self.marker, "w"))


@pytest.fixture
def marker(tmp_path):
    m = tmp_path / "pwned"
    yield m
    assert not m.exists(), "a payload ran"


def _layout_schedule():
    sch = Schedule(tir_mlir.parse(MM))
    sch.transform_layout(sch.get_block("C"), ("write", 0), lambda i, j: (j, i), pad_value=7.0)
    return sch


def _program(tmp_path) -> Path:
    src = tmp_path / "mm.tir"
    src.write_text(MM)
    return src


def _cli(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def _payload_trace(marker) -> dict:
    trace = _layout_schedule().trace.as_json()
    trace["insts"][1]["args"]["pad_value"] = f"lambda i, j: {CODE.format(marker=marker)}"
    return trace


def test_trace_json(tmp_path, marker):
    t = tmp_path / "t.json"
    for k in ("index_map", "pad_value"):
        trace = _layout_schedule().trace.as_json()
        trace["insts"][1]["args"][k] = f"lambda i, j: {CODE.format(marker=marker)}"
        t.write_text(json.dumps(trace))
        r = _cli("schedule", _program(tmp_path), "--transform", t)
        assert r.exit_code == 1 and "error" in r.output


def test_tvm_trace_json(tmp_path, marker):
    tvm = to_tvm_json(_layout_schedule().trace)
    tvm[0][1][2][2] = f"lambda i, j: {CODE.format(marker=marker)}"
    t = tmp_path / "t.json"
    t.write_text(json.dumps(tvm))
    r = _cli("schedule", _program(tmp_path), "--transform", t)
    assert r.exit_code == 1 and "pad_value" in r.output


def test_mlir_schedule_script(tmp_path, marker):
    text = trace_to_mlir(_layout_schedule().trace)
    assert "lambda indices_0, indices_1" in text
    text = text.replace(
        "lambda indices_0, indices_1: (T.float32(7.0),)",
        "lambda i, j: " + CODE.format(marker=marker).replace("'", "\\'"),
    )
    s = tmp_path / "s.mlir"
    s.write_text(text)
    r = _cli("schedule", _program(tmp_path), "--transform", s)
    assert r.exit_code == 1 and "error" in r.output


def test_sqlite_database(tmp_path, marker):
    path = tmp_path / "db.sqlite"
    mod = tir_mlir.parse(MM)
    db = SQLiteDatabase(path)
    db.commit_tuning_records(
        [TuningRecord(_layout_schedule().trace, db.commit_workload(mod), [1e-3], "llvm")]
    )
    db.close()
    conn = sqlite3.connect(path)
    conn.execute("UPDATE records SET trace = ?", (json.dumps(_payload_trace(marker)),))
    conn.execute("UPDATE workloads SET mod = ?", (CODE.format(marker=marker),))
    conn.commit()
    conn.close()
    with pytest.raises(TIRError):
        SQLiteDatabase(path).get_all_tuning_records()


def test_json_database(tmp_path, marker):
    paths = (tmp_path / "w.json", tmp_path / "r.json")
    mod = tir_mlir.parse(MM)
    db = JSONDatabase(*paths)
    db.commit_tuning_records(
        [TuningRecord(_layout_schedule().trace, db.commit_workload(mod), [1e-3], "llvm")]
    )
    line = json.loads(paths[1].read_text())
    line[1][0][0][1][2][2] = f"lambda i, j: {CODE.format(marker=marker)}"
    paths[1].write_text(json.dumps(line) + "\n")
    with pytest.raises(TIRError):
        JSONDatabase(*paths).get_all_tuning_records()


def test_export_library_pair(tmp_path, marker):
    path = tmp_path / "mm.so"
    tir_mlir.build(tir_mlir.parse(MM)).export_library(str(path))
    src = (
        f"#include <stdio.h>\n__attribute__((constructor)) static void f(void) "
        f'{{ fclose(fopen("{marker}", "w")); }}\n'
    )
    subprocess.run(
        ["cc", "-shared", "-fPIC", "-x", "c", "-", "-o", str(path)],
        input=src,
        text=True,
        check=True,
    )
    meta = json.loads(Path(f"{path}.json").read_text())
    meta["sha256"] = hashlib.sha256(path.read_bytes()).hexdigest()
    Path(f"{path}.json").write_text(json.dumps(meta))
    with pytest.raises(TIRError):
        tir_mlir.load_module(str(path))


def test_cache_folder(tmp_path, marker):
    cache = tmp_path / "cache"
    code = f"import tir_mlir; tir_mlir.parse({MM!r})"
    env = {**os.environ, "TIR_MLIR_CACHE_DIR": str(cache)}
    env.pop("TIR_MLIR_CACHE", None)
    subprocess.run([sys.executable, "-c", code], env=env, check=True)
    for tables in list(cache.glob("grammar-*")):
        for name in (tables.name, tables.with_suffix(".lark").name):
            (cache / name).write_bytes(pickle.dumps(_Pickled(marker)))
    subprocess.run([sys.executable, "-c", code], env=env, check=True)


def test_npy_input(tmp_path, marker):
    npy = tmp_path / "a.npy"
    np.save(npy, np.array([_Pickled(marker)], dtype=object), allow_pickle=True)
    r = _cli("run", _program(tmp_path), "-i", f"A={npy}")
    assert r.exit_code == 1 and "error" in r.output


def test_mlir_program_and_imported_linalg(tmp_path, marker):
    text = (
        f'module attributes {{x = "{CODE.format(marker=marker)}"}} {{\n  "tir."() : () -> ()\n}}\n'
    )
    f = tmp_path / "f.mlir"
    f.write_text(text)
    r = _cli("parse", f)
    assert r.exit_code == 1 and ":2:3: error:" in r.output
    with pytest.raises(TIRError):
        tir_mlir.from_linalg(text)
