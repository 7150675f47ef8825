# from tvm.script import tir as T

@T.prim_func
def scale_sum(a: T.handle, c: T.handle):
    T.func_attr({"tir.noalias": True})
    n, m = T.int32(), T.int32()
    A = T.match_buffer(a, (n, m))
    C = T.match_buffer(c, (n,))
    # with T.block("root"):
    B = T.alloc_buffer((n, m))
    for i_j_fused_2, i_j_fused_0, i_j_fused_1 in T.grid(8, (n * m + 31) // 32, 4):
        with T.block("B"):
            vi = T.axis.spatial(n, (i_j_fused_0 * 32 + i_j_fused_1 * 8 + i_j_fused_2) % (m * n) // m)
            vj = T.axis.spatial(m, (i_j_fused_0 * 32 + i_j_fused_1 * 8 + i_j_fused_2) % m)
            T.where((i_j_fused_0 * 4 + i_j_fused_1) * 8 + i_j_fused_2 < n * m)
            T.reads(A[vi, vj])
            T.writes(B[vi, vj])
            B[vi, vj] = A[vi, vj] * T.float32(2.0)
    for i, k in T.grid(n, m):
        with T.block("C"):
            vi, vk = T.axis.remap("SR", [i, k])
            T.reads(B[vi, vk])
            T.writes(C[vi])
            with T.init():
                C[vi] = T.float32(0.0)
            C[vi] = C[vi] + B[vi, vk]
