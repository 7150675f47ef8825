# from tvm.script import tir as T

@T.prim_func
def add_assumed(a: T.handle, c: T.handle):
    T.func_attr({"tir.noalias": True})
    n = T.int32()
    A = T.match_buffer(a, (n,))
    C = T.match_buffer(c, (n,))
    # with T.block("root"):
    T.assume(n % 4 == 0)
    for i_0, i_1 in T.grid((n + 3) // 4, 4):
        with T.block("C"):
            vi = T.axis.spatial(n, i_0 * 4 + i_1)
            T.reads(A[vi])
            T.writes(C[vi])
            C[vi] = A[vi] + T.float32(1.0)
