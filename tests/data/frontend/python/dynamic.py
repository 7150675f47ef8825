# Symbolic programs for one kernel over dynamic memrefs, as TVM 0.21 writes them.
from tvm.script import tir as T


@T.prim_func
def matmul(a: T.handle, b: T.handle, c: T.handle):
    T.func_attr({"tir.noalias": True})
    m = T.int32()
    A = T.match_buffer(a, (m, 64))
    B = T.match_buffer(b, (64, 32))
    C = T.match_buffer(c, (m, 32))
    for i, j, k in T.grid(m, 32, 64):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]


@T.prim_func
def tiled(a: T.handle, b: T.handle):
    T.func_attr({"tir.noalias": True})
    n = T.int32()
    A = T.match_buffer(a, (n,))
    B = T.match_buffer(b, (n,))
    for io in range(T.ceildiv(n, 4)):
        for ii in range(4):
            with T.block("B"):
                vi = T.axis.spatial(n, io * 4 + ii)
                T.where(io * 4 + ii < n)
                B[vi] = A[vi] * T.float32(3)


@T.prim_func
def halves(a: T.handle, b: T.handle):
    T.func_attr({"tir.noalias": True})
    n = T.int32()
    A = T.match_buffer(a, (n,))
    B = T.match_buffer(b, (n // 2,))
    for i in range(n // 2):
        with T.block("B"):
            vi = T.axis.spatial(n // 2, i)
            B[vi] = A[vi * 2] + A[vi * 2 + 1]


@T.prim_func
def head(a: T.handle, b: T.handle):
    T.func_attr({"tir.noalias": True})
    n = T.int32()
    A = T.match_buffer(a, (n,))
    B = T.match_buffer(b, (n,))
    for i in range(T.min(n, 16)):
        with T.block("B"):
            vi = T.axis.spatial(n, i)
            B[vi] = A[vi] + T.float32(1)


@T.prim_func
def two_stage(a: T.handle, c: T.handle):
    T.func_attr({"tir.noalias": True})
    n = T.int32()
    A = T.match_buffer(a, (n, 16))
    C = T.match_buffer(c, (n, 16))
    B = T.alloc_buffer((n, 16))
    for i, j in T.grid(n, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for i, j in T.grid(n, 16):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] + T.float32(1)


@T.prim_func
def add(a: T.handle, b: T.handle, c: T.handle):
    T.func_attr({"tir.noalias": True})
    n = T.int32()
    A = T.match_buffer(a, (n, 128))
    B = T.match_buffer(b, (n, 128))
    C = T.match_buffer(c, (n, 128))
    for i, j in T.grid(n, 128):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = A[vi, vj] + B[vi, vj]


@T.prim_func
def total(a: T.handle, b: T.handle):
    T.func_attr({"tir.noalias": True})
    n = T.int64()
    A = T.match_buffer(a, (n, 4))
    B = T.match_buffer(b, (4,))
    for j, k in T.grid(4, n):
        with T.block("B"):
            vj, vk = T.axis.remap("SR", [j, k])
            with T.init():
                B[vj] = T.float32(0)
            B[vj] = B[vj] + A[vk, vj]


@T.prim_func
def axpb(a: T.handle, b: T.handle, alpha: T.float32, n: T.int32, shift: T.int32):
    T.func_attr({"tir.noalias": True})
    A = T.match_buffer(a, (n,))
    B = T.match_buffer(b, (n,))
    for i in range(n):
        with T.block("B"):
            vi = T.axis.spatial(n, i)
            B[vi] = A[vi] * alpha + T.Cast("float32", shift)
