# from tvm.script import tir as T

@T.prim_func
def row_sum(a: T.handle, b: T.handle):
    T.func_attr({"tir.noalias": True})
    n, m = T.int32(), T.int32()
    A = T.match_buffer(a, (n, m))
    B = T.match_buffer(b, (n,))
    # with T.block("root"):
    for i in range(n):
        with T.block("B_init"):
            vi = T.axis.spatial(n, i)
            T.reads()
            T.writes(B[vi])
            B[vi] = T.float32(0.0)
        for k_0, k_1 in T.grid((m + 7) // 8, 8):
            with T.block("B_update"):
                vi = T.axis.spatial(n, i)
                vk = T.axis.reduce(m, k_0 * 8 + k_1)
                T.where(k_0 * 8 + k_1 < m)
                T.reads(B[vi], A[vi, vk])
                T.writes(B[vi])
                B[vi] = B[vi] + A[vi, vk]
