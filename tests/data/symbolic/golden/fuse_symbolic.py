# from tvm.script import tir as T

@T.prim_func
def row_sum(a: T.handle, b: T.handle):
    T.func_attr({"tir.noalias": True})
    n, m = T.int32(), T.int32()
    A = T.match_buffer(a, (n, m))
    B = T.match_buffer(b, (n,))
    # with T.block("root"):
    for i_k_fused in range(n * m):
        with T.block("B"):
            vi = T.axis.spatial(n, i_k_fused % (m * n) // m)
            vk = T.axis.reduce(m, i_k_fused % m)
            T.reads(A[vi, vk])
            T.writes(B[vi])
            with T.init():
                B[vi] = T.float32(0.0)
            B[vi] = B[vi] + A[vi, vk]
