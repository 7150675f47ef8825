"""CPU tensor intrinsics.

mac16_f32: `C[0:16] += A[0] * B[0:16]` (float32): one row update of a matmul, 16 lanes wide.
Its impl is a vectorized loop: the lowering marks it for LLVM's loop vectorizer at 16 lanes,
one AVX-512 multiply-add (zmm) on this machine. Tensorize the inner 16 columns of a matmul
(`C[i, j] += A[i, k] * B[k, j]`, j split by 16, loop order ..., k, j_1) with it.
"""

from tir_mlir.schedule.tensor_intrin import TensorIntrin

MAC16_F32_DESC = """
@T.prim_func
def mac16_f32_desc(A: T.Buffer((1,), "float32"), B: T.Buffer((16,), "float32"),
                   C: T.Buffer((16,), "float32")):
    for j in range(16):
        with T.block("update"):
            vj = T.axis.spatial(16, j)
            C[vj] = C[vj] + A[0] * B[vj]
"""

MAC16_F32_IMPL = """
@T.prim_func
def mac16_f32_impl(A: T.Buffer((1,), "float32"), B: T.Buffer((16,), "float32"),
                   C: T.Buffer((16,), "float32")):
    for j in T.vectorized(16):
        C[j] = C[j] + A[0] * B[j]
"""

TensorIntrin.register("mac16_f32", MAC16_F32_DESC, MAC16_F32_IMPL)
