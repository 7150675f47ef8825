"""TVMScript programs that several test files share, kept once here: the matmul and matmul +
ReLU of workloads.py at the size most tests use, and the irregular ones. (Not
tests/programs.py: that name would clash with benchmarks/programs.py, which some tests put on
sys.path.)"""

import numpy as np
from workloads import matmul, mm_relu

# 16x16x16 float32 matmul with T.init, one block "C".
MATMUL_16 = matmul(16)

# 16x16x16 matmul into intermediate Y (block "Y", with T.init), then ReLU into C (block "C").
MM_RELU_16 = mm_relu(16)

# conv2d NCHW: A (1, 4, 6, 6), W (8, 4, 3, 3), padding 1 via block "Apad", reduction block "B".
CONV2D_PAD_C4_6X6 = """
@T.prim_func
def main(A: T.Buffer((1, 4, 6, 6), "float32"), W: T.Buffer((8, 4, 3, 3), "float32"), B: T.Buffer((1, 8, 6, 6), "float32")):
    Apad = T.alloc_buffer((1, 4, 8, 8))
    for n, c, h, w in T.grid(1, 4, 8, 8):
        with T.block("Apad"):
            vn, vc, vh, vw = T.axis.remap("SSSS", [n, c, h, w])
            Apad[vn, vc, vh, vw] = T.if_then_else(1 <= vh and vh < 7 and 1 <= vw and vw < 7, A[vn, vc, vh - 1, vw - 1], T.float32(0))
    for n, f, y, x, rc, ry, rx in T.grid(1, 8, 6, 6, 4, 3, 3):
        with T.block("B"):
            vn, vf, vy, vx, vrc, vry, vrx = T.axis.remap("SSSSRRR", [n, f, y, x, rc, ry, rx])
            with T.init():
                B[vn, vf, vy, vx] = T.float32(0)
            B[vn, vf, vy, vx] = B[vn, vf, vy, vx] + Apad[vn, vrc, vy + vry, vx + vrx] * W[vf, vrc, vry, vrx]
"""

# conv2d NCHW without padding: A (1, 2, 6, 6), W (4, 2, 3, 3) -> B (1, 4, 4, 4), one block "conv".
CONV2D_C2_6X6 = """
@T.prim_func
def main(A: T.Buffer((1, 2, 6, 6), "float32"), W: T.Buffer((4, 2, 3, 3), "float32"), B: T.Buffer((1, 4, 4, 4), "float32")):
    for n, f, y, x, rc, ry, rx in T.grid(1, 4, 4, 4, 2, 3, 3):
        with T.block("conv"):
            vn, vf, vy, vx, vc, vry, vrx = T.axis.remap("SSSSRRR", [n, f, y, x, rc, ry, rx])
            with T.init():
                B[vn, vf, vy, vx] = T.float32(0)
            B[vn, vf, vy, vx] = B[vn, vf, vy, vx] + A[vn, vc, vy + vry, vx + vrx] * W[vf, vc, vry, vrx]
"""

# The tensorize description of a 16x64 GEMV update (block "update"), for extern/packed
# implementations.
GEMV_DESC = """
@T.prim_func
def gemv_desc(a: T.Buffer((64,), "float32"), b: T.Buffer((16, 64), "float32"),
              c: T.Buffer((16,), "float32")):
    for i, k in T.grid(16, 64):
        with T.block("update"):
            vi, vk = T.axis.remap("SR", [i, k])
            c[vi] = c[vi] + a[vk] * b[vi, vk]
"""

# 32x48x64 matmul with B transposed (C = A B^T): the GEMV intrinsic tensorizes its inner loops.
MM_T = """
@T.prim_func
def main(A: T.Buffer((32, 64), "float32"), B: T.Buffer((48, 64), "float32"),
         C: T.Buffer((32, 48), "float32")):
    for i, j, k in T.grid(32, 48, 64):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vj, vk]
"""

# 16x64 -> 16 row sum (block "B", with T.init).
ROWSUM_16X64 = """
@T.prim_func
def main(A: T.Buffer((16, 64), "float32"), B: T.Buffer((16,), "float32")):
    for i, k in T.grid(16, 64):
        with T.block("B"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                B[vi] = T.float32(0)
            B[vi] = B[vi] + A[vi, vk]
"""

# B[i, j] = A[i, j // 4] * 3 over 64 x 64 (block "B", noalias): `j // 4` is not linear in a lane,
# so a vectorized j reaches LLVM as a loop with a width hint.
QUARTER_COLUMNS_64 = """
@T.prim_func
def main(A: T.Buffer((64, 16), "float32"), B: T.Buffer((64, 64), "float32")):
    T.func_attr({"tir.noalias": True})
    for i, j in T.grid(64, 64):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj // 4] * T.float32(3)
"""

# A buffer of vector elements: V (4, 2) of int16x4 = A's rows in 4-lane slices plus a ramp, then
# B = V * 3 back into (4, 8) int16 (blocks "v", "b"); `int16x4_buffer_reference` is its result.
INT16X4_BUFFER = """
@T.prim_func
def f(A: T.Buffer((4, 8), "int16"), B: T.Buffer((4, 8), "int16")):
    V = T.alloc_buffer((4, 2), "int16x4")
    for i, j in T.grid(4, 2):
        with T.block("v"):
            vi, vj = T.axis.remap("SS", [i, j])
            V[vi, vj] = A[vi, vj * 4:vj * 4 + 4] + T.Cast("int16x4", T.Ramp(vj, 2, 4))
    for i, j in T.grid(4, 2):
        with T.block("b"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj * 4:vj * 4 + 4] = V[vi, vj] * T.int16x4(3)
"""


def int16x4_buffer_reference(a):
    """INT16X4_BUFFER's B for an int16 (4, 8) A: lane l of slice j adds j + 2 l."""
    lane = np.arange(8) % 4
    return (a + (np.arange(8) // 4 + 2 * lane)) * 3
