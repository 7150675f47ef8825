# Symbolic programs the build tests (tests/test_symbolic_build.py) compile once and run at
# several sizes, as TVM 0.21 writes them.
from tvm.script import tir as T


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
def batch_matmul(a: T.handle, b: T.handle, c: T.handle):
    T.func_attr({"tir.noalias": True})
    bs, n = T.int32(), T.int32()
    A = T.match_buffer(a, (bs, n, 16))
    B = T.match_buffer(b, (bs, 16, n))
    C = T.match_buffer(c, (bs, n, n))
    for p, i, j, k in T.grid(bs, n, n, 16):
        with T.block("C"):
            vp, vi, vj, vk = T.axis.remap("SSSR", [p, i, j, k])
            with T.init():
                C[vp, vi, vj] = T.float32(0)
            C[vp, vi, vj] = C[vp, vi, vj] + A[vp, vi, vk] * B[vp, vk, vj]


@T.prim_func
def row_sum(a: T.handle, b: T.handle):
    T.func_attr({"tir.noalias": True})
    n, m = T.int32(), T.int32()
    A = T.match_buffer(a, (n, m))
    B = T.match_buffer(b, (n,))
    for i, k in T.grid(n, m):
        with T.block("B"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                B[vi] = T.float32(0)
            B[vi] = B[vi] + A[vi, vk]


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
def softmax(a: T.handle, b: T.handle):
    T.func_attr({"tir.noalias": True})
    n = T.int32()
    A = T.match_buffer(a, (n,))
    B = T.match_buffer(b, (n,))
    mx = T.alloc_buffer((1,))
    s = T.alloc_buffer((1,))
    for k in range(n):
        with T.block("mx"):
            vk = T.axis.reduce(n, k)
            with T.init():
                mx[0] = T.float32(-3.4e38)
            mx[0] = T.max(mx[0], A[vk])
    for k in range(n):
        with T.block("s"):
            vk = T.axis.reduce(n, k)
            with T.init():
                s[0] = T.float32(0)
            s[0] = s[0] + T.exp(A[vk] - mx[0])
    for i in range(n):
        with T.block("B"):
            vi = T.axis.spatial(n, i)
            B[vi] = T.exp(A[vi] - mx[0]) / s[0]


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
    B = T.match_buffer(b, (T.min(n, 16),))
    for i in range(T.min(n, 16)):
        with T.block("B"):
            vi = T.axis.spatial(T.min(n, 16), i)
            B[vi] = A[vi] + T.float32(1)


@T.prim_func
def flat(a: T.handle, b: T.handle):
    T.func_attr({"tir.noalias": True})
    n, m = T.int32(), T.int32()
    A = T.match_buffer(a, (n, m))
    B = T.match_buffer(b, (n * m + 1,))
    for i in range(n * m + 1):
        with T.block("B"):
            vi = T.axis.spatial(n * m + 1, i)
            B[vi] = T.if_then_else(vi < n * m, A[vi // m, vi % m], T.float32(-1))


@T.prim_func
def reverse(a: T.handle, b: T.handle):
    T.func_attr({"tir.noalias": True})
    n = T.int32()
    A = T.match_buffer(a, (n,))
    B = T.match_buffer(b, (n,))
    for i in range(n):
        with T.block("B"):
            vi = T.axis.spatial(n, i)
            B[vi] = A[n - 1 - vi]


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
def conv2d(a: T.handle, w: T.handle, c: T.handle):
    T.func_attr({"tir.noalias": True})
    h, wd = T.int32(), T.int32()
    A = T.match_buffer(a, (h + 2, wd + 2))
    W = T.match_buffer(w, (3, 3))
    C = T.match_buffer(c, (h, wd))
    for y, x, ry, rx in T.grid(h, wd, 3, 3):
        with T.block("C"):
            vy, vx, vry, vrx = T.axis.remap("SSRR", [y, x, ry, rx])
            with T.init():
                C[vy, vx] = T.float32(0)
            C[vy, vx] = C[vy, vx] + A[vy + vry, vx + vrx] * W[vry, vrx]


@T.prim_func
def axpb(a: T.handle, b: T.handle, alpha: T.float32, n: T.int32, shift: T.int32):
    T.func_attr({"tir.noalias": True})
    A = T.match_buffer(a, (n,))
    B = T.match_buffer(b, (n,))
    for i in range(n):
        with T.block("B"):
            vi = T.axis.spatial(n, i)
            B[vi] = A[vi] * alpha + T.Cast("float32", shift)


@T.prim_func
def scaled(a: T.handle, alpha: T.float32):
    T.func_attr({"tir.noalias": True})
    n = T.int32()
    A = T.match_buffer(a, (n,))
    T.evaluate(T.assume(n % 4 == 0))
    for i in range(n):
        with T.block("A"):
            vi = T.axis.spatial(n, i)
            A[vi] = A[vi] * alpha
