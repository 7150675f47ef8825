# from tvm.script import tir as T

@T.prim_func
def matmul(a: T.handle, B: T.Buffer((64, 64), "float32"), c: T.handle):
    T.func_attr({"tir.noalias": True})
    n = T.int32()
    A = T.match_buffer(a, (n, 64))
    C = T.match_buffer(c, (n, 64))
    # with T.block("root"):
    A_shared = T.alloc_buffer((n, 64), scope="shared")
    for i, j in T.grid(n, 64):
        with T.block("A_shared"):
            v0 = T.axis.spatial(n, i)
            T.reads(A[v0, 0:64])
            T.writes(A_shared[v0, 0:64])
            T.block_attr({"auto_copy": True})
            for ax0, ax1 in T.grid(1, 64):
                A_shared[v0 + ax0, ax1] = A[v0 + ax0, ax1]
        for k in range(64):
            with T.block("C"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                T.reads(A_shared[vi, vk], B[vk, vj])
                T.writes(C[vi, vj])
                with T.init():
                    C[vi, vj] = T.float32(0.0)
                C[vi, vj] = C[vi, vj] + A_shared[vi, vk] * B[vk, vj]
