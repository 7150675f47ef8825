"""transform_layout / transform_block_layout with an index map naming a size of the function (TVM's
`lambda x, y, z, w: x * 32 * n + y * n + z * n + w` with `n` a buffer's shape var): the
size is an affine symbol, `y * n` a semi-affine result; the new shape is bounded over the
buffer's box (`n * 32`), unit iter vars simplified away as TVM does. Text, trace replay
(the recorded lambda names `n`), numbers at several sizes from one build, and refusals."""

import numpy as np
import pytest

import tir_mlir
from schedule_check import check_replay, parse
from tir_mlir import Schedule
from tir_mlir.errors import ScheduleError
from tir_mlir.schedule.lambda_exprs import Size

NT_MATMUL = """
@T.prim_func
def main(a: T.handle, b: T.handle, c: T.handle):
    n = T.int64()
    A = T.match_buffer(a, (T.int64(1), T.int64(32), T.int64(1), T.int64(128)), "float16")
    B = T.match_buffer(b, (T.int64(1), T.int64(32), n, T.int64(128)), "float16")
    C = T.match_buffer(c, (T.int64(1), T.int64(32), T.int64(1), n), "float16")
    for i0, i1, i2, i3, k in T.grid(T.int64(1), T.int64(32), T.int64(1), n, T.int64(128)):
        with T.block("NT_matmul"):
            v_i0, v_i1, v_i2, v_i3, v_k = T.axis.remap("SSSSR", [i0, i1, i2, i3, k])
            with T.init():
                C[v_i0, v_i1, v_i2, v_i3] = T.float16(0)
            C[v_i0, v_i1, v_i2, v_i3] = C[v_i0, v_i1, v_i2, v_i3] + A[v_i0, v_i1, v_i2, v_k] * B[v_i0, v_i1, v_i3, v_k]
"""

ROWS = """
@T.prim_func
def main(a: T.handle, c: T.handle):
    n = T.int32()
    A = T.match_buffer(a, (32, n))
    C = T.match_buffer(c, (32, n))
    for i, j in T.grid(32, n):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = A[vi, vj] * T.float32(2)
"""


def test_tvms_flattening_by_a_size():
    sch = Schedule(parse(NT_MATMUL))
    n = Size("n")
    sch.transform_layout(
        sch.get_block("NT_matmul"),
        ("write", 0),
        lambda x, y, z, w: x * 32 * n + y * n + z * n + w,
        assume_injective_transform=True,
    )
    text = sch.mod.script()
    assert 'C = T.match_buffer(c, (n * T.int64(32),), "float16")' in text
    assert "T.writes(C[v_i1 * n + v_i3])" in text
    assert "index_map=lambda x, y, z, w: (x * n * 32 + y * n + z * n + w,)" in str(sch.trace)
    check_replay(sch, parse(NT_MATMUL))


@pytest.mark.parametrize("as_text", [False, True])
def test_flattened_rows_compute_the_same(as_text):
    sch = Schedule(parse(ROWS))
    index_map = "lambda i, j: (i * n + j,)" if as_text else (lambda i, j: i * Size("n") + j)
    sch.transform_layout(sch.get_block("C"), ("write", 0), index_map)
    assert "C = T.match_buffer(c, (n * 32,))" in sch.mod.script()
    check_replay(sch, parse(ROWS))
    lib = tir_mlir.build(sch.mod)
    rng = np.random.default_rng(0)
    for n in (1, 5, 17):
        a = rng.random((32, n), dtype="float32")
        c = np.zeros(32 * n, "float32")
        lib["main"](a, c)
        np.testing.assert_allclose(c, (2 * a).reshape(-1), err_msg=f"n = {n}")


@pytest.mark.parametrize(
    "index_map, match",
    [
        ("lambda i, j: (i * m + j,)", "names 'm', which is no size of the function"),
        ("lambda i, j: (i * j,)", "product of two variables"),
    ],
)
def test_refused_maps(index_map, match):
    sch = Schedule(parse(ROWS))
    before = sch.mod.script()
    with pytest.raises(ScheduleError, match=match):
        sch.transform_layout(sch.get_block("C"), ("write", 0), index_map)
    assert sch.mod.script() == before


def test_a_size_outside_a_schedule_is_refused():
    from tir_mlir.context import get_context
    from tir_mlir.schedule import lambda_exprs

    with get_context(), pytest.raises(ScheduleError, match="only in the map of a transform_layout"):
        lambda_exprs.exprs(lambda i: i * Size("n"), 1)


FLAT_NT_MATMUL = NT_MATMUL.replace(
    'C = T.match_buffer(c, (T.int64(1), T.int64(32), T.int64(1), n), "float16")',
    'C = T.match_buffer(c, (n * T.int64(32),), "float16")',
).replace("C[v_i0, v_i1, v_i2, v_i3]", "C[v_i1 * n + v_i3]")


def test_tvms_block_layout_by_a_size():
    """transform_block_layout: the radix of the new iter var has a size (`n`, then 32); the
    body reads `v0 // n`, `v0 % n`, unit iter vars as `T.int64(0)`, and `v0 // n * n + v0 % n`
    is v0 (as TVM simplifies it)."""
    sch = Schedule(parse(FLAT_NT_MATMUL))
    sch.transform_block_layout(
        sch.get_block("NT_matmul"), "lambda x, y, z, w, k: (x * 32 * n + y * n + z * n + w, k)"
    )
    text = sch.mod.script()
    assert (
        """    for ax0, ax1 in T.grid(n * T.int64(32), T.int64(128)):
        with T.block("NT_matmul"):
            v0, v1 = T.axis.remap("SR", [ax0, ax1])
            T.reads(A[T.int64(0), v0 // n, T.int64(0), v1], B[T.int64(0), v0 // n, v0 % n, v1])
            T.writes(C[v0])"""
        in text
    )
    check_replay(sch, parse(FLAT_NT_MATMUL))


def test_block_layout_by_a_size_computes_the_same():
    src = ROWS.replace(
        "C = T.match_buffer(c, (32, n))", "C = T.match_buffer(c, (32 * n,))"
    ).replace("C[vi, vj] =", "C[vi * n + vj] =")
    sch = Schedule(parse(src))
    sch.transform_block_layout(sch.get_block("C"), "lambda i, j: (i * n + j,)")
    assert "for ax0 in range(n * 32):" in sch.mod.script()
    lib = tir_mlir.build(sch.mod)
    rng = np.random.default_rng(1)
    for n in (1, 6, 19):
        a = rng.random((32, n), dtype="float32")
        c = np.zeros(32 * n, "float32")
        lib["main"](a, c)
        np.testing.assert_allclose(c, (2 * a).reshape(-1), err_msg=f"n = {n}")
