"""build / call / time / export: numbers against numpy, errors naming buffers and locations."""

import ml_dtypes
import numpy as np
import pytest

import tir_mlir
from tir_mlir.errors import OutOfBoundsError, RuntimeCallError
from tir_mlir.runtime import compile_cache
from tir_mlir.runtime.build import RECENT_CALLS as RECENT

import lowering_programs as P

RNG = np.random.default_rng(0)


def test_matmul_f32_matches_numpy_and_rebuild_is_cached():
    mod = P.matmul(64)
    lib = tir_mlir.build(mod, target="llvm")
    a, b = RNG.random((64, 64), np.float32), RNG.random((64, 64), np.float32)
    c = np.full((64, 64), 7, np.float32)
    lib["matmul"](a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-5)
    compiles = compile_cache.STATS["compiles"]
    tir_mlir.build(P.matmul(64))
    assert compile_cache.STATS["compiles"] == compiles


def test_int8_matmul_accumulates_in_int32():
    lib = tir_mlir.build(P.matmul(32, "i8", "i32"))
    a = RNG.integers(-128, 128, (32, 32)).astype(np.int8)
    b = RNG.integers(-128, 128, (32, 32)).astype(np.int8)
    c = np.zeros((32, 32), np.int32)
    lib["matmul"](a, b, c)
    np.testing.assert_array_equal(c, a.astype(np.int32) @ b.astype(np.int32))


def test_float16_elementwise_chain():
    body = (
        "%e = math.exp %a : f16\n%t = arith.constant 2.0 : f16\n"
        "%m = arith.mulf %e, %t : f16\n%r = arith.subf %m, %a : f16"
    )
    lib = tir_mlir.build(P.elementwise(100, "f16", body))
    a = RNG.uniform(-1, 1, 100).astype(np.float16)
    b = np.zeros(100, np.float16)
    lib["ew"](a, b)
    np.testing.assert_allclose(b, np.exp(a) * 2 - a, rtol=2e-3, atol=2e-3)


def test_bfloat16_and_unsigned_and_bool():
    bf = ml_dtypes.bfloat16
    lib = tir_mlir.build(P.elementwise(16, "bf16", "%r = arith.addf %a, %a : bf16"))
    a = np.arange(16).astype(bf)
    b = np.zeros(16, bf)
    lib["ew"](a, b)
    np.testing.assert_array_equal(b.astype(np.float32), 2 * np.arange(16, dtype=np.float32))

    body = "%c = arith.constant 200 : i8\n%r = arith.cmpi ugt, %a, %c : i8"
    mod = P.elementwise(8, "i8", body, out_t="i1", extra_in=', tir.dtype = "uint8"')
    lib = tir_mlir.build(mod)
    a = np.array([0, 100, 199, 200, 201, 255, 3, 250], np.uint8)
    out = np.zeros(8, bool)
    lib["ew"](a, out)
    np.testing.assert_array_equal(out, a > 200)


def test_parallel_vectorized_unroll_loops_compute_the_same():
    a = RNG.random((64, 48), np.float32)
    for kinds in [("parallel", "vectorized"), ("unroll", "serial"), ("serial", "unroll")]:
        b = np.zeros_like(a)
        tir_mlir.build(P.scale_2d(64, 48, kinds))["scale"](a, b)
        np.testing.assert_allclose(b, a * 2 + 1, rtol=1e-6, err_msg=str(kinds))


def test_predicate_and_intrinsics():
    a = RNG.uniform(-3, 3, 37).astype(np.float32)
    b = np.zeros(37, np.float32)
    tir_mlir.build(P.split_where(37, 8))["where"](a, b)
    v = np.arange(37)
    np.testing.assert_allclose(b, 1 / (1 + np.exp(-a)) + np.mod(v - 5, 3), rtol=1e-5)


def test_argument_errors_name_the_buffer():
    lib = tir_mlir.build(P.matmul(8))
    f32 = np.zeros((8, 8), np.float32)
    with pytest.raises(RuntimeCallError, match="buffer 'B' expects dtype float32, got float64"):
        lib["matmul"](f32, np.zeros((8, 8)), f32)
    with pytest.raises(RuntimeCallError, match=r"buffer 'C' expects shape \(8, 8\), got \(8, 9\)"):
        lib["matmul"](f32, f32, np.zeros((8, 9), np.float32))
    with pytest.raises(RuntimeCallError, match="buffer 'A' is not C-contiguous"):
        lib["matmul"](np.zeros((8, 8), np.float32).T, f32, f32)
    with pytest.raises(RuntimeCallError, match="takes 3 buffers"):
        lib["matmul"](f32, f32)
    with pytest.raises(RuntimeCallError, match="no function named 'mm'"):
        lib["mm"]


