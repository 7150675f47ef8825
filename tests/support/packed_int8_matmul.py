"""A uint8 x int8 -> int32 matmul with its weight packed for dot-product intrinsics (TVM's
te.create_prim_func program, laid out for VNNI/sdot): the tensorize and lowering tests of target
intrinsics share it."""

# TVM's te.create_prim_func of a uint8 x int8 -> int32 matmul, after
# transform_layout(W, [i // 16, j // 4, i % 16, j % 4]), split(j, 16), split(k, 4),
# reorder(k_0, j_1, k_1), decompose_reduction(k_0).
PACKED = """# from tvm.script import tir as T

@T.prim_func
def main(X: T.Buffer((128, 128), "uint8"), W: T.Buffer((8, 32, 16, 4), "int8"), compute: T.Buffer((128, 128), "int32")):
    T.func_attr({"tir.noalias": True})
    # with T.block("root"):
    for i, j_0 in T.grid(128, 8):
        for j_1_init in range(16):
            with T.block("compute_init"):
                v_i = T.axis.spatial(128, i)
                v_j = T.axis.spatial(128, j_0 * 16 + j_1_init)
                T.reads()
                T.writes(compute[v_i, v_j])
                compute[v_i, v_j] = 0
        for k_0, j_1, k_1 in T.grid(32, 16, 4):
            with T.block("compute_update"):
                v_i = T.axis.spatial(128, i)
                v_j = T.axis.spatial(128, j_0 * 16 + j_1)
                v_k = T.axis.reduce(128, k_0 * 4 + k_1)
                T.reads(compute[v_i, v_j], X[v_i, v_k], W[v_j // 16, v_k // 4, v_j % 16, v_k % 4])
                T.writes(compute[v_i, v_j])
                compute[v_i, v_j] = compute[v_i, v_j] + T.Cast("int32", X[v_i, v_k]) * T.Cast("int32", W[v_j // 16, v_k // 4, v_j % 16, v_k % 4])"""
