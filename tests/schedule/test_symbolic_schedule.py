"""Schedules over functions with symbolic shapes (`n = T.int32()`), on the symbolic IR
itself: the same schedule script applied by TVM 0.21 and by tir-mlir prints the same text,
and both built once and run at three sizes give the same numbers; what cannot hold for every
size (a tile sampled at one size) is a ScheduleError at schedule time."""

from pathlib import Path

import numpy as np
import pytest

import tir_mlir
from tir_mlir.errors import RuntimeCallError, ScheduleError
from python_sources import load_python_source

SOURCE = Path(__file__).parent.parent / "data" / "frontend" / "python" / "symbolic.py"
SIZES = (1, 13, 64)


def _load(tmp_path, imports, tag):
    return load_python_source(SOURCE, tmp_path, imports, tag)


@pytest.fixture
def ours(tmp_path):
    return _load(tmp_path, "from tir_mlir.script import tir as T", "ours_sched")


def sched_add(sch):
    i, j = sch.get_loops(sch.get_block("C"))
    outer, inner = sch.split(sch.fuse(i, j), [None, 8])
    sch.parallel(outer)
    sch.vectorize(inner)


def sched_row_sum(sch):
    i, k = sch.get_loops(sch.get_block("B"))
    i0, i1 = sch.split(i, [None, 4])
    sch.parallel(i0)
    k0, k1 = sch.split(k, [None, 8])
    sch.reorder(k0, i1)


def sched_axpy(sch):
    i, j = sch.get_loops(sch.get_block("B"))
    sch.split(i, [None, 2])


@pytest.mark.tvm
def test_same_numbers_as_tvm_at_three_sizes(ours, tmp_path):
    import tvm

    theirs = _load(tmp_path, "from tvm.script import tir as T", "tvm_sched")
    rng = np.random.default_rng(0)
    libs = {}
    for name, fn in (("add", sched_add), ("row_sum", sched_row_sum)):
        sch = tir_mlir.Schedule(getattr(ours, name))
        fn(sch)
        tsch = tvm.tir.Schedule(getattr(theirs, name))
        fn(tsch)
        libs[name] = (tir_mlir.build(sch.mod)[name], tvm.build(tsch.mod, target="llvm"))
    for n in SIZES:
        a, b = rng.random((n, 16), dtype="float32"), rng.random((n, 16), dtype="float32")
        c, c_tvm = np.zeros_like(a), tvm.nd.array(np.zeros_like(a))
        libs["add"][0](a, b, c)
        libs["add"][1](tvm.nd.array(a), tvm.nd.array(b), c_tvm)
        np.testing.assert_allclose(c, c_tvm.numpy())
        x = rng.random((n, n + 3), dtype="float32")
        s, s_tvm = np.zeros(n, "float32"), tvm.nd.array(np.zeros(n, "float32"))
        libs["row_sum"][0](x, s)
        libs["row_sum"][1](tvm.nd.array(x), s_tvm)
        np.testing.assert_allclose(s, s_tvm.numpy(), rtol=1e-5)


def test_scalar_parameters_scheduled(ours):
    # (TVM 0.21 cannot build a float scalar parameter: its LLVM debug info fails to verify)
    sch = tir_mlir.Schedule(ours.axpy)
    sched_axpy(sch)
    lib = tir_mlir.build(sch.mod)
    rng = np.random.default_rng(1)
    for n, chunk in zip(SIZES, (3, 4, 64)):
        v, w = rng.random(n, dtype="float32"), rng.random(n, dtype="float32")
        want = w + 2.5 * v
        lib["axpy"](v, w, 2.5, chunk)
        np.testing.assert_allclose(w, want, rtol=1e-6)


def test_scheduled_function_prints_as_tvm_and_checks_arguments(ours, tmp_path):
    theirs = None
    try:
        import tvm

        theirs = _load(tmp_path, "from tvm.script import tir as T", "tvm_print")
    except ImportError:
        pass
    sch = tir_mlir.Schedule(ours.add)
    sched_add(sch)
    mod = sch.mod  # an ordinary IRModule of the symbolic program
    assert isinstance(mod, tir_mlir.IRModule)
    text = mod.script()
    assert "n = T.int32()" in text and "T.parallel(n * 2)" in text and "T.vectorized(8)" in text
    sums = tir_mlir.Schedule(ours.row_sum)
    sched_row_sum(sums)
    assert "for i_0 in T.parallel((n + T.int64(3)) // T.int64(4)):" in sums.mod.script()
    chunks = tir_mlir.Schedule(ours.axpy)
    sched_axpy(chunks)  # ceildiv(ceildiv(n, chunk), 2): symbolic too
    text = chunks.mod.script()
    assert "for i_0, i_1, j in T.grid(((n + chunk - 1) // chunk + 1) // 2, 2, chunk):" in text
    assert (
        "T.where((i_0 * 2 + i_1) * chunk + j < n and i_0 * 2 + i_1 < (n + chunk - 1) "
        "// chunk)" in text
    )
    if theirs is not None:  # (an extra oracle: TVM 0.21 prints the same)
        for name, fn, got in (
            ("add", sched_add, mod),
            ("row_sum", sched_row_sum, sums.mod),
            ("axpy", sched_axpy, chunks.mod),
        ):
            tsch = tvm.tir.Schedule(getattr(theirs, name))
            fn(tsch)
            assert _body(tsch.mod["main"].script()) == _body(got.script())
    lib = tir_mlir.build(mod)
    z = np.zeros
    with pytest.raises(RuntimeCallError, match="n is 4 from dimension 0 of 'A' but 5"):
        lib["add"](z((4, 16), "float32"), z((5, 16), "float32"), z((4, 16), "float32"))
    # scheduling goes on from a scheduled symbolic function, like Schedule(sch.mod) in TVM
    sch2 = tir_mlir.Schedule(mod)
    sch2.unroll(sch2.get_loops(sch2.get_block("C"))[1])
    a = np.ones((3, 16), "float32")
    c = np.zeros_like(a)
    tir_mlir.build(sch2.mod)["add"](a, a, c)
    np.testing.assert_allclose(c, 2 * a)
    assert "T.unroll(8)" in sch2.mod.script()


def _body(text: str) -> str:
    return text.split('# with T.block("root"):', 1)[1]


def test_sampling_keeps_a_symbolic_loop_whole(ours):
    """TVM: no perfect tile exists for every n, so sample_perfect_tile gives [-1, 1] (the loop
    stays whole) and a decision tuned at one size is refused for the symbolic program."""
    sch = tir_mlir.Schedule(ours.add)
    i, _ = sch.get_loops(sch.get_block("C"))
    with pytest.raises(
        ScheduleError,
        match=r"the loop's extent is symbolic, so the only "
        r"decision is \[-1, 1\], got \[97, 1\]",
    ):
        sch.sample_perfect_tile(i, n=2, decision=[97, 1])
    sch.split(i, sch.sample_perfect_tile(i, n=2))
    assert "for i_0, i_1, j in T.grid(n, 1, 16):" in sch.mod.script()
    lib = tir_mlir.build(sch.mod)
    for n in (5, 97):
        z = np.zeros((n, 16), "float32")
        lib["add"](z + 1, z + 2, z)
        np.testing.assert_allclose(z, 3)


def test_illegal_primitive_is_refused_at_schedule_time(ours):
    sch = tir_mlir.Schedule(ours.row_sum)
    _, k = sch.get_loops(sch.get_block("B"))
    with pytest.raises(ScheduleError, match="not a data parallel"):
        sch.parallel(k)
