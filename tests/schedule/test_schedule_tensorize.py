"""tensorize with the shipped CPU intrinsic mac16_f32: a matmul tensorized and run through
tir_mlir.build against numpy; structural mismatches name what differs; the registry."""

import numpy as np
import pytest

import tir_mlir
from schedule_check import check_all, check_error, check_replay, parse
from tir_mlir import Schedule, TensorIntrin
from workloads import matmul

MM = matmul(8, m=32, k=16)


def _tile(s, factor=16):
    i, j, k = s.get_loops(s.get_block("C"))
    j0, j1 = s.split(j, [None, factor])
    s.reorder(j0, k, j1)
    return j1


def test_tensorize_matmul_runs_like_numpy():
    sch = check_all(MM, lambda s: s.tensorize(_tile(s), "mac16_f32"), "main", tvm_diff=False)
    text = sch.mod.script()
    assert (
        """            for j in T.vectorized(16):
                C_1[j] = C_1[j] + A_1[0] * B_1[j]"""
        in text
    )  # over TVM's match_buffer views
    assert "C_1 = T.match_buffer(C[vi_o, vj_o * 16:vj_o * 16 + 16], (16,))" in text
    rng = np.random.default_rng(1)
    a = rng.standard_normal((8, 16)).astype("float32")
    b = rng.standard_normal((16, 32)).astype("float32")
    c = np.zeros((8, 32), "float32")
    tir_mlir.build(sch.mod)["main"](a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-5)


def test_tensorize_block_after_blockize():
    def sched(s):
        outer = s.blockize(_tile(s))
        s.tensorize(outer, "mac16_f32")

    sch = check_all(MM, sched, "main", tvm_diff=False)
    check_replay(sch, parse(MM))


def test_mismatch_errors():
    sch = Schedule(parse(MM))
    j1 = _tile(sch, 8)
    check_error(
        sch,
        lambda s: s.tensorize(j1, "mac16_f32"),
        r"does not match intrinsic 'mac16_f32': loop 'j_1' has range \[0, 8\); the "
        r"intrinsic's loop 'j' has \[0, 16\)",
    )
    sch = Schedule(parse(MM.replace("A[vi, vk] * B[vk, vj]", "A[vi, vk] + B[vk, vj]")))
    j1 = _tile(sch)
    check_error(
        sch,
        lambda s: s.tensorize(j1, "mac16_f32"),
        "block 'C': expected memref.load, found arith.addf",
    )
    sch = Schedule(parse(MM))
    i, j, k = sch.get_loops(sch.get_block("C"))
    j0, j1 = sch.split(j, [None, 16])
    check_error(
        sch,
        lambda s: s.tensorize(j1, "mac16_f32"),
        "block 'C_o' does not match intrinsic 'mac16_f32'",
    )
    check_error(sch, lambda s: s.tensorize(j1, "nope"), "no tensor intrinsic named 'nope'")


def test_registry():
    assert TensorIntrin.get("mac16_f32").name == "mac16_f32"
    with pytest.raises(ValueError, match="already registered"):
        TensorIntrin.register("mac16_f32", MM, MM)
