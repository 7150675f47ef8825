# from tvm.script import tir as T

@T.prim_func
def scale_sum(a: T.handle, c: T.handle):
    T.func_attr({"tir.noalias": True})
    n, m = T.int32(), T.int32()
    A = T.match_buffer(a, (n, m))
    C = T.match_buffer(c, (n,))
    # with T.block("root"):
    B = T.alloc_buffer((m, n))
    for i, j in T.grid(n, m):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads(A[vi, vj])
            T.writes(B[vj, vi])
            B[vj, vi] = A[vi, vj] * T.float32(2.0)
    for i, k in T.grid(n, m):
        with T.block("C"):
            vi, vk = T.axis.remap("SR", [i, k])
            T.reads(B[vk, vi])
            T.writes(C[vi])
            with T.init():
                C[vi] = T.float32(0.0)
            C[vi] = C[vi] + B[vk, vi]
