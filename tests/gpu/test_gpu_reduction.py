"""Cross-thread reductions on the CUDA target (a reduction loop bound to threadIdx.*): PTX
accepted by ptxas, the shuffles and barriers each allreduce form needs, and the kernels' results
in the SIMT simulator (tests/support/gpu_sim.py, which also fails on unsynchronised accesses) against
numpy; the same schedule in the reference interpreter as well. Forms we cannot lower are refused, located."""

import subprocess
import textwrap
from pathlib import Path

import numpy as np
import pytest
from gpu_example_schedules import softmax_schedule
from gpu_sim import Race, simulate
from ptxas import PTXAS

import tir_mlir
from tir_mlir.errors import BuildError
from tir_mlir.passes.lowering.pipeline import emit_text, lower

DATA = Path(__file__).parent.parent / "data" / "gpu"

ROWSUM = textwrap.dedent("""
    @T.prim_func
    def rowsum(A: T.Buffer((ROWS, N), "DT"), B: T.Buffer((ROWS,), "DT")):
        for i in T.thread_binding(ROWS, thread="blockIdx.x"):
            for k in T.thread_binding(N, thread="threadIdx.x"):
                with T.block("B"):
                    vi, vk = T.axis.remap("SR", [i, k])
                    with T.init():
                        B[vi] = T.DT(0)
                    B[vi] = B[vi] + A[vi, vk]
""")


def rowsum(n, rows=4, dtype="float32"):
    src = ROWSUM.replace("ROWS", str(rows)).replace("N", str(n)).replace("DT", dtype)
    return tir_mlir.parse(src, "rowsum.tir")


def ptx_checked(mod, tmp_path, target="cuda"):
    """The PTX of `mod`, after ptxas assembled it (when ptxas is here)."""
    ptx = emit_text(mod.module, "ptx", target)
    if PTXAS is not None:
        path = tmp_path / "k.ptx"
        path.write_text(ptx)
        p = subprocess.run(
            [PTXAS, "-arch=sm_90", "-o", str(tmp_path / "k.cubin"), str(path)],
            capture_output=True,
            text=True,
        )
        assert p.returncode == 0, p.stderr
    return ptx


def run_simulated(mod, *arrays):
    return simulate(lower(mod.module, "cuda", "gpu"), *arrays)


# (threads, shuffles, barriers): <= 32 threads: one butterfly; whole warps: a butterfly per
# warp and one across warps (two barriers); 48: not whole warps, a shared-memory tree.
FORMS = [(16, 4, 0), (32, 5, 0), (64, 6, 2), (128, 7, 2), (1024, 10, 2), (48, 0, 8)]


@pytest.mark.parametrize("n,shuffles,barriers", FORMS)
def test_rowsum_allreduce_forms(n, shuffles, barriers, tmp_path):
    mod = rowsum(n)
    ptx = ptx_checked(mod, tmp_path)
    assert ptx.count("shfl.sync.bfly.b32") == shuffles
    assert ptx.count("bar.sync") == barriers
    rng = np.random.default_rng(n)
    a = rng.random((4, n), np.float32)
    b = np.full(4, 5.0, np.float32)
    sim = run_simulated(mod, a, b)
    np.testing.assert_allclose(b, a.sum(1), rtol=1e-5)
    assert sim.barriers == 4 * barriers  # four blocks
    c = np.zeros(4, np.float32)
    tir_mlir.interpret(mod, "rowsum", a, c)  # the same schedule, reference evaluator
    np.testing.assert_allclose(c, a.sum(1), rtol=1e-5)


def test_write_back_once_per_output(tmp_path):
    gpu = emit_text(rowsum(128).module, "gpu", "cuda")
    kernel = gpu.split("gpu.module")[1]
    # one store to B, after the last barrier, under `thread_id_x == 0`
    stores = [s for s in kernel.splitlines() if "memref.store" in s and "memref<4xf32>" in s]
    assert len(stores) == 1
    tail = kernel[kernel.rindex("gpu.barrier") :]
    assert stores[0] in tail.split("arith.cmpi eq, %thread_id_x, %c0")[1]


@pytest.mark.parametrize("dtype", ["int32", "float16", "float64"])
def test_other_types_reduce(dtype, tmp_path):
    mod = rowsum(64, dtype=dtype)
    ptx = ptx_checked(mod, tmp_path)
    # 32-bit: shuffles; 16/64-bit: a shared-memory tree
    assert ("shfl.sync" in ptx) == (dtype == "int32")
    a = (np.arange(4 * 64).reshape(4, 64) % 7).astype(dtype)
    b = np.zeros(4, dtype)
    run_simulated(mod, a, b)
    np.testing.assert_allclose(b, a.sum(1, dtype=dtype), rtol=1e-3)


