"""tensorize onto TVM's target dot-product intrinsics (tir_mlir/intrinsics/dot_product.py),
as TVM 0.21's tests/python/tir-schedule/test_tir_schedule_tensorize.py does: a packed matmul
whose weight layout was transformed (`W[j // 16, k // 4, j % 16, k % 4]`) matches the desc's
`B[vi, vk]` once the blockized indices are read over the inner iterators' ranges. Expected
texts are TVM 0.21's results of the same schedules."""

import pytest

import tir_mlir
from tir_mlir import ScheduleError
from tir_mlir.schedule.tensor_intrin import TensorIntrin
from packed_int8_matmul import PACKED


VNNI_BLOCK = """        for k_0 in range(32):
            with T.block("compute_update_o"):
                v_i_o, v_j_o, v_k_o = T.axis.remap("SSR", [i, j_0, k_0])
                T.reads(compute[v_i_o, v_j_o * 16:v_j_o * 16 + 16], X[v_i_o, v_k_o * 4:v_k_o * 4 + 4], W[v_j_o, v_k_o, 0:16, 0:4])
                T.writes(compute[v_i_o, v_j_o * 16:v_j_o * 16 + 16])
                A = T.match_buffer(X[v_i_o, v_k_o * 4:v_k_o * 4 + 4], (4,), "uint8", offset_factor=1)
                B = T.match_buffer(W[v_j_o, v_k_o, 0:16, 0:4], (16, 4), "int8", offset_factor=1)
                C = T.match_buffer(compute[v_i_o, v_j_o * 16:v_j_o * 16 + 16], (16,), "int32", offset_factor=1)
                A_u8x4: T.uint8x4 = A[0:4]
                A_i32: T.int32 = T.reinterpret("int32", A_u8x4)
                B_i8x64: T.int8x64 = B[0, 0:64]
                B_i32x16: T.int32x16 = T.reinterpret("int32x16", B_i8x64)
                C_i32x16: T.int32x16 = C[0:16]
                C[0:16] = T.call_llvm_pure_intrin("int32x16", "llvm.x86.avx512.vpdpbusd.512", T.uint32(3), C_i32x16, T.Broadcast(A_i32, 16), B_i32x16)"""


def _tensorize(text, block, intrin, loop=-2):
    sch = tir_mlir.Schedule(tir_mlir.parse(text))
    sch.tensorize(sch.get_loops(sch.get_block(block))[loop], intrin)
    return sch.mod.script()


def test_vnni_on_a_transformed_weight_layout_gives_tvms_block():
    before = PACKED.split("        for k_0, j_1, k_1")[0]
    assert _tensorize(PACKED, "compute_update", "dot_16x4_vnni") == before + VNNI_BLOCK


def test_a_layout_that_does_not_tile_by_the_intrinsic_is_refused():
    # W packed by 8 rows: a 16-row tile spans two packs, no (16, 4) region of W
    text = PACKED.replace("(8, 32, 16, 4)", "(16, 32, 8, 4)")
    text = text.replace("v_j // 16", "v_j // 8").replace("v_j % 16", "v_j % 8")
    with pytest.raises(ScheduleError, match="the access to W does not match"):
        _tensorize(text, "compute_update", "dot_16x4_vnni")


@pytest.mark.parametrize(
    "name",
    [
        "dot_16x4_vnni",
        "dot_16x4_avx512",
        "dot_4x4_i8i8s32_sdot",
        "dot_4x4_i8i8s32_neon",
        "dot_32x4_u8u8i32_vrmpy",
        "dot_product_32x2_i16i16i32_vdmpy",
        "dp4a_s8s8s32",
        "dp4a_s8u8s32",
        "dp4a_u8s8s32",
        "dp4a_u8u8u32",
        "sdot4",
    ],
)
def test_tvms_dot_product_intrinsics_are_registered_under_tvms_names(name):
    intrin = TensorIntrin.get(name)
    assert "T.Cast" in intrin.desc.script()
    assert "call_llvm_pure_intrin" in intrin.impl.script() or "__dp4a" in intrin.impl.script()


