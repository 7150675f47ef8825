# from tvm.script import tir as T

@T.prim_func
def reverse(a: T.handle, b: T.handle):
    T.func_attr({"tir.noalias": True})
    n = T.int32()
    A = T.match_buffer(a, (n,))
    B = T.match_buffer(b, (n,))
    # with T.block("root"):
    A_global = T.alloc_buffer((n,))
    for i_0 in range((n + 3) // 4):
        for ax0 in range(4):
            with T.block("A_global"):
                v0 = T.axis.spatial(n, n - i_0 * 4 - 4 + ax0)
                T.where(4 <= n + ax0 - i_0 * 4)
                T.reads(A[v0])
                T.writes(A_global[v0])
                A_global[v0] = A[v0]
        for i_1 in range(4):
            with T.block("B"):
                vi = T.axis.spatial(n, i_0 * 4 + i_1)
                T.where(i_0 * 4 + i_1 < n)
                T.reads(A_global[n - vi - 1])
                T.writes(B[vi])
                B[vi] = A_global[n - vi - 1] * T.float32(2.0)
