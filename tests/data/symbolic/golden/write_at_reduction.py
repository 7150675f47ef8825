# from tvm.script import tir as T

@T.prim_func
def row_sum(a: T.handle, b: T.handle):
    T.func_attr({"tir.noalias": True})
    n, m = T.int32(), T.int32()
    A = T.match_buffer(a, (n, m))
    B = T.match_buffer(b, (n,))
    # with T.block("root"):
    B_local = T.alloc_buffer((n,), scope="local")
    for i in range(n):
        for k in range(m):
            with T.block("B"):
                vi, vk = T.axis.remap("SR", [i, k])
                T.reads(A[vi, vk])
                T.writes(B_local[vi])
                with T.init():
                    B_local[vi] = T.float32(0.0)
                B_local[vi] = B_local[vi] + A[vi, vk]
        with T.block("B_local"):
            v0 = T.axis.spatial(n, i)
            T.reads(B_local[v0])
            T.writes(B[v0])
            T.block_attr({"auto_copy": True})
            for ax0 in range(1):
                B[v0 + ax0] = B_local[v0 + ax0]
