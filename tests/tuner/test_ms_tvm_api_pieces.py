"""TVM 0.21's meta-schedule API pieces that its own tests use (benchmarks/tvm_ms_tests.py runs
those tests; these are the same behaviours without TVM): union and user databases, TVM's
record validity, `Database.query`/`current`, `TuningRecord.as_json`/`from_json`, targets keyed
by the flags that tell machines apart, `Trace.simplified`, mutators' `rand_state`,
PySpaceGenerator, DisallowDynamicLoop on a triangular nest."""

from pathlib import Path

import pytest

import tir_mlir
import tir_mlir.meta_schedule as ms
from tir_mlir.meta_schedule.arg_info import ArgInfo
from tir_mlir.meta_schedule.database import (
    JSONDatabase,
    MemoryDatabase,
    OrderedUnionDatabase,
    PyDatabase,
    TuningRecord,
    UnionDatabase,
)
from tir_mlir.meta_schedule.target_key import canonical_target

ROOT = Path(__file__).parent.parent.parent
MM_RELU = (ROOT / "examples" / "mm_relu.tir").read_text()
TARGET = "llvm -num-cores=2"


def _mod():
    return tir_mlir.parse(MM_RELU)


def _split(mod, factor):
    sch = tir_mlir.Schedule(mod)
    _, j, _ = sch.get_loops(sch.get_block("Y"))
    sch.split(j, factors=[None, factor])
    return sch


def _commit(db, mod, secs, factor=4):
    db.commit_tuning_record(
        TuningRecord(
            _split(mod, factor).trace,
            db.commit_workload(mod),
            secs,
            TARGET,
            ArgInfo.from_entry_func(mod),
        )
    )


def test_union_databases():
    mod = _mod()
    first, second = MemoryDatabase(), MemoryDatabase()
    _commit(first, mod, [1.0])
    _commit(second, mod, [0.5], factor=8)
    assert UnionDatabase(first, second).query_tuning_record(mod, TARGET).run_secs == [0.5]
    assert OrderedUnionDatabase(first, second).query_tuning_record(mod, TARGET).run_secs == [1.0]
    with pytest.raises(RuntimeError, match="read-only"):
        UnionDatabase(first).commit_workload(mod)


@pytest.mark.parametrize("kind", ["memory", "json"])
def test_top_k_keeps_tvms_valid_records(tmp_path, kind):
    """A time of 0 s is a measurement; [] / None / all-1e10 (TVM's stub) are not."""
    db = (
        MemoryDatabase()
        if kind == "memory"
        else JSONDatabase(tmp_path / "w.json", tmp_path / "r.json")
    )
    mod = _mod()
    for secs in ([1.5, 4.5], [], [0.0, 2.0], None, [2.0], [3.0, 1e10], [1e10]):
        _commit(db, mod, secs)
    top = db.get_top_k(db.commit_workload(mod), 5)
    assert [r.run_secs for r in top] == [[0.0, 2.0], [2.0], [1.5, 4.5], [3.0, 1e10]]
    assert db.get_top_k(db.commit_workload(mod), 0) == []


def test_query_kinds_current_and_record_json():
    mod, db = _mod(), MemoryDatabase(module_equality="ignore-ndarray")
    _commit(db, mod, [1e-3], factor=8)
    record = db.query(mod, TARGET, kind="record")
    assert record.run_secs == [1e-3]
    assert (
        db.query(mod, TARGET, kind="schedule").mod.script()
        == db.query(mod, TARGET, kind="ir_module").script()
        == _split(mod, 8).mod.script()
    )
    with pytest.raises(ValueError, match="unknown query kind"):
        db.query(mod, TARGET, kind="trace")
    with pytest.raises(ValueError, match="module_equality"):
        MemoryDatabase(module_equality="by-name")
    assert ms.database.Database.current() is None
    with db:
        assert ms.database.Database.current() is db
    assert ms.database.Database.current() is None
    again = TuningRecord.from_json(record.as_json(), record.workload)
    assert str(again.trace) == str(record.trace) and again.run_secs == record.run_secs
    assert again.target == record.target


