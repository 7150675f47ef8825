# from tvm.script import tir as T

@T.prim_func
def row_sum(a: T.handle, b: T.handle):
    T.func_attr({"tir.noalias": True})
    n, m = T.int32(), T.int32()
    A = T.match_buffer(a, (n, m))
    B = T.match_buffer(b, (n,))
    # with T.block("root"):
    for i_0 in T.parallel((n + 3) // 4):
        for k_0, i_1, k_1 in T.grid((m + 7) // 8, 4, 8):
            with T.block("B"):
                vi = T.axis.spatial(n, i_0 * 4 + i_1)
                vk = T.axis.reduce(m, k_0 * 8 + k_1)
                T.where(i_0 * 4 + i_1 < n and k_0 * 8 + k_1 < m)
                T.reads(A[vi, vk])
                T.writes(B[vi])
                with T.init():
                    B[vi] = T.float32(0.0)
                B[vi] = B[vi] + A[vi, vk]
