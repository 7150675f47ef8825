"""blockize of a block with a T.where, storage_align with offset == factor (like TVM), and
rejections kept on purpose where TVM 0.21 accepts (reverse_compute_inline of a buffer with
another reader, rfactor of an unused loop): numerics against the unscheduled program, exact
messages."""

from schedule_check import check_all, check_error, parse
from shared_programs import MATMUL_16 as MM
from tir_mlir import Schedule

TWO_READERS = """
@T.prim_func
def main(A: T.Buffer((8, 8), "float32"), C: T.Buffer((8, 8), "float32"), D: T.Buffer((8, 8), "float32")):
    B = T.alloc_buffer((8, 8))
    for i, j in T.grid(8, 8):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for i, j in T.grid(8, 8):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] + T.float32(1)
    for i, j in T.grid(8, 8):
        with T.block("D"):
            vi, vj = T.axis.remap("SS", [i, j])
            D[vi, vj] = B[vi, vj] * T.float32(3)
"""


def _split_blockize(loop, at):
    def fn(s):
        b = s.get_block("C")
        s.split(dict(zip("ijk", s.get_loops(b)))[loop], factors=[None, 5])
        s.blockize(s.get_loops(b)[at])

    return fn


def test_blockize_where_on_outer_block():
    sch = check_all(MM, _split_blockize("i", 2), "main", tvm_diff=False)
    text = sch.mod.script()
    assert "T.where(i_0 * 5 + i_1 < 16)" in text.split('T.block("C_o")')[1].split("T.init")[0]


def test_blockize_where_on_inner_and_init_block():
    sch = check_all(MM, _split_blockize("j", 0), "main", tvm_diff=False)
    init, body = sch.mod.script().split('T.block("C_init")')[1].split('T.block("C")')
    assert "T.where(j_0 * 5 + j_1 < 16)" in init and "T.where(j_0 * 5 + j_1 < 16)" in body


def test_blockize_where_reduction_only_not_on_init():
    sch = check_all(MM, _split_blockize("k", 1), "main", tvm_diff=False)
    init, body = sch.mod.script().split('T.block("C_init")')[1].split('T.block("C")')
    assert "T.where" not in init and "T.where(k_0 * 5 + k_1 < 16)" in body


def test_blockize_where_mixed_rejected():
    sch = Schedule(parse(MM))
    b = sch.get_block("C")
    sch.split(sch.get_loops(b)[0], factors=[None, 5])
    i1 = sch.get_loops(b)[1]
    check_error(
        sch,
        lambda s: s.blockize(i1),
        r"blockize: the predicate \(T.where\) of block 'C' mixes loops inside and "
        r"outside loop 'i_1'",
    )


def test_reverse_compute_inline_other_reader_rejected():
    sch = Schedule(parse(TWO_READERS))
    c = sch.get_block("C")
    check_error(
        sch,
        lambda s: s.reverse_compute_inline(c),
        "reverse_compute_inline: block 'C': buffer 'B' is also read by block 'D'",
    )


def test_storage_align_offset_equal_factor_pads_like_offset_zero():
    """TVM accepts offset == factor; its padding makes it the same as offset 0."""
    sch = check_all(TWO_READERS, lambda s: s.storage_align(s.get_block("B"), 0, 0, 4, 4), "main")
    assert '"buffer_dim_align": [[0, 0, 4, 4]]' in sch.mod.script()
