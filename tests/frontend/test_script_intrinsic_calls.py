"""The calls TVM's target tensor intrinsics and quantized kernels are written with:
`T.reinterpret`, `T.vectorlow` / `T.vectorhigh`, `T.call_llvm_pure_intrin`, a
`T.call_extern("handle", ...)`, `T.q_multiply_shift` and `T.q_multiply_shift_per_axis`.
Each reads and prints back as TVM prints it (the texts are TVM 0.21's printing of its own
intrinsics: `tvm.tir.tensor_intrin.x86` / `arm_cpu`), and bad uses are errors at the call."""

import pytest

import tir_mlir
from tir_mlir import TIRParseError

HEAD = "# from tvm.script import tir as T\n\n@T.prim_func\n"

# TVM's dot_16x4_vnni impl (its printing, parameters as T.Buffer).
VNNI = (
    HEAD
    + """def dot_product_16x4_u8i8i32_vnni(A: T.Buffer((4,), "uint8"), B: T.Buffer((16, 4), "int8"), C: T.Buffer((16,), "int32")):
    with T.block("root"):
        T.reads(C[0:16], A[0:4], B[0:16, 0:4])
        T.writes(C[0:16])
        A_u8x4: T.uint8x4 = A[0:4]
        A_i32: T.int32 = T.reinterpret("int32", A_u8x4)
        B_i8x64: T.int8x64 = B[0, 0:64]
        B_i32x16: T.int32x16 = T.reinterpret("int32x16", B_i8x64)
        C_i32x16: T.int32x16 = C[0:16]
        C[0:16] = T.call_llvm_pure_intrin("int32x16", "llvm.x86.avx512.vpdpbusd.512", T.uint32(3), C_i32x16, T.Broadcast(A_i32, 16), B_i32x16)"""
)

# TVM's dot_4x4_i8i8s32_neon impl: vectorlow / vectorhigh.
NEON = (
    HEAD
    + """def neon_4x4_i8i8i32_impl(A: T.Buffer((4,), "int8"), B: T.Buffer((4, 4), "int8"), C: T.Buffer((4,), "int32")):
    with T.block("root"):
        T.reads(C[0:4], A[0:4], B[0:4, 0:4])
        T.writes(C[0:4])
        A_int8: T.int8x4 = A[0:4]
        re_int32: T.int32 = T.reinterpret("int32", A_int8)
        vec_ai32: T.int32x2 = T.Broadcast(re_int32, 2)
        vec_a: T.int8x8 = T.reinterpret("int8x8", vec_ai32)
        vec_b: T.int8x16 = B[0, 0:16]
        vec_b_low: T.int8x8 = T.vectorlow("int8x8", vec_b)
        multiply_low: T.int16x8 = T.call_llvm_pure_intrin("int16x8", "llvm.aarch64.neon.smull", T.uint32(2), vec_a, vec_b_low)
        pairwise_reduction_low: T.int32x4 = T.call_llvm_pure_intrin("int32x4", "llvm.aarch64.neon.saddlp", T.uint32(1), multiply_low)
        vec_b_high: T.int8x8 = T.vectorhigh("int8x8", vec_b)
        multiply_high: T.int16x8 = T.call_llvm_pure_intrin("int16x8", "llvm.aarch64.neon.smull", T.uint32(2), vec_a, vec_b_high)
        pairwise_reduction_high: T.int32x4 = T.call_llvm_pure_intrin("int32x4", "llvm.aarch64.neon.saddlp", T.uint32(1), multiply_high)
        C[0:4] = C[0:4] + T.call_llvm_pure_intrin("int32x4", "llvm.aarch64.neon.addp", T.uint32(2), pairwise_reduction_low, pairwise_reduction_high)"""
)

# TVM's sdot4 (AMDGPU) impl: a reinterpret of a vector load inside the call.
SDOT4 = (
    HEAD
    + """def sdot4(A_handle: T.handle, B_handle: T.handle, C_handle: T.handle):
    A = T.match_buffer(A_handle, (4,), "int8", scope="shared", align=4, offset_factor=1)
    B = T.match_buffer(B_handle, (4,), "int8", scope="shared", align=4, offset_factor=1)
    C = T.match_buffer(C_handle, (1,), "int32", scope="local", align=4, offset_factor=1)
    with T.block("root"):
        T.reads(C[0], A[0:4], B[0:4])
        T.writes(C[0])
        C[0] = C[0] + T.call_llvm_pure_intrin("int32", "llvm.amdgcn.sdot4", T.uint32(4), T.reinterpret("int32", A[0:4]), T.reinterpret("int32", B[0:4]), 0, T.bool(True))"""
)

