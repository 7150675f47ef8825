# from tvm.script import tir as T

@T.prim_func
def matmul(a: T.handle, B: T.Buffer((64, 64), "float32"), c: T.handle):
    T.func_attr({"tir.noalias": True})
    n = T.int32()
    A = T.match_buffer(a, (n, 64))
    C = T.match_buffer(c, (n, 64))
    # with T.block("root"):
    C_global = T.alloc_buffer((n, 64))
    for i_0 in range((n + 7) // 8):
        for i_1, j, k in T.grid(8, 64, 64):
            with T.block("C"):
                vi = T.axis.spatial(n, i_0 * 8 + i_1)
                vj, vk = T.axis.remap("SR", [j, k])
                T.where(i_0 * 8 + i_1 < n)
                T.reads(A[vi, vk], B[vk, vj])
                T.writes(C_global[vi, vj])
                with T.init():
                    C_global[vi, vj] = T.float32(0.0)
                C_global[vi, vj] = C_global[vi, vj] + A[vi, vk] * B[vk, vj]
        for ax0, ax1 in T.grid(8, 64):
            with T.block("C_global"):
                v0 = T.axis.spatial(n, i_0 * 8 + ax0)
                v1 = T.axis.spatial(64, ax1)
                T.where(i_0 * 8 + ax0 < n)
                T.reads(C_global[v0, v1])
                T.writes(C[v0, v1])
                C[v0, v1] = C_global[v0, v1]
