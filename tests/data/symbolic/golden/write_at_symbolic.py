# from tvm.script import tir as T

@T.prim_func
def matmul(a: T.handle, B: T.Buffer((64, 64), "float32"), c: T.handle):
    T.func_attr({"tir.noalias": True})
    n = T.int32()
    A = T.match_buffer(a, (n, 64))
    C = T.match_buffer(c, (n, 64))
    # with T.block("root"):
    C_shared = T.alloc_buffer((n, 64), scope="shared")
    for i in range(n):
        for j, k in T.grid(64, 64):
            with T.block("C"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                T.reads(A[vi, vk], B[vk, vj])
                T.writes(C_shared[vi, vj])
                with T.init():
                    C_shared[vi, vj] = T.float32(0.0)
                C_shared[vi, vj] = C_shared[vi, vj] + A[vi, vk] * B[vk, vj]
        with T.block("C_shared"):
            v0 = T.axis.spatial(n, i)
            T.reads(C_shared[v0, 0:64])
            T.writes(C[v0, 0:64])
            T.block_attr({"auto_copy": True})
            for ax0, ax1 in T.grid(1, 64):
                C[v0 + ax0, ax1] = C_shared[v0 + ax0, ax1]