# TVM's test_tensorize_arith_simplification: the desc computes `vi % 8 * 4` (an index cast to
# int32), the blockized target `(v1_o * 8 + v1_i) % 8 * 4`; equal over v1_i's range.
DECODE_DESC = """# from tvm.script import tir as T

@T.prim_func
def decode_i4s_to_f16_desc(compressed: T.handle, decompressed: T.handle):
    Compressed = T.match_buffer(compressed, (1,), "int32", scope="local")
    Decompressed = T.match_buffer(decompressed, (8,), "float16", scope="local")
    with T.block("root"):
        T.reads(Compressed[0])
        T.writes(Decompressed[0:8])
        for i in range(8):
            with T.block("decode"):
                vi = T.axis.spatial(8, i)
                T.reads(Compressed[vi // 8])
                T.writes(Decompressed[vi])
                Decompressed[vi] = T.Cast("float16", T.shift_right(T.shift_left(T.bitwise_and(T.shift_right(Compressed[vi // 8], vi % 8 * 4), 15), 28), 28))"""

DECODE_IMPL = """# from tvm.script import tir as T

@T.prim_func
def decode_i4s_to_f16_impl(compressed: T.handle, decompressed: T.handle):
    Compressed = T.match_buffer(compressed, (1,), "int32", scope="local")
    Decompressed = T.match_buffer(decompressed, (8,), "float16", scope="local")
    with T.block("root"):
        T.reads(Compressed[0])
        T.writes(Decompressed[0:8])
        T.call_extern("handle", "test_decode_i4s_to_f16", Compressed.data, Decompressed.data, 8)"""

DECODE = """# from tvm.script import tir as T

@T.prim_func
def main():
    # with T.block("root"):
    B_decode_local = T.alloc_buffer((16384, 16384), "float16", scope="local")
    B_local = T.alloc_buffer((16384, 2048), "int32", scope="local")
    for ax0_0 in T.thread_binding(8192, thread="blockIdx.x"):
        for ax0_1 in T.thread_binding(2, thread="threadIdx.y"):
            for ax1_0 in range(32):
                for ax1_1 in T.thread_binding(64, thread="threadIdx.x"):
"""

DECODE_BEFORE = (
    DECODE
    + """                    for ax0, ax1 in T.grid(1, 8):
                        with T.block("B_decode_local"):
                            v0 = T.axis.spatial(16384, ax0_0 * 2 + ax0_1 + ax0)
                            v1 = T.axis.spatial(16384, ax1_0 * 512 + ax1_1 * 8 + ax1)
                            T.reads(B_local[v0, v1 // 8])
                            T.writes(B_decode_local[v0, v1])
                            B_decode_local[v0, v1] = T.Cast("float16", T.shift_right(T.shift_left(T.bitwise_and(T.shift_right(B_local[v0, v1 // 8], v1 % 8 * 4), 15), 28), 28))"""
)

DECODE_AFTER = (
    DECODE
    + """                    for ax0 in range(1):
                        with T.block("B_decode_local_o"):
                            v0_o = T.axis.spatial(16384, ax0_0 * 2 + ax0_1 + ax0)
                            v1_o = T.axis.spatial(2048, ax1_0 * 64 + ax1_1)
                            T.reads(B_local[v0_o, v1_o])
                            T.writes(B_decode_local[v0_o, v1_o * 8:v1_o * 8 + 8])
                            Compressed = T.match_buffer(B_local[v0_o, v1_o], (1,), "int32", scope="local")
                            Decompressed = T.match_buffer(B_decode_local[v0_o, v1_o * 8:v1_o * 8 + 8], (8,), "float16", scope="local")
                            T.call_extern("handle", "test_decode_i4s_to_f16", Compressed.data, Decompressed.data, 8)"""
)


def test_index_operands_match_over_the_inner_ranges():
    TensorIntrin.register("test_decode_i4s", DECODE_DESC, DECODE_IMPL, override=True)
    assert _tensorize(DECODE_BEFORE, "B_decode_local", "test_decode_i4s", loop=-1) == DECODE_AFTER


def test_a_different_index_operand_is_refused():
    TensorIntrin.register("test_decode_i4s", DECODE_DESC, DECODE_IMPL, override=True)
    text = DECODE_BEFORE.replace("v1 % 8 * 4), 15)", "v1 % 4 * 4), 15)")
    with pytest.raises(ScheduleError, match="index operands differ"):
        _tensorize(text, "B_decode_local", "test_decode_i4s", loop=-1)