# A C routine returning a pointer, called for its effect on the buffers.
EXTERN_HANDLE = (
    HEAD
    + """def decode(compressed: T.handle, decompressed: T.handle):
    Compressed = T.match_buffer(compressed, (1,), "int32", scope="local")
    Decompressed = T.match_buffer(decompressed, (8,), "float16", scope="local")
    with T.block("root"):
        T.reads(Compressed[0])
        T.writes(Decompressed[0:8])
        T.call_extern("handle", "test_decode_i4s_to_f16", Compressed.data, Decompressed.data, 8)"""
)

# A requantization as TVM prints it (the flags as T.bool, no dtype=).
QNN = (
    HEAD
    + """def requantize(A: T.Buffer((16,), "int32"), L: T.Buffer((16,), "int32"), R: T.Buffer((16,), "int32"), M: T.Buffer((16,), "int32"), B: T.Buffer((16,), "int32")):
    # with T.block("root"):
    for i in range(16):
        with T.block("B"):
            vi = T.axis.spatial(16, i)
            T.reads(A[vi], M[vi], L[vi], R[vi])
            T.writes(B[vi])
            B[vi] = T.q_multiply_shift(T.q_multiply_shift_per_axis(A[vi], M[vi], L[vi], R[vi], 31, T.bool(False), T.bool(True)), 1457846997, 31, 0)"""
)


@pytest.mark.parametrize("text", [VNNI, NEON, SDOT4, EXTERN_HANDLE, QNN])
def test_prints_back_as_tvm_writes_it(text):
    assert tir_mlir.parse(text).script() == text


def test_ir_holds_a_bitcast_call_and_an_llvm_intrinsic_call():
    ir_text = str(tir_mlir.parse(VNNI).module)
    assert '"tir.call"(%' in ir_text and 'callee = "reinterpret"' in ir_text
    assert 'symbol = "llvm.x86.avx512.vpdpbusd.512"' in ir_text
    assert "vector<64xi8>" in ir_text and "vector<16xi32>" in ir_text


def test_q_multiply_shift_accepts_tvm_script_dtype_and_python_bools():
    written = QNN.replace("T.bool(False), T.bool(True)", "False, True").replace(
        "31, 0)", '31, 0, dtype="int32")'
    )
    assert tir_mlir.parse(written).script() == QNN


def _fn(body: str, params='A: T.Buffer((16,), "int8"), C: T.Buffer((4,), "int32")') -> str:
    return HEAD + f"def f({params}):\n" + "".join(f"    {line}\n" for line in body.splitlines())


@pytest.mark.parametrize(
    "body, match",
    [
        ('x: T.int32 = T.reinterpret("int32", A[0:8])', r"int8x8 \(64 bits\) to int32 \(32 bits\)"),
        ('x: T.int8x4 = T.vectorlow("int8x4", A[0:16])', "is a int8x8, not int8x4"),
        ('x: T.int8x4 = T.reinterpret("int9", A[0:4])', "unknown dtype 'int9'"),
        (
            'C[0:4] = T.call_llvm_pure_intrin("int32x4", "llvm.x", C[0:4])',
            "the number of its arguments",
        ),
        (
            'C[0:4] = T.call_llvm_pure_intrin("int32x4", "sdot", T.uint32(1), C[0:4])',
            "not an LLVM intrinsic name",
        ),
        ("C[0] = T.q_multiply_shift(C[0], C[1], 31)", "takes 4 arguments, got 3"),
        (
            "C[0] = T.q_multiply_shift_per_axis(C[0], C[1], C[2], C[3], 31, 1, 0)",
            "is_lshift_required / is_rshift_required are True or False",
        ),
        ('C[0] = T.q_multiply_shift(C[0], C[1], 31, 0, dtype="int64")', "computes int32 only"),
        ("C[0] = T.q_multiply_shift(A[0], C[1], 31, 0)", "found int8"),
    ],
)
def test_bad_calls_are_errors_at_the_call(body, match):
    with pytest.raises(TIRParseError, match=match) as e:
        tir_mlir.parse(_fn(body))
    assert str(e.value).startswith("<string>:5:")