def test_targets_keep_only_the_machine_flags():
    tvm_style = "llvm -keys=cpu -mcpu=znver4 -mtriple=x86_64-unknown-linux-gnu -num-cores=2"
    assert canonical_target(tvm_style) == "llvm -mcpu=znver4 -num-cores=2"
    assert (
        canonical_target("cuda -keys=cuda,gpu -arch=sm_80 -max_num_threads=1024")
        == "cuda -arch=sm_80"
    )


class _Records(PyDatabase):
    """A user's database, as TVM's tests write one."""

    def __init__(self):
        super().__init__()
        self.records, self.workloads = [], []

    def has_workload(self, mod):
        return any(w.shash == ms.database.Workload(mod).shash for w in self.workloads)

    def commit_workload(self, mod):
        w = ms.database.Workload(mod)
        if not self.has_workload(mod):
            self.workloads.append(w)
        return next(x for x in self.workloads if x.shash == w.shash)

    def commit_tuning_record(self, record):
        self.records.append(record)

    def get_all_tuning_records(self):
        return self.records

    def get_top_k(self, workload, top_k):
        mine = [r for r in self.records if r.workload.shash == workload.shash]
        return sorted(mine, key=lambda r: sum(r.run_secs) / len(r.run_secs))[:top_k]

    def __len__(self):
        return len(self.records)


def test_a_users_database_answers_tvms_queries():
    db = ms.derived_object(_Records)()
    mod = _mod()
    _commit(db, mod, [2.0], factor=4)
    _commit(db, mod, [1.0], factor=16)
    assert len(db) == 2
    assert db.query(mod, TARGET, kind="record").run_secs == [1.0]
    assert db.query(mod, TARGET, kind="ir_module").script() == _split(mod, 16).mod.script()


def test_trace_simplified_drops_unused_queries():
    sch = tir_mlir.Schedule(_mod())
    block = sch.get_block("Y")
    loops = sch.get_loops(block)
    sch.get_consumers(block)
    assert sch.trace.simplified(remove_postproc=True).insts == []
    factors = sch.sample_perfect_tile(loops[0], n=2)
    sch.split(loops[0], factors)
    kept = [i.name for i in sch.trace.simplified(remove_postproc=True).insts]
    assert kept == ["get_block", "get_loops", "sample_perfect_tile", "split"]


def test_mutators_take_tvms_rand_state():
    sch = tir_mlir.Schedule(_mod(), seed=1)
    i, _, _ = sch.get_loops(sch.get_block("Y"))
    sch.split(i, sch.sample_perfect_tile(i, n=2, max_innermost_factor=128, decision=[8, 16]))
    mutator = ms.mutator.MutateTileSize()
    seen = {tuple(mutator.apply(sch.trace).decisions[2]) for _ in range(30)}  # rand_state=-1
    assert len(seen) > 1 and all(a * b == 128 for a, b in seen)
    assert mutator.apply(sch.trace, 7).decisions == mutator.apply(sch.trace, 7).decisions


def test_py_space_generator_must_be_overridden():
    class Empty(ms.space_generator.PySpaceGenerator):
        pass

    with pytest.raises(NotImplementedError, match="InitializeWithTuneContext"):
        ms.derived_object(Empty)()._initialize_with_tune_context(None)


def test_disallow_dynamic_loop_rejects_a_triangular_nest():
    triangular = tir_mlir.parse("""
@T.prim_func
def main(A: T.Buffer((64, 64), "float32"), C: T.Buffer((64, 64), "float32")):
    for i, j in T.grid(64, 64):
        for k in T.serial(0, i):
            with T.block("C"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    C[vi, vj] = T.float32(0)
                C[vi, vj] = C[vi, vj] + A[vi, vk]
""")
    assert not ms.postproc.DisallowDynamicLoop().apply(tir_mlir.Schedule(triangular))
    assert ms.postproc.DisallowDynamicLoop().apply(tir_mlir.Schedule(_mod()))


