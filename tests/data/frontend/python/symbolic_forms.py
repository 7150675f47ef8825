# Symbolic functions whose programs use the vars in non-affine ways, as TVM 0.21 writes them.
from tvm.script import tir as T


@T.prim_func
def tiles(a: T.handle, b: T.handle):
    T.func_attr({"tir.noalias": True})
    n = T.int32()
    A = T.match_buffer(a, (n,))
    B = T.match_buffer(b, (T.ceildiv(n, 4) * 4,))
    for i in range(T.ceildiv(n, 4)):
        for j in range(4):
            with T.block("B"):
                vi = T.axis.spatial(n, i * 4 + j)
                T.where(i * 4 + j < n)
                B[vi] = A[vi] * T.float32(2)


@T.prim_func
def grid(a: T.handle, b: T.handle):
    T.func_attr({"tir.noalias": True})
    n = T.int32()
    A = T.match_buffer(a, (n, 8))
    B = T.match_buffer(b, (T.ceildiv(n + 2, 4), 8))
    for i, j in T.grid(T.ceildiv(n + 2, 4), 8):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[T.min(vi * 4, n - 1), vj]


@T.prim_func
def pool(a: T.handle, b: T.handle):
    T.func_attr({"tir.noalias": True})
    n = T.int32()
    A = T.match_buffer(a, (n,))
    B = T.match_buffer(b, (n // 4,))
    for i in range(n // 4):
        with T.block("B"):
            vi = T.axis.spatial(n // 4, i)
            B[vi] = A[vi * 4 + n % 4]


@T.prim_func
def chunks(a: T.handle, b: T.handle, chunk: T.int32):
    T.func_attr({"tir.noalias": True})
    n, m = T.int32(), T.int32()
    A = T.match_buffer(a, (n, m))
    B = T.match_buffer(b, (n * m,))
    for i, j in T.grid(T.ceildiv(n * m, chunk), chunk):
        with T.block("B"):
            vi = T.axis.spatial(n * m, i * chunk + j)
            T.where(i * chunk + j < n * m)
            B[vi] = A[vi // m, vi % m] + T.float32(1)


@T.prim_func
def trunc(a: T.handle, b: T.handle):
    T.func_attr({"tir.noalias": True})
    n = T.int32()
    A = T.match_buffer(a, (n,))
    B = T.match_buffer(b, (T.truncdiv(n, 3), T.max(n, 5)))
    for i, j in T.grid(T.truncdiv(n, 3), T.max(n, 5)):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[T.truncmod(n, 3) + vi]


@T.prim_func
def mean(a: T.handle, b: T.handle):
    T.func_attr({"tir.noalias": True})
    n = T.int32()
    A = T.match_buffer(a, (n,))
    B = T.match_buffer(b, (n,))
    for i in range(n):
        with T.block("B"):
            vi = T.axis.spatial(n, i)
            B[vi] = A[vi] / T.Cast("float32", n)


@T.prim_func
def mean_sq(a: T.handle, b: T.handle):
    T.func_attr({"tir.noalias": True})
    n = T.int32()
    A = T.match_buffer(a, (n,))
    B = T.match_buffer(b, (n,))
    for i in range(n):
        with T.block("B"):
            vi = T.axis.spatial(n, i)
            B[vi] = A[vi] / T.Cast("float32", n * n)


@T.prim_func
def kinds(a: T.handle, b: T.handle):
    T.func_attr({"tir.noalias": True})
    n = T.int32()
    A = T.match_buffer(a, (n,))
    B = T.match_buffer(b, (n,))
    for i in T.parallel(T.ceildiv(n, 4)):
        for j in T.serial(T.ceildiv(n, 8)):
            for k in T.unroll(T.ceildiv(n, 2)):
                with T.block("B"):
                    vi = T.axis.spatial(n, i)
                    B[vi] = A[vi]
