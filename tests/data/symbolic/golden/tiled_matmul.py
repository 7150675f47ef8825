# from tvm.script import tir as T

@T.prim_func
def matmul(a: T.handle, B: T.Buffer((64, 64), "float32"), c: T.handle):
    T.func_attr({"tir.noalias": True})
    n = T.int32()
    A = T.match_buffer(a, (n, 64))
    C = T.match_buffer(c, (n, 64))
    # with T.block("root"):
    for i_0 in T.parallel((n + 15) // 16):
        for j_0 in range(8):
            for i_1_init in range(16):
                for j_1_init in T.vectorized(8):
                    with T.block("C_init"):
                        vi = T.axis.spatial(n, i_0 * 16 + i_1_init)
                        vj = T.axis.spatial(64, j_0 * 8 + j_1_init)
                        T.where(i_0 * 16 + i_1_init < n)
                        T.reads()
                        T.writes(C[vi, vj])
                        C[vi, vj] = T.float32(0.0)
            for k, i_1 in T.grid(64, 16):
                for j_1 in T.vectorized(8):
                    with T.block("C_update"):
                        vi = T.axis.spatial(n, i_0 * 16 + i_1)
                        vj = T.axis.spatial(64, j_0 * 8 + j_1)
                        vk = T.axis.reduce(64, k)
                        T.where(i_0 * 16 + i_1 < n)
                        T.reads(C[vi, vj], A[vi, vk], B[vk, vj])
                        T.writes(C[vi, vj])
                        C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
