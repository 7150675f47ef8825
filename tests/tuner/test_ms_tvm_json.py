"""Tuning logs move between TVM 0.21's JSONDatabase and tir-mlir's, both ways, as they are:
TVM writes, we query and replay; we write, TVM queries and replays (both write the program
as TVM's serialised IRModule). A workloads file with TVMScript payloads (older tir-mlir
files) still reads."""

import base64
import json

import pytest

import tir_mlir
from tir_mlir.meta_schedule.arg_info import ArgInfo
from tir_mlir.meta_schedule.database import JSONDatabase, TuningRecord
from tir_mlir.meta_schedule.target_key import canonical_target

import tvm_oracle

pytestmark = pytest.mark.tvm
tvm = tvm_oracle.import_tvm()
ms = tvm.meta_schedule

PROGRAM = """# from tvm.script import ir as I
# from tvm.script import tir as T

@I.ir_module
class Module:
    @T.prim_func
    def main(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32"), C: T.Buffer((64, 64), "float32")):
        T.func_attr({"tir.noalias": True})
        Y = T.alloc_buffer((64, 64))
        for i, j, k in T.grid(64, 64, 64):
            with T.block("Y"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    Y[vi, vj] = T.float32(0.0)
                Y[vi, vj] = Y[vi, vj] + A[vi, vk] * B[vk, vj]
        for i, j in T.grid(64, 64):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = T.max(Y[vi, vj], T.float32(0.0))
"""
TARGET = "llvm -num-cores=2"


def schedule(sch):
    """TVM-API calls both schedulers accept, sampling instructions included."""
    b = sch.get_block("Y", func_name="main")
    i, j, k = sch.get_loops(b)
    j0, j1 = sch.split(j, factors=sch.sample_perfect_tile(j, n=2, max_innermost_factor=16))
    i0, i1 = sch.split(i, factors=[None, 8])
    sch.reorder(i0, j0, k, i1, j1)
    sch.annotate(
        b, "meta_schedule.unroll_explicit", sch.sample_categorical([0, 16, 64], [0.25, 0.25, 0.5])
    )
    sch.reverse_compute_at(sch.get_block("C", func_name="main"), j0)
    sch.parallel(i0)
    sch.vectorize(j1)
    sch.decompose_reduction(b, k)


def tvm_workloads_to_script(path):
    """TVM side: rewrite TVM's workloads file with TVMScript payloads (docs/meta_schedule.md)."""
    lines = []
    with open(path) as f:
        for line in f:
            shash, payload = json.loads(line)
            w = ms.database.Workload.from_json(tvm.runtime.convert([shash, payload]))
            lines.append(json.dumps([shash, base64.b64encode(w.mod.script().encode()).decode()]))
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def test_tvm_log_read_by_tir_mlir(tmp_path):
    paths = str(tmp_path / "w.json"), str(tmp_path / "r.json")
    tmod = tvm.script.from_source(PROGRAM)
    tdb = ms.database.JSONDatabase(*paths, allow_missing=True)
    sch = tvm.tir.Schedule(tmod, seed=7)
    schedule(sch)
    twl = tdb.commit_workload(tmod)
    tdb.commit_tuning_record(
        ms.database.TuningRecord(
            sch.trace,
            twl,
            [2e-4, 2.2e-4],
            tvm.target.Target(TARGET),
            ms.arg_info.ArgInfo.from_prim_func(tmod["main"]),
        )
    )
    del tdb
    mod = tir_mlir.parse(PROGRAM)
    for converted in (False, True):  # TVM's file as it is; with TVMScript payloads
        if converted:
            tvm_workloads_to_script(paths[0])
        db = JSONDatabase(*paths)
        assert len(db) == 1
        best = db.query_best(mod, TARGET)
        assert best.run_secs == [2e-4, 2.2e-4]
        assert best.target == canonical_target(TARGET)
        assert best.args_info == ArgInfo.from_entry_func(mod)
        assert str(best.trace).splitlines()[1:] == str(sch.trace).splitlines()[1:]
        assert db.query_ir_module(mod, TARGET).script() == sch.mod.script()


def test_tir_mlir_log_read_by_tvm(tmp_path):
    paths = str(tmp_path / "w.json"), str(tmp_path / "r.json")
    mod = tir_mlir.parse(PROGRAM)
    sch = tir_mlir.Schedule(mod, seed=11)
    schedule(sch)
    db = JSONDatabase(*paths)
    w = db.commit_workload(mod)
    db.commit_tuning_record(
        TuningRecord(sch.trace, w, [3e-4], TARGET, ArgInfo.from_entry_func(mod))
    )
    tdb = ms.database.JSONDatabase(*paths)
    tmod = tvm.script.from_source(PROGRAM)
    target = tvm.target.Target(TARGET)
    (rec,) = tdb.get_top_k(tdb.commit_workload(tmod), 1)
    assert [float(x) for x in rec.run_secs] == [3e-4]
    assert str(rec.trace).splitlines()[1:] == str(sch.trace).splitlines()[1:]
    tsch = tdb.query_schedule(tmod, target, "main")
    assert tsch.mod.script() == sch.mod.script()


def test_empty_trace_record_read_by_tvm(tmp_path):
    """The unscheduled program's record (the task scheduler's trial 0, the empty trace): TVM
    loads it with the others; its queries skip a record without instructions (a record TVM
    writes for an empty trace too), so TVM answers with the best schedule."""
    paths = str(tmp_path / "w.json"), str(tmp_path / "r.json")
    mod = tir_mlir.parse(PROGRAM)
    sch = tir_mlir.Schedule(mod, seed=11)
    schedule(sch)
    db = JSONDatabase(*paths)
    w = db.commit_workload(mod)
    args_info = ArgInfo.from_entry_func(mod)
    empty = tir_mlir.Schedule(mod).trace
    assert not empty.insts
    db.commit_tuning_records(
        [
            TuningRecord(empty, w, [1e-4], TARGET, args_info),
            TuningRecord(sch.trace, w, [3e-4], TARGET, args_info),
        ]
    )
    assert db.query_best(mod, TARGET).trace.insts == []  # tir-mlir: the unscheduled program
    tdb = ms.database.JSONDatabase(*paths)
    records = tdb.get_all_tuning_records()
    assert sorted(len(r.trace.insts) for r in records) == [0, len(sch.trace.insts)]
    assert [float(x) for r in records if not r.trace.insts for x in r.run_secs] == [1e-4]
    tmod = tvm.script.from_source(PROGRAM)
    (rec,) = tdb.get_top_k(tdb.commit_workload(tmod), 2)
    assert [float(x) for x in rec.run_secs] == [3e-4]
    tsch = tdb.query_schedule(tmod, tvm.target.Target(TARGET), "main")
    assert tsch.mod.script() == sch.mod.script()
