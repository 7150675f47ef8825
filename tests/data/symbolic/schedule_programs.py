# Symbolic programs the schedule tests (tests/test_schedule_symbolic.py) schedule, as TVM 0.21
# writes them; golden/ holds TVM 0.21's printed results (record_schedule_goldens.py).
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
def matmul(a: T.handle, b: T.handle, c: T.handle):
    T.func_attr({"tir.noalias": True})
    n = T.int32()
    A = T.match_buffer(a, (n, 64))
    B = T.match_buffer(b, (64, 64))
    C = T.match_buffer(c, (n, 64))
    for i, j, k in T.grid(n, 64, 64):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]


@T.prim_func
def scale_sum(a: T.handle, c: T.handle):
    T.func_attr({"tir.noalias": True})
    n, m = T.int32(), T.int32()
    A = T.match_buffer(a, (n, m))
    C = T.match_buffer(c, (n,))
    B = T.alloc_buffer((n, m))
    for i, j in T.grid(n, m):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for i, k in T.grid(n, m):
        with T.block("C"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                C[vi] = T.float32(0)
            C[vi] = C[vi] + B[vi, vk]


@T.prim_func
def add_assumed(a: T.handle, c: T.handle):
    T.func_attr({"tir.noalias": True})
    n = T.int32()
    A = T.match_buffer(a, (n,))
    C = T.match_buffer(c, (n,))
    T.evaluate(T.assume(n % 4 == 0))
    for i in range(n):
        with T.block("C"):
            vi = T.axis.spatial(n, i)
            C[vi] = A[vi] + T.float32(1)


@T.prim_func
def reverse(a: T.handle, b: T.handle):
    T.func_attr({"tir.noalias": True})
    n = T.int32()
    A = T.match_buffer(a, (n,))
    B = T.match_buffer(b, (n,))
    for i in range(n):
        with T.block("B"):
            vi = T.axis.spatial(n, i)
            B[vi] = A[n - vi - 1] * T.float32(2)
