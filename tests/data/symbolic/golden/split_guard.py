# from tvm.script import tir as T

@T.prim_func
def add(a: T.handle, b: T.handle, c: T.handle):
    T.func_attr({"tir.noalias": True})
    n = T.int32()
    A = T.match_buffer(a, (n, 16))
    B = T.match_buffer(b, (n, 16))
    C = T.match_buffer(c, (n, 16))
    # with T.block("root"):
    for i_0, i_1, j in T.grid((n + 3) // 4, 4, 16):
        with T.block("C"):
            vi = T.axis.spatial(n, i_0 * 4 + i_1)
            vj = T.axis.spatial(16, j)
            T.where(i_0 * 4 + i_1 < n)
            T.reads(A[vi, vj], B[vi, vj])
            T.writes(C[vi, vj])
            C[vi, vj] = A[vi, vj] + B[vi, vj]
