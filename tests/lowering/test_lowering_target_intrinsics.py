"""Lowering of TVM's target tensor intrinsics and quantized-kernel calls:
`T.call_llvm_pure_intrin` -> `llvm.call_intrinsic` where the target has it (a clear error where
it has not), `T.reinterpret` -> bitcasts, `T.vectorlow/vectorhigh` -> half slices,
`T.q_multiply_shift(_per_axis)` -> TVM's int64 expansion. Numbers against numpy."""

import numpy as np
import pytest
from packed_int8_matmul import PACKED

import tir_mlir
from tir_mlir.errors import BuildError
from tir_mlir.passes.lowering.cpu_target import cpu_target


HEAD = "# from tvm.script import tir as T\n\n@T.prim_func\n"


def _features() -> tuple:
    return cpu_target().features


def _packed_matmul(intrin):
    sch = tir_mlir.Schedule(tir_mlir.parse(PACKED))
    sch.tensorize(sch.get_loops(sch.get_block("compute_update"))[-2], intrin)
    return sch.mod


def _matmul_args(bound, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.integers(0, bound, (128, 128)).astype("uint8")
    w = rng.integers(-bound // 2, bound // 2, (128, 128)).astype("int8")
    packed = (
        w.reshape(8, 16, 32, 4).transpose(0, 2, 1, 3).copy()
    )  # W[j // 16, k // 4, j % 16, k % 4]
    return x, w, packed


# pmaddubsw adds pairs of u8 x s8 products into int16 with saturation (as in TVM): exact for
# values below 64; vpdpbusd accumulates in int32: exact over the full ranges.
@pytest.mark.parametrize(
    "intrin, feature, bound",
    [("dot_16x4_vnni", "avx512vnni", 256), ("dot_16x4_avx512", "avx512bw", 64)],
)
def test_x86_dot_product_intrinsics_compute_the_matmul(intrin, feature, bound):
    mod = _packed_matmul(intrin)
    if f"+{feature}" not in _features():  # a CPU without it: the build says so
        with pytest.raises(BuildError, match=f"needs the CPU feature {feature}"):
            tir_mlir.build(mod)
        return
    x, w, packed = _matmul_args(bound)
    c = np.zeros((128, 128), "int32")
    tir_mlir.build(mod, debug=True)["main"](x, packed, c)
    np.testing.assert_array_equal(c, x.astype("int32") @ w.astype("int32").T)


def test_vnni_is_the_vpdpbusd_instruction():
    from tir_mlir.passes.lowering.pipeline import emit_text

    mod = _packed_matmul("dot_16x4_vnni")
    if "+avx512vnni" in _features():
        assert "vpdpbusd" in emit_text(mod.module, "asm")
    else:
        with pytest.raises(BuildError, match="needs the CPU feature avx512vnni"):
            emit_text(mod.module, "asm")


def test_an_intrinsic_of_another_architecture_is_refused():
    mod = _packed_matmul("dot_16x4_vnni")
    text = mod.script().replace("llvm.x86.avx512.vpdpbusd.512", "llvm.aarch64.neon.sdot")
    arch = cpu_target().triple.split("-")[0]
    with pytest.raises(
        BuildError,
        match=f"llvm.aarch64.neon.sdot is an intrinsic of aarch64; this build targets {arch}",
    ):
        tir_mlir.build(tir_mlir.parse(text))


BITS = (
    HEAD
    + """def main(A: T.Buffer((16,), "int8"), W: T.Buffer((4,), "int32"), S: T.Buffer((1,), "int32"), H: T.Buffer((8,), "int8"), F: T.Buffer((4,), "float32")):
    with T.block("root"):
        T.reads(A[0:16])
        T.writes(W[0:4], S[0], H[0:8], F[0:4])
        W[0:4] = T.reinterpret("int32x4", A[0:16])
        S[0] = T.reinterpret("int32", A[4:8])
        H[0:8] = T.vectorhigh("int8x8", A[0:16])
        F[0:4] = T.reinterpret("float32x4", W[0:4])"""
)


def test_reinterpret_and_vector_halves_are_bit_casts_and_slices():
    a = np.arange(-8, 8, dtype="int8")
    w, s, h, f = (
        np.zeros(4, "int32"),
        np.zeros(1, "int32"),
        np.zeros(8, "int8"),
        np.zeros(4, "float32"),
    )
    tir_mlir.build(tir_mlir.parse(BITS), debug=True)["main"](a, w, s, h, f)
    np.testing.assert_array_equal(w, a.view("int32"))
    assert s[0] == a[4:8].view("int32")[0]
    np.testing.assert_array_equal(h, a[8:])
    np.testing.assert_array_equal(f.view("int32"), a.view("int32"))


QMUL = (
    HEAD
    + """def main(X: T.Buffer((64,), "int32"), Y: T.Buffer((64,), "int32"), L: T.Buffer((64,), "int32"), R: T.Buffer((64,), "int32"), A: T.Buffer((64,), "int32"), B: T.Buffer((64,), "int32"), C: T.Buffer((64,), "int32")):
    for i in range(64):
        with T.block("q"):
            vi = T.axis.spatial(64, i)
            A[vi] = T.q_multiply_shift(X[vi], Y[vi], 31, 2)
            B[vi] = T.q_multiply_shift(X[vi], Y[vi], 31, -3)
            C[vi] = T.q_multiply_shift_per_axis(X[vi], Y[vi], L[vi], R[vi], 31, T.bool(True), T.bool(True))"""
)


def _q_reference(x, y, left, right, q=31):
    """TVM's rule, in Python integers."""
    total = right + q
    return ((((x << left) * y) + (1 << (total - 1))) >> total).astype("int32")


def test_q_multiply_shift_is_tvms_rounding_fixed_point_multiply():
    rng = np.random.default_rng(1)
    x = rng.integers(-(1 << 20), 1 << 20, 64).astype("int32")
    y = rng.integers(1 << 29, (1 << 31) - 1, 64).astype("int32")
    left = rng.integers(0, 3, 64).astype("int32")
    right = rng.integers(0, 5, 64).astype("int32")
    out = [np.zeros(64, "int32") for _ in range(3)]
    tir_mlir.build(tir_mlir.parse(QMUL), debug=True)["main"](x, y, left, right, *out)
    xs, ys = x.astype(object), y.astype(object)
    np.testing.assert_array_equal(out[0], _q_reference(xs, ys, 2, 0))
    np.testing.assert_array_equal(out[1], _q_reference(xs, ys, 0, 3))
    np.testing.assert_array_equal(
        out[2], _q_reference(xs, ys, left.astype(object), right.astype(object))
    )