def test_time_evaluator_reports_seconds():
    lib = tir_mlir.build(P.matmul(32))
    a = np.ones((32, 32), np.float32)
    c = np.zeros((32, 32), np.float32)
    res = lib.time_evaluator("matmul", number=2, repeat=3, min_repeat_ms=5)(a, a, c)
    assert len(res.results) == 3 and 0 < res.min <= res.median <= res.max < 0.01
    assert res.mean > 0
    np.testing.assert_array_equal(c, np.full((32, 32), 32, np.float32))


def test_export_library_and_load_module(tmp_path):
    lib = tir_mlir.build(P.scale_2d(16, 32, ("parallel", "vectorized")))
    path = tmp_path / "scale.so"
    lib.export_library(path)
    loaded = tir_mlir.load_module(path)
    a = RNG.random((16, 32), np.float32)
    b = np.zeros_like(a)
    loaded["scale"](a, b)
    np.testing.assert_allclose(b, a * 2 + 1, rtol=1e-6)
    with pytest.raises(RuntimeCallError, match="buffer 'A' expects dtype float32"):
        loaded["scale"](a.astype(np.float64), b)


def test_debug_build_reports_out_of_bounds_store_without_crashing():
    lib = tir_mlir.build(P.out_of_bounds(8), debug=True)
    a = np.arange(8, dtype=np.float32)
    b = np.zeros(8, np.float32)
    with pytest.raises(OutOfBoundsError) as info:
        lib["shift"](a, b)
    e = info.value
    assert (e.buffer, e.index, e.axis) == ("B", 8, 0)
    assert str(e.loc) == "oob.tir:7:9"
    assert "out-of-bounds store of buffer 'B': index 8 on axis 0" in str(e)
    np.testing.assert_array_equal(b[1:], a[:-1])  # in-bounds writes happened


SHIFT_N = """
@T.prim_func
def shift(a: T.handle, b: T.handle):
    n = T.int32()
    A = T.match_buffer(a, (n,), "float32")
    B = T.match_buffer(b, (n,), "float32")
    for i in range(n):
        with T.block("B"):
            vi = T.axis.spatial(n, i)
            B[vi + 1] = A[vi]
"""


@pytest.mark.parametrize("n", [1, 7, 64])
def test_debug_build_checks_symbolic_sizes_at_run_time(n):
    """A `?` axis is checked against the array's size (memref.dim), not a compile-time number:
    every in-bounds access runs, only the last store (B[n]) is reported."""
    lib = tir_mlir.build(tir_mlir.parse(SHIFT_N), debug=True)
    a, b = np.arange(1, n + 1, dtype=np.float32), np.zeros(n, np.float32)
    with pytest.raises(OutOfBoundsError) as info:
        lib["shift"](a, b)
    assert (info.value.buffer, info.value.index, info.value.axis) == ("B", n, 0)
    assert "1 more" not in str(info.value) and "more out-of-bounds" not in str(info.value)
    np.testing.assert_array_equal(b[1:], a[:-1])


DATA = __import__("pathlib").Path(__file__).parent.parent / "data"
PROGRAMS = sorted(DATA.glob("*.tir")) + sorted((DATA / "programs").glob("*.tir"))


@pytest.mark.parametrize("path", PROGRAMS, ids=lambda p: p.name)
def test_program_runs_and_matches_interpreter(path):
    """Every seed and test program builds, runs and matches the reference interpreter."""
    from tir_mlir.runtime.run_program import run_program

    mod = tir_mlir.load(str(path))
    lines = list(run_program(mod, check=True))
    assert "ran on" in lines[0]
    assert lines[1].startswith("check: OK"), lines


def test_tutorial_flow_mm_relu():
    mod = tir_mlir.load(str(DATA / "mm_relu.tir"))
    lib = tir_mlir.build(mod, target="llvm")
    a, b = (
        RNG.uniform(-1, 1, (128, 128)).astype(np.float32),
        RNG.uniform(-1, 1, (128, 128)).astype(np.float32),
    )
    c = np.zeros((128, 128), np.float32)
    lib["mm_relu"](a, b, c)
    np.testing.assert_allclose(c, np.maximum(a @ b, 0), rtol=1e-4, atol=1e-5)
    assert lib.time_evaluator("mm_relu", number=2, repeat=2)(a, b, c).median > 0


