# from tvm.script import tir as T

@T.prim_func
def add(a: T.handle, b: T.handle, c: T.handle):
    T.func_attr({"tir.noalias": True})
    n = T.int32()
    A = T.match_buffer(a, (n, 16))
    B = T.match_buffer(b, (n, 16))
    C = T.match_buffer(c, (n, 16))
    # with T.block("root"):
    for i_j_fused_0 in T.parallel(n * 2):
        for i_j_fused_1 in T.vectorized(8):
            with T.block("C"):
                vi = T.axis.spatial(n, (i_j_fused_0 * 8 + i_j_fused_1) // 16)
                vj = T.axis.spatial(16, (i_j_fused_0 * 8 + i_j_fused_1) % 16)
                T.reads(A[vi, vj], B[vi, vj])
                T.writes(C[vi, vj])
                C[vi, vj] = A[vi, vj] + B[vi, vj]
