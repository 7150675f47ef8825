# from tvm.script import tir as T

@T.prim_func
def scale_sum(a: T.handle, c: T.handle):
    T.func_attr({"tir.noalias": True})
    n, m = T.int32(), T.int32()
    A = T.match_buffer(a, (n, m))
    C = T.match_buffer(c, (n,))
    # with T.block("root"):
    B = T.alloc_buffer((n, m))
    for i in range(n):
        for ax0 in range(m):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, ax0])
                T.reads(A[vi, vj])
                T.writes(B[vi, vj])
                B[vi, vj] = A[vi, vj] * T.float32(2.0)
        for k in range(m):
            with T.block("C"):
                vi, vk = T.axis.remap("SR", [i, k])
                T.reads(B[vi, vk])
                T.writes(C[vi])
                with T.init():
                    C[vi] = T.float32(0.0)
                C[vi] = C[vi] + B[vi, vk]