MAX_2D = textwrap.dedent("""
    @T.prim_func
    def rowmax(A: T.Buffer((32, 64), "float32"), B: T.Buffer((32,), "float32")):
        for bx in T.thread_binding(8, thread="blockIdx.x"):
            for ty in T.thread_binding(4, thread="threadIdx.y"):
                for tx in T.thread_binding(64, thread="threadIdx.x"):
                    with T.block("B"):
                        vi = T.axis.spatial(32, bx * 4 + ty)
                        vk = T.axis.reduce(64, tx)
                        with T.init():
                            B[vi] = T.float32(-3.4028234663852886e38)
                        B[vi] = T.max(B[vi], A[vi, vk])
""")


def test_reduce_x_with_rows_on_y(tmp_path):
    """Four rows per block on threadIdx.y: four independent groups of two warps each."""
    mod = tir_mlir.parse(MAX_2D)
    ptx = ptx_checked(mod, tmp_path)
    assert "shfl.sync.bfly" in ptx and "max.NaN.f32" in ptx
    a = np.random.default_rng(1).standard_normal((32, 64)).astype(np.float32)
    b = np.zeros(32, np.float32)
    run_simulated(mod, a, b)
    np.testing.assert_array_equal(b, a.max(1))


def test_reduce_y_with_columns_on_x(tmp_path):
    """Reducing over threadIdx.y while threadIdx.x is spatial: groups are strided, so the
    shared-memory tree (no shuffles)."""
    src = MAX_2D.replace("bx * 4 + ty", "bx * 4 + tx").replace(
        "vk = T.axis.reduce(64, tx)", "vk = T.axis.reduce(64, ty)"
    )
    src = src.replace(
        'T.thread_binding(4, thread="threadIdx.y")', 'T.thread_binding(64, thread="threadIdx.y")'
    )
    src = src.replace(
        'T.thread_binding(64, thread="threadIdx.x")', 'T.thread_binding(4, thread="threadIdx.x")'
    )
    mod = tir_mlir.parse(src)
    ptx = ptx_checked(mod, tmp_path)
    assert "shfl.sync" not in ptx and "bar.sync" in ptx
    a = np.random.default_rng(2).standard_normal((32, 64)).astype(np.float32)
    b = np.zeros(32, np.float32)
    run_simulated(mod, a, b)
    np.testing.assert_array_equal(b, a.max(1))


def test_softmax_schedule(tmp_path):
    mod = softmax_schedule()
    ptx = ptx_checked(mod, tmp_path)
    assert "max.NaN.f32" in ptx and "shfl.sync.bfly" in ptx
    a = np.random.default_rng(3).standard_normal((16, 256)).astype(np.float32)
    b = np.zeros_like(a)
    run_simulated(mod, a, b)
    e = np.exp(a - a.max(1, keepdims=True))
    np.testing.assert_allclose(b, e / e.sum(1, keepdims=True), rtol=1e-5)
    c = np.zeros_like(a)
    tir_mlir.interpret(mod, "softmax", a, c)
    np.testing.assert_allclose(c, e / e.sum(1, keepdims=True), rtol=1e-5)


def test_rfactor_then_bind(tmp_path):
    """TVM's rfactor + bind: the rf block is spatial over the threads; the write-back block's
    reduction over the rf buffer is the cross-thread reduction."""
    sch = tir_mlir.Schedule(_serial_rowsum())
    b = sch.get_block("B")
    i, k = sch.get_loops(b)
    _, ki = sch.split(k, [None, 32])
    rf = sch.rfactor(ki, 0)
    # (as TVM: the old handles stay on the write-back's loops; the rf nest is new)
    sch.bind(sch.get_loops(rf)[0], "blockIdx.x")
    sch.bind(sch.get_loops(rf)[-1], "threadIdx.x")
    sch.reverse_compute_at(b, sch.get_loops(rf)[0])
    sch.bind(sch.get_loops(b)[-1], "threadIdx.x")
    ptx = ptx_checked(sch.mod, tmp_path)
    assert ptx.count("shfl.sync.bfly") == 5
    a = np.random.default_rng(4).random((8, 128), np.float32)
    out = np.zeros(8, np.float32)
    run_simulated(sch.mod, a, out)
    np.testing.assert_allclose(out, a.sum(1), rtol=1e-5)