def test_verify_gpu_code_checks_tvms_thread_extent_bounds():
    add = tir_mlir.parse("""
@T.prim_func
def main(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32")):
    for i, j in T.grid(64, 64):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] + T.float32(1)
""")
    verify = ms.postproc.VerifyGPUCode()
    verify.target = ms.target.Target("cuda")
    for low, high, ok in ((0, 32, True), (0, 16, False), (64, 1024, False)):
        sch = tir_mlir.Schedule(add)
        block = sch.get_block("B")
        i, j = sch.get_loops(block)
        sch.bind(i, "blockIdx.x")
        jo, ji = sch.split(j, [None, 32])
        sch.bind(ji, "threadIdx.x")
        sch.annotate(block, "meta_schedule.thread_extent_low_inclusive", low)
        sch.annotate(block, "meta_schedule.thread_extent_high_inclusive", high)
        assert verify.apply(sch) is ok


def test_mutate_thread_binding_draws_another_thread_count():
    sch = tir_mlir.Schedule(_mod())
    i, j, _ = sch.get_loops(sch.get_block("Y"))
    fused = sch.fuse(i, j)
    cands = [32, 64, 128, 256, 512, 1024]
    v = sch.sample_categorical(cands, [1 / 6] * 6, decision=3)
    bx, tx = sch.split(fused, [None, v])
    sch.bind(bx, "blockIdx.x")
    sch.bind(tx, "threadIdx.x")
    k = next(n for n, inst in enumerate(sch.trace.insts) if inst.name == "sample_categorical")
    seen = {ms.mutator.MutateThreadBinding().apply(sch.trace, s).decisions[k] for s in range(60)}
    assert seen == {0, 1, 2, 4, 5}
    assert ms.mutator.MutateThreadBinding().apply(tir_mlir.Schedule(_mod()).trace) is None


@pytest.mark.parametrize("n,blocks,threads", [(512, 256, 1024), (2048, 256, 1024), (16, 1, 256)])
def test_rewrite_unbound_block_binds_tvms_way(n, blocks, threads):
    add = tir_mlir.parse(f"""
@T.prim_func
def main(A: T.Buffer(({n}, {n}), "float32"), B: T.Buffer(({n}, {n}), "float32")):
    for i, j in T.grid({n}, {n}):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] + T.float32(1)
""")
    sch = tir_mlir.Schedule(add)
    post = ms.postproc.RewriteUnboundBlock()
    post.target = ms.target.Target("cuda")
    assert post.apply(sch)
    loops = [sch.get(lp) for lp in sch.get_loops(sch.get_block("B"))]
    assert [(lp.thread_binding, int(lp.extent)) for lp in loops[:2]] == [
        ("blockIdx.x", blocks),
        ("threadIdx.x", threads),
    ]
    assert [int(lp.extent) for lp in loops[2:]] == (
        [n * n // (blocks * threads)] if n * n > blocks * threads else []
    )
    again = sch.mod.script()
    assert post.apply(sch) and sch.mod.script() == again  # bound blocks are left alone


def test_default_postprocessors_are_tvms_in_tvms_order():
    # TVM 0.21's Postproc::DefaultLLVM / DefaultCUDA / DefaultCUDATensorCore.
    def names(kind):
        return [type(p).__name__ for p in ms.postproc.create(kind)]

    assert names("llvm") == [
        "DisallowDynamicLoop",
        "RewriteParallelVectorizeUnroll",
        "RewriteReductionBlock",
        "RewriteLayout",
    ]
    cuda = [
        "DisallowDynamicLoop",
        "RewriteCooperativeFetch",
        "RewriteUnboundBlock",
        "RewriteParallelVectorizeUnroll",
        "RewriteReductionBlock",
        "VerifyGPUCode",
    ]
    assert names("cuda") == cuda
    assert names("cuda-tensorcore") == [*cuda, "RewriteTensorize"]
    assert ms.postproc.create("cuda")[2].max_threadblocks == 256
