# TVMScript in a Python file: shapes and dtypes from module constants, a macro, a factory.
from tvm.script import tir as T, ir as I

N = 64
M, K = 32, N // 2
DTYPE = "float32"
SHAPE = (N, M)


@T.macro
def scale_into(src, dst, i, j, factor):
    with T.block("scale"):
        vi, vj = T.axis.remap("SS", [i, j])
        dst[vi, vj] = src[vi, vj] * T.float32(factor)


@T.prim_func
def scaled(A: T.Buffer(SHAPE, DTYPE), B: T.Buffer(SHAPE, DTYPE)):
    for i, j in T.grid(N, M):
        scale_into(A, B, i, j, 2.5)


@T.prim_func
def matmul(A: T.Buffer((N, K), DTYPE), B: T.Buffer((K, M), DTYPE), C: T.Buffer((N, M), DTYPE)):
    for i, j, k in T.grid(N, M, K):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]


def make_add(n, dtype):
    @T.prim_func
    def add(a: T.handle, b: T.handle, c: T.handle):
        A = T.match_buffer(a, (n,), dtype)
        B = T.match_buffer(b, (n,), dtype)
        C = T.match_buffer(c, (n,), dtype)
        for i in range(n):
            with T.block("C"):
                vi = T.axis.spatial(n, i)
                C[vi] = A[vi] + B[vi]
    return add


add_100_f32 = make_add(100, "float32")
add_8_i32 = make_add(8, "int32")