def _serial_rowsum():
    return tir_mlir.parse(
        ROWSUM.replace("ROWS", "8")
        .replace("N", "128")
        .replace("DT", "float32")
        .replace('T.thread_binding(8, thread="blockIdx.x")', "T.serial(8)")
        .replace('T.thread_binding(128, thread="threadIdx.x")', "T.serial(128)")
    )


def _error(mod):
    with pytest.raises(BuildError) as e:
        emit_text(mod.module, "gpu", "cuda")
    return e.value


def test_reduction_over_blocks_is_refused():
    src = ROWSUM.replace("ROWS", "4").replace("N", "64").replace("DT", "float32")
    src = src.replace('thread="blockIdx.x"', 'thread="threadIdx.x"').replace(
        'T.thread_binding(64, thread="threadIdx.x")', 'T.thread_binding(64, thread="blockIdx.x")'
    )
    e = _error(tir_mlir.parse(src, "p.tir"))
    assert "block 'B' reduces across threads (loop 'k' bound to blockIdx.x)" in e.message
    assert "would need atomics" in e.message and e.loc.line == 5


def test_unknown_combiner_is_refused():
    src = ROWSUM.replace("ROWS", "4").replace("N", "64").replace("DT", "float32")
    src = src.replace("B[vi] + A[vi, vk]", "B[vi] - A[vi, vk]")
    e = _error(tir_mlir.parse(src, "p.tir"))
    assert "block 'B' reduces across threads" in e.message
    assert "not add/mul/max/min of the buffer" in e.message and e.loc.line == 5


def test_guarded_allreduce_is_refused():
    """A sibling loop bound to threadIdx.x is longer: the reduction would run under a guard,
    where not every thread reaches its shuffles and barriers."""
    src = textwrap.dedent("""
        @T.prim_func
        def f(A: T.Buffer((4, 64), "float32"), B: T.Buffer((4,), "float32"),
              C: T.Buffer((4, 128), "float32")):
            for i in T.thread_binding(4, thread="blockIdx.x"):
                for t in T.thread_binding(128, thread="threadIdx.x"):
                    with T.block("c"):
                        vi, vt = T.axis.remap("SS", [i, t])
                        C[vi, vt] = T.float32(1)
                for k in T.thread_binding(64, thread="threadIdx.x"):
                    with T.block("B"):
                        vi, vk = T.axis.remap("SR", [i, k])
                        with T.init():
                            B[vi] = T.float32(0)
                        B[vi] = B[vi] + A[vi, vk]
    """)
    e = _error(tir_mlir.parse(src, "p.tir"))
    assert "needs every thread of the block, but it runs under a guard" in e.message
    assert e.loc.line == 10


def test_simulator_reports_a_missing_barrier():
    """The race detector: drop the barrier between staging a row in shared memory and
    reading it back by other threads."""
    module = lower(tir_mlir.load(DATA / "softmax.tir").module, "cuda", "gpu")
    barrier = next(o for o in _walk(module.operation) if o.name == "gpu.barrier")
    barrier.erase()
    a = np.ones((64, 128), np.float32)
    with pytest.raises(Race, match="no barrier between"):
        simulate(module, a, np.zeros_like(a))


def _walk(op):
    for r in op.regions:
        for b in r.blocks:
            for o in b.operations:
                yield o.operation
                yield from _walk(o.operation)


def test_split_that_does_not_divide(tmp_path):
    """k = 100 split by 32 and bound: the T.where'd-out threads contribute the identity, and
    the write-back keeps only the predicate's spatial part."""
    sch = tir_mlir.Schedule(
        tir_mlir.parse(
            ROWSUM.replace("ROWS", "4")
            .replace("N", "100")
            .replace("DT", "float32")
            .replace('T.thread_binding(4, thread="blockIdx.x")', "T.serial(4)")
            .replace('T.thread_binding(100, thread="threadIdx.x")', "T.serial(100)")
        )
    )
    i, k = sch.get_loops(sch.get_block("B"))
    _, ki = sch.split(k, [None, 32])
    sch.bind(i, "blockIdx.x")
    sch.bind(ki, "threadIdx.x")
    ptx_checked(sch.mod, tmp_path)
    a = np.random.default_rng(5).random((4, 100), np.float32)
    out = np.zeros(4, np.float32)
    run_simulated(sch.mod, a, out)
    np.testing.assert_allclose(out, a.sum(1), rtol=1e-5)
