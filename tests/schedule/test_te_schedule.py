"""The TE schedule API over `tir_mlir.Schedule`: the 21 TE examples of tests/data/te/ run with
only their import line changed, and the scheduled programs compute numpy's numbers."""

import numpy as np
import pytest

import tir_mlir
from te_examples import EXAMPLES, run_example
from tir_mlir import te
from tir_mlir.errors import ScheduleError

RNG = np.random.default_rng(0)


def _sum_rows(a):
    return a.sum(1)


def _sum_all(a):
    return np.array([a.sum()], "float32")


def _conv(a, w):
    ap = np.pad(a, 2)
    m = a.shape[0] - 3 + 4 + 1
    return sum(ap[y : y + m, x : x + m] * w[y, x] for y in range(3) for x in range(3))


# example -> (argument names, inputs' shapes, numpy reference of the outputs)
CASES = {
    "01_cache_read": (["A", "B"], [(1024, 1024)], _sum_rows),
    "02_cache_write": (["A", "B"], [(1024, 1024)], _sum_rows),
    "03_set_scope": (["A", "C"], [(1024, 1024)], lambda a: a.sum(1) + 10),
    "04_storage_align": (["A", "B"], [(1024, 1024)], _sum_rows),
    "05_compute_at": (["A", "B"], [(1024,)], _sum_all),
    "06_compute_inline": (["A", "W", "B"], [(1024, 1024), (3, 3)], _conv),
    "07_compute_root": (["A", "B"], [(1024,)], _sum_all),
    "08_fuse": (["A", "B"], [(1024,)], _sum_all),
    "09_split": (["A", "B"], [(1024,)], _sum_all),
    "10_reorder": (["A", "B", "C"], [(1024, 1024)] * 2, np.add),
    "11_tile": (["A", "B", "C"], [(1024, 1024)] * 2, np.matmul),
    "12_unroll": (["A", "B", "C"], [(1024, 1024)] * 2, np.add),
    "13_vectorize": (["A", "B", "C"], [(1024, 1024)] * 2, np.add),
    # 14 and 15 bind / parallelise a reduction axis: rfactor first (test_te_reduce_parallel.py)
    "14_bind": (["A", "B"], [(1024,)], lambda a: np.array([1024 * a[0]], "float32")),
    "15_parallel": (["A", "B"], [(1024, 1024)], _sum_rows),
    "16_pragma": (["A", "B"], [(1024, 1024)], _sum_rows),
    "17_prefetch": (["A", "B"], [(1024, 1024)], _sum_rows),
    "19_rfactor": (["A", "B"], [(1024,)], _sum_all),
    "20_set_store_predicate": (["A", "B"], [(1024,)], _sum_all),
    "21_create_group": (["A", "B", "E"], [(1024, 1024)] * 2, lambda a, b: a + b + b),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_te_example_computes_numpys_numbers(name):
    g, printed = run_example(name)
    arg_names, shapes, reference = CASES[name]
    assert (
        printed.count("@T.prim_func") == 2
        and "cutting line" in printed
        or printed.count("@T.prim_func") == 2
    )
    args = [g[n] for n in arg_names]
    mod = tir_mlir.lower(g["s"], args, simple_mode=True)
    assert str(mod) in printed  # the second print is the scheduled program
    inputs = [RNG.random(s, dtype="float32") for s in shapes]
    outputs = [np.zeros(t.shape, t.dtype) for t in args[len(inputs) :]]
    if "T.thread_binding" in str(mod):  # a GPU program: the reference interpreter runs it
        tir_mlir.interpret(mod, "main", *inputs, *outputs)
    else:
        tir_mlir.build(mod, "llvm")["main"](*inputs, *outputs)
    np.testing.assert_allclose(outputs[0], reference(*inputs), rtol=2e-4, atol=1e-3)


def test_every_example_is_covered():
    names = {p.stem for p in EXAMPLES.glob("*.py")}
    # 18_tensorize calls a C kernel: tests/runtime/test_extern_calls.py runs it
    assert names - set(CASES) == {"18_tensorize"}


def _rowsum():
    A = te.placeholder((64, 64), name="A")
    k = te.reduce_axis((0, 64), name="k")
    B = te.compute((64,), lambda i: te.sum(A[i, k], axis=k), name="B")
    return A, B, k


def test_te_calls_are_recorded_in_the_trace():
    A, B, k = _rowsum()
    s = te.create_schedule(B.op)
    ko, ki = s[B].split(k, factor=16)
    s[B].unroll(ki)
    text = str(s.sch.trace)
    assert "sch.split(" in text and "factors=[None, 16]" in text and "sch.unroll(" in text


def test_pragma_has_an_effect_or_is_refused():
    A, B, k = _rowsum()
    s = te.create_schedule(B.op)
    ko, ki = s[B].split(k, factor=4)
    s[B].pragma(ki, "unroll")
    assert "T.unroll(4)" in str(te.lower(s, [A, B]))
    with pytest.raises(ScheduleError, match="pragma 'debug_skip_region' has no TensorIR"):
        s[B].pragma(ko, "debug_skip_region")


def test_set_store_predicate_binds_by_name():
    A = te.placeholder((16, 4), name="A")
    B = te.compute((16, 4), lambda i, j: A[i, j] * 2, name="B")
    s = te.create_schedule(B.op)
    i, j = B.op.axis
    s[B].set_store_predicate(te.all(i < 8, j >= 1))
    mod = te.lower(s, [A, B])
    assert "T.where(i < 8 and 1 <= j)" in str(mod)
    a = RNG.random((16, 4), dtype="float32")
    b = np.full((16, 4), 7, "float32")
    tir_mlir.build(mod, "llvm")["main"](a, b)
    want = np.full((16, 4), 7, "float32")
    want[:8, 1:] = a[:8, 1:] * 2
    np.testing.assert_allclose(b, want)


def test_schedule_set_store_predicate_refuses_unknown_names():
    A = te.placeholder((16, 4), name="A")
    B = te.compute((16, 4), lambda i, j: A[i, j] * 2, name="B")
    sch = tir_mlir.Schedule(te.create_prim_func([A, B]))
    with pytest.raises(ScheduleError, match="named after the block's iter vars"):
        sch.set_store_predicate(sch.get_block("B"), lambda vi, vj: vi < 8)
    # by name, in any order
    sch.set_store_predicate(sch.get_block("B"), lambda v_j, v_i: v_i < 8)
    assert "T.where(i < 8)" in sch.mod.script()


def test_lower_with_other_arguments_replays_the_trace():
    A, B, k = _rowsum()
    C = te.compute((64,), lambda i: B[i] * 2, name="C")
    s = te.create_schedule(C.op)
    ko, ki = s[B].split(k, factor=8)
    mod = te.lower(s, [A, B, C])  # B becomes a parameter: built again, trace replayed
    assert "for k_0, k_1 in T.grid(8, 8)" in str(mod) or "k_1" in str(mod)
    a = RNG.random((64, 64), dtype="float32")
    b, c = np.zeros(64, "float32"), np.zeros(64, "float32")
    tir_mlir.build(mod, "llvm")["main"](a, b, c)
    np.testing.assert_allclose(b, a.sum(1), rtol=1e-5)
    np.testing.assert_allclose(c, a.sum(1) * 2, rtol=1e-5)
