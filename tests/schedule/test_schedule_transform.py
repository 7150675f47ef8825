"""tile_with_tensor_intrin (tir_mlir/schedule/transform.py): TVM's tiling of a block's loops to
a tensor intrinsic's desc, checked against the text TVM 0.21 gives for its own test
(test_tir_schedule_transform.py's dense case, at a smaller size; the desc is TVM's VNNI one)."""

import tir_mlir
from tir_mlir.schedule.transform import tile_with_tensor_intrin

VNNI_DESC = """
@T.prim_func
def dot_product_16x4_u8i8i32_desc(A_handle: T.handle, B_handle: T.handle, C_handle: T.handle):
    A = T.match_buffer(A_handle, (4,), "uint8", offset_factor=1)
    B = T.match_buffer(B_handle, (16, 4), "int8", offset_factor=1)
    C = T.match_buffer(C_handle, (16,), "int32", offset_factor=1)
    with T.block("root"):
        T.reads(C[0:16], A[0:4], B[0:16, 0:4])
        T.writes(C[0:16])
        for i, k in T.grid(16, 4):
            with T.block("update"):
                vi, vk = T.axis.remap("SR", [i, k])
                T.reads(C[vi], A[vk], B[vi, vk])
                T.writes(C[vi])
                C[vi] = C[vi] + T.Cast("int32", A[vk]) * T.Cast("int32", B[vi, vk])
"""

DENSE = """
@T.prim_func
def main(X: T.Buffer((64, 64), "uint8"), W: T.Buffer((4, 16, 16, 4), "int8"),
         compute: T.Buffer((64, {N}), "int32")):
    for i0, i1, i2 in T.grid(64, {N}, 64):
        with T.block("compute"):
            i, j, k = T.axis.remap("SSR", [i0, i1, i2])
            with T.init():
                compute[i, j] = 0
            compute[i, j] = compute[i, j] + T.Cast("int32", X[i, k]) * T.Cast("int32", W[j // 16, k // 4, j % 16, k % 4])
"""

TILED = """\
# from tvm.script import tir as T

@T.prim_func
def main(X: T.Buffer((64, 64), "uint8"), W: T.Buffer((4, 16, 16, 4), "int8"), compute: T.Buffer((64, 64), "int32")):
    # with T.block("root"):
    for i0, i1_0, i2_0, i1_1, i2_1 in T.grid(64, 4, 16, 16, 4):
        with T.block("compute"):
            i = T.axis.spatial(64, i0)
            j = T.axis.spatial(64, i1_0 * 16 + i1_1)
            k = T.axis.reduce(64, i2_0 * 4 + i2_1)
            T.reads(X[i, k], W[j // 16, k // 4, j % 16, k % 4])
            T.writes(compute[i, j])
            with T.init():
                compute[i, j] = 0
            compute[i, j] = compute[i, j] + T.Cast("int32", X[i, k]) * T.Cast("int32", W[j // 16, k // 4, j % 16, k % 4])"""


def test_dense_is_tiled_as_tvm_tiles_it():
    sch = tir_mlir.Schedule(tir_mlir.parse(DENSE.format(N=64)))
    block = sch.get_block("compute")
    tiled = tile_with_tensor_intrin(sch, block, VNNI_DESC)
    assert sch.mod.script() == TILED
    # the result is the outermost loop the intrinsic covers (TVM's i1_1)
    assert sch.get(tiled).same_as(sch.get(sch.get_loops(block)[3]))
    assert [i.name for i in sch.trace.insts if i.name in ("split", "reorder")] == [
        "split",
        "split",
        "reorder",
    ]


def test_loops_the_desc_does_not_divide_give_none_and_change_nothing():
    sch = tir_mlir.Schedule(tir_mlir.parse(DENSE.format(N=60)))
    before = sch.mod.script()
    assert tile_with_tensor_intrin(sch, sch.get_block("compute"), VNNI_DESC) is None
    assert sch.mod.script() == before
