# Symbolic shapes and scalar parameters, as TVM 0.21 writes them.
from tvm.script import tir as T


@T.prim_func
def add(a: T.handle, b: T.handle, c: T.handle):
    T.func_attr({"tir.noalias": True})
    n = T.int32()
    A = T.match_buffer(a, (n, 16))
    B = T.match_buffer(b, (n, 16))
    C = T.match_buffer(c, (n, 16))
    for i, j in T.grid(n, 16):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = A[vi, vj] + B[vi, vj]


@T.prim_func
def row_sum(a: T.handle, b: T.handle):
    T.func_attr({"tir.noalias": True})
    n, m = T.int64(), T.int64()
    A = T.match_buffer(a, (n, m))
    B = T.match_buffer(b, (n,))
    for i, k in T.grid(n, m):
        with T.block("B"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                B[vi] = T.float32(0)
            B[vi] = B[vi] + A[vi, vk]


@T.prim_func
def axpy(a: T.handle, b: T.handle, alpha: T.float32, chunk: T.int32):
    T.func_attr({"tir.noalias": True})
    n = T.int32()
    A = T.match_buffer(a, (n,))
    B = T.match_buffer(b, (n,))
    for i in range(T.ceildiv(n, chunk)):
        for j in range(chunk):
            with T.block("B"):
                vi = T.axis.spatial(n, i * chunk + j)
                T.where(i * chunk + j < n)
                B[vi] = B[vi] + alpha * A[vi]


@T.prim_func
def reverse(a: T.handle, b: T.handle):
    T.func_attr({"tir.noalias": True})
    n = T.int32()
    A = T.match_buffer(a, (n,))
    B = T.match_buffer(b, (n + 2,))
    for i in range(n):
        with T.block("B"):
            vi = T.axis.spatial(n, i)
            B[vi + 2] = A[n - 1 - vi] * T.float32(2)


@T.prim_func
def scale_add(a: T.handle, b: T.handle, alpha: T.float32, offset: T.int32, k: T.int32):
    T.func_attr({"tir.noalias": True})
    n = T.int32()
    A = T.match_buffer(a, (n, 8))
    B = T.match_buffer(b, (n, 8))
    for i in range(n):
        for j in range(k):
            with T.block("B"):
                vi = T.axis.spatial(n, i)
                vj = T.axis.spatial(8, j)
                B[vi, vj] = A[vi, vj] * alpha + T.Cast("float32", offset + vi)
