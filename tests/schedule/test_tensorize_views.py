"""tensorize as TVM's: the impl's parameters become T.match_buffer views of the matched regions
in the tensorized block, which keeps its T.reads / T.writes and takes the impl root block's
annotations (TVM 0.21's tensorize tests judge this form structurally)."""

import tir_mlir
from tir_mlir import Schedule
from tir_mlir.schedule.tensor_intrin import TensorIntrin

DESC = """
@T.prim_func
def dot_desc(a: T.handle, b: T.handle, c: T.handle):
    A = T.match_buffer(a, (4,))
    B = T.match_buffer(b, (4,))
    C = T.match_buffer(c, ())
    with T.block("root"):
        T.reads(C[()], A[0:4], B[0:4])
        T.writes(C[()])
        for i in range(4):
            with T.block("update"):
                vi = T.axis.remap("R", [i])
                C[()] = C[()] + A[vi] * B[vi]
"""

IMPL = """
@T.prim_func
def dot_impl(a: T.handle, b: T.handle, c: T.handle):
    A = T.match_buffer(a, (4,), offset_factor=1)
    B = T.match_buffer(b, (4,), offset_factor=1)
    C = T.match_buffer(c, (), offset_factor=1)
    with T.block("root"):
        T.reads(C[()], A[0:4], B[0:4])
        T.writes(C[()])
        T.block_attr({"from_impl": 1})
        T.call_extern("int32", "vec4add", C.data, C.elem_offset, A.data, A.elem_offset, B.data, B.elem_offset)
"""

MATMUL = """
@T.prim_func
def main(A: T.Buffer((8, 16), "float32"), B: T.Buffer((8, 16), "float32"),
         C: T.Buffer((8, 8), "float32")):
    for i, j, k in T.grid(8, 8, 16):
        with T.block("update"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vj, vk]
"""

EXPECTED = """\
# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((8, 16), "float32"), B: T.Buffer((8, 16), "float32"), C: T.Buffer((8, 8), "float32")):
    # with T.block("root"):
    for i, j, k_0 in T.grid(8, 8, 4):
        with T.block("update_o"):
            vi_o, vj_o, vk_o = T.axis.remap("SSR", [i, j, k_0])
            T.reads(A[vi_o, vk_o * 4:vk_o * 4 + 4], B[vj_o, vk_o * 4:vk_o * 4 + 4])
            T.writes(C[vi_o, vj_o])
            T.block_attr({"from_impl": 1})
            A_1 = T.match_buffer(A[vi_o, vk_o * 4:vk_o * 4 + 4], (4,), offset_factor=1)
            B_1 = T.match_buffer(B[vj_o, vk_o * 4:vk_o * 4 + 4], (4,), offset_factor=1)
            C_1 = T.match_buffer(C[vi_o, vj_o], (), offset_factor=1)
            with T.init():
                with T.block("update_init"):
                    T.reads()
                    T.writes(C[vi_o, vj_o])
                    C[vi_o, vj_o] = T.float32(0.0)
            T.call_extern("int32", "vec4add", C_1.data, C_1.elem_offset, A_1.data, A_1.elem_offset, B_1.data, B_1.elem_offset)
"""


def _tensorized():
    TensorIntrin.register("test_views_dot4", DESC, IMPL, override=True)
    sch = Schedule(tir_mlir.parse(MATMUL))
    _, _, k = sch.get_loops(sch.get_block("update"))
    _, k1 = sch.split(k, [None, 4])
    sch.tensorize(k1, "test_views_dot4")
    return sch


def test_impl_params_are_match_buffer_views_and_regions_are_kept():
    assert _tensorized().mod.script() + "\n" == EXPECTED


def test_the_printed_result_reads_back_the_same():
    assert tir_mlir.parse(EXPECTED).script() + "\n" == EXPECTED


def test_an_int64_program_gets_the_impl_in_int64():
    """TVM normalizes the impl to the block's index dtype: int64 view shapes, and index
    arithmetic over their elem_offset in int64."""
    src = (
        MATMUL.replace("(8, 16)", "(T.int64(8), T.int64(16))")
        .replace("(8, 8)", "(T.int64(8), T.int64(8))")
        .replace("T.grid(8, 8, 16)", "T.grid(T.int64(8), T.int64(8), T.int64(16))")
    )
    impl = IMPL.replace("C.elem_offset, A.data", "C.elem_offset // 4, A.data")
    TensorIntrin.register("test_views_dot4_i64", DESC, impl, override=True)
    sch = Schedule(tir_mlir.parse(src))
    _, _, k = sch.get_loops(sch.get_block("update"))
    _, k1 = sch.split(k, [None, 4])
    sch.tensorize(k1, "test_views_dot4_i64")
    text = sch.mod.script()
    assert (
        "A_1 = T.match_buffer(A[vi_o, vk_o * T.int64(4):vk_o * T.int64(4) + T.int64(4)], "
        "(T.int64(4),), offset_factor=1)"
    ) in text
    assert "C_1.elem_offset // T.int64(4), A_1.data" in text
