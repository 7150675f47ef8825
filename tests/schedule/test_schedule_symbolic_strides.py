"""Loops whose stride is a size: a split of a symbolic extent with the inferred factor inside
(`k_0 * ((n + 9) // 10) + k_1`, a semi-affine binding `d0 * ((s0 + 9) floordiv 10) + d1`),
and a fused symbolic index in TVM's spelling (`f % (n * 128) // n`). Text as TVM 0.21
prints it (its tests `split_symbolic`, `split_with_dynamic_inferred_factor`,
`fuse_symbolic`), numbers against numpy at several sizes from one build."""

import numpy as np
import pytest

import tir_mlir
from schedule_check import check_replay
from tir_mlir.errors import ScheduleError

ELEMENTWISE = """
@T.prim_func
def main(a: T.handle, b: T.handle, n: T.int32):
    A = T.match_buffer(a, (16, 8, n))
    B = T.match_buffer(b, (16, 8, n))
    for i, j, k in T.grid(16, 8, n):
        with T.block("B"):
            vi, vj, vk = T.axis.remap("SSS", [i, j, k])
            B[vi, vj, vk] = A[vi, vj, vk] * T.float32(2)
"""

SIZES = (1, 7, 10, 23, 40)


def _split_k(factors):
    sch = tir_mlir.Schedule(tir_mlir.parse(ELEMENTWISE))
    _, _, k = sch.get_loops(sch.get_block("B"))
    sch.split(k, factors)
    return sch


def _check_numbers(sch):
    lib = tir_mlir.build(sch.mod)
    rng = np.random.default_rng(0)
    for n in SIZES:
        a = rng.random((16, 8, n), dtype="float32")
        b = np.zeros_like(a)
        lib["main"](a, b, n)
        np.testing.assert_allclose(b, 2 * a, err_msg=f"n = {n}")


def test_inferred_factor_inside_is_a_size_stride():
    sch = _split_k([10, None])
    text = sch.mod.script()
    assert "for i, j, k_0, k_1 in T.grid(16, 8, 10, (n + 9) // 10):" in text
    assert "vk = T.axis.spatial(n, k_0 * ((n + 9) // 10) + k_1)" in text
    assert "T.where(k_0 * ((n + 9) // 10) + k_1 < n)" in text
    check_replay(sch, tir_mlir.parse(ELEMENTWISE))
    _check_numbers(sch)


@pytest.mark.parametrize("factors", [[2, 5, None], [3, None, 4], [None, 4]])
def test_every_position_of_the_inferred_factor_computes_the_same(factors):
    _check_numbers(_split_k(factors))


def test_a_split_with_a_size_stride_prints_what_parses_back():
    sch = _split_k([2, 5, None])
    text = sch.mod.script()
    assert "vk = T.axis.spatial(n, k_0 * ((n + 9) // 10 * 5) + k_1 * ((n + 9) // 10) + k_2)" in (
        text
    )
    again = tir_mlir.parse(text)
    assert again.script() == text


def test_fused_symbolic_index_in_tvms_spelling():
    sch = tir_mlir.Schedule(tir_mlir.parse(ELEMENTWISE))
    sch.fuse(*sch.get_loops(sch.get_block("B")))
    text = sch.mod.script()
    assert "vi = T.axis.spatial(16, i_j_k_fused // (n * 8))" in text
    assert "vj = T.axis.spatial(8, i_j_k_fused % (n * 8) // n)" in text
    assert "vk = T.axis.spatial(n, i_j_k_fused % n)" in text
    _check_numbers(sch)


LOOP_IN_BOUND = """
@T.prim_func
def main(a: T.handle, n: T.int32):
    A = T.match_buffer(a, (n, n))
    for i in range(n):
        for j in range(i):
            with T.block("A"):
                vi = T.axis.spatial(n, i)
                vj = T.axis.spatial(n, j)
                A[vi, vj] = T.float32(1)
"""


def test_a_size_stride_outside_bindings_is_refused():
    """A loop variable bounding an inner loop would need the semi-affine value there too."""
    sch = tir_mlir.Schedule(tir_mlir.parse(LOOP_IN_BOUND))
    i, _ = sch.get_loops(sch.get_block("A"))
    before = sch.mod.script()
    with pytest.raises(ScheduleError, match="used outside block bindings"):
        sch.split(i, [4, None])
    assert sch.mod.script() == before
