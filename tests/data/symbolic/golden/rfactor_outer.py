# from tvm.script import tir as T

@T.prim_func
def row_sum(a: T.handle, b: T.handle):
    T.func_attr({"tir.noalias": True})
    n, m = T.int32(), T.int32()
    A = T.match_buffer(a, (n, m))
    B = T.match_buffer(b, (n,))
    # with T.block("root"):
    B_rf = T.alloc_buffer(((m + 3) // 4, n))
    for i, k_0, k_1 in T.grid(n, (m + 3) // 4, 4):
        with T.block("B_rf"):
            vk_0, vi, vk_1 = T.axis.remap("SSR", [k_0, i, k_1])
            T.where(k_0 * 4 + k_1 < m)
            T.reads(A[vi, vk_0 * 4 + vk_1])
            T.writes(B_rf[vk_0, vi])
            with T.init():
                B_rf[vk_0, vi] = T.float32(0.0)
            B_rf[vk_0, vi] = B_rf[vk_0, vi] + A[vi, vk_0 * 4 + vk_1]
    for i, k_0 in T.grid(n, (m + 3) // 4):
        with T.block("B"):
            vk_0, vi = T.axis.remap("RS", [k_0, i])
            T.reads(B_rf[vk_0, vi])
            T.writes(B[vi])
            with T.init():
                B[vi] = T.float32(0.0)
            B[vi] = B[vi] + B_rf[vk_0, vi]