def test_repeated_calls_recheck_arrays_that_changed():
    lib = tir_mlir.build(P.scale_2d(4, 8, ("serial", "serial")))
    a = RNG.random((4, 8), np.float32)
    b = np.zeros_like(a)
    f = lib["scale"]
    f(a, b)
    a[:] = 3
    f(a, b)  # same arrays again: the remembered descriptors, new contents
    np.testing.assert_allclose(b, np.full((4, 8), 7, np.float32))
    b.flags.writeable = False
    with pytest.raises(RuntimeCallError, match="buffer 'B' is read-only"):
        f(a, b)
    b.flags.writeable = True
    a.shape = (8, 4)
    with pytest.raises(RuntimeCallError, match=r"buffer 'A' expects shape \(4, 8\)"):
        f(a, b)
    a.shape = (4, 8)
    for _ in range(6):  # more argument tuples than remembered
        x = RNG.random((4, 8), np.float32)
        y = np.zeros_like(x)
        f(x, y)
        np.testing.assert_allclose(y, x * 2 + 1, rtol=1e-6)


class _Foreign:
    """Another framework's CPU tensor: only `__dlpack__` / `__dlpack_device__`."""

    def __init__(self, a):
        self.a = a

    def __dlpack__(self, **kwargs):
        return self.a.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return (1, 0)


def test_repeated_call_converts_nothing_and_foreign_tensors_are_not_remembered(monkeypatch):
    from tir_mlir.runtime import build as build_module

    lib = tir_mlir.build(P.scale_2d(4, 8, ("serial", "serial")))
    f = lib["scale"]
    a = RNG.random((4, 8), np.float32)
    b = np.zeros_like(a)
    f(a, b)
    conversions = []
    host_arrays = build_module.dlpack.host_arrays
    monkeypatch.setattr(
        build_module.dlpack,
        "host_arrays",
        lambda *args: conversions.append(args) or host_arrays(*args),
    )
    a[:] = 1
    f(a, b)  # the remembered call: no conversion, no new descriptors
    assert not conversions
    np.testing.assert_allclose(b, np.full((4, 8), 3, np.float32))
    for k in range(RECENT + 1):  # a new view of each tensor per call: not remembered
        x, y = np.full((4, 8), k, np.float32), np.zeros((4, 8), np.float32)
        f(_Foreign(x), _Foreign(y))
        np.testing.assert_allclose(y, x * 2 + 1)
    converted = len(conversions)
    f(a, b)  # still remembered: the foreign calls pushed nothing out
    assert len(conversions) == converted


def test_prepared_call_keeps_its_library_loaded():
    import gc

    lib = tir_mlir.build(P.scale_2d(4, 8, ("serial", "serial")), target="llvm -mattr=+avx2")
    a = np.ones((4, 8), np.float32)
    b = np.zeros_like(a)
    run = lib["scale"].prepare(a, b)
    del lib
    tir_mlir.runtime.build._LIBRARIES.items.clear()
    gc.collect()
    run()
    np.testing.assert_array_equal(b, np.full((4, 8), 3, np.float32))


def test_time_evaluator_runs_the_kernel_number_times_repeat_times():
    lib = tir_mlir.build(
        tir_mlir.parse("""
@T.prim_func
def acc(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
    for i in range(8):
        with T.block("C"):
            vi = T.axis.remap("S", [i])
            C[vi] = C[vi] + A[vi]
""")
    )
    a = np.arange(8, dtype=np.float32)
    c = np.zeros(8, np.float32)
    res = lib.time_evaluator("acc", number=5, repeat=3)(a, c)
    assert len(res.results) == 3
    np.testing.assert_array_equal(c, 16 * a)  # a warm-up call, then 3 x 5 timed calls


def test_without_a_c_compiler_builds_run_in_the_jit(monkeypatch):
    import shutil

    real_which = shutil.which
    monkeypatch.setattr(shutil, "which", lambda name: None if name == "cc" else real_which(name))
    lib = tir_mlir.build(P.scale_2d(4, 8, ("parallel", "vectorized")), target="llvm -mattr=+sse4.2")
    a = RNG.random((4, 8), np.float32)
    b = np.zeros_like(a)
    lib["scale"](a, b)
    np.testing.assert_allclose(b, a * 2 + 1, rtol=1e-6)
    with pytest.raises(tir_mlir.BuildError, match="C compiler"):
        lib.export_library("unused.so")
