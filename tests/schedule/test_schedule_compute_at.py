"""compute_at, reverse_compute_at (single and grouped) and compute_root: printed result (as TVM
0.21 prints it), numerics against the unscheduled program, trace replay, TVM differential, and
each illegal case (message + module unchanged)."""

from schedule_check import check_all, check_error, parse
from shared_programs import CONV2D_PAD_C4_6X6 as CONV
import tir_mlir
from tir_mlir import Schedule
from compute_location import CHAIN, MM_BIAS_RELU, blocks, body

PROGRAMS = __import__("pathlib").Path(__file__).parent.parent / "data" / "programs"

EW = """
@T.prim_func
def main(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
    B = T.alloc_buffer((16, 16))
    for i, j in T.grid(16, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for i, j in T.grid(16, 16):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] + T.float32(1)
"""


def _ew_split(sch):
    i, j = sch.get_loops(sch.get_block("C"))
    jo, _ = sch.split(j, [None, 4])
    sch.compute_at(sch.get_block("B"), jo)


def test_compute_at_split_loop():
    sch = check_all(EW, _ew_split, "main")
    assert (
        body(sch)
        == """\
B = T.alloc_buffer((16, 16))
for i, j_0 in T.grid(16, 4):
    for ax0 in range(4):
        with T.block("B"):
            vi = T.axis.spatial(16, i)
            vj = T.axis.spatial(16, j_0 * 4 + ax0)
            T.reads(A[vi, vj])
            T.writes(B[vi, vj])
            B[vi, vj] = A[vi, vj] * T.float32(2.0)
    for j_1 in range(4):
        with T.block("C"):
            vi = T.axis.spatial(16, i)
            vj = T.axis.spatial(16, j_0 * 4 + j_1)
            T.reads(B[vi, vj])
            T.writes(C[vi, vj])
            C[vi, vj] = B[vi, vj] + T.float32(1.0)"""
    )


def _rca_unit(sch):
    i, _ = sch.get_loops(sch.get_block("B"))
    sch.reverse_compute_at(sch.get_block("C"), i, preserve_unit_loops=True)


def test_reverse_compute_at_preserve_unit_loops():
    sch = check_all(EW, _rca_unit, "main")
    text = body(sch)
    assert "for ax0, ax1 in T.grid(1, 16):" in text
    assert "vi = T.axis.spatial(16, i + ax0)" in text
    assert "vj = T.axis.spatial(16, ax1)" in text


def _conv_pad(sch):
    loops = sch.get_loops(sch.get_block("B"))
    sch.compute_at(sch.get_block("Apad"), loops[3])


def test_compute_at_padding_into_conv2d():
    sch = check_all(CONV, _conv_pad, "main")
    assert body(sch).splitlines()[:8] == [
        "Apad = T.alloc_buffer((1, 4, 8, 8))",
        "for n, f, y, x in T.grid(1, 8, 6, 6):",
        "    for ax0, ax1, ax2 in T.grid(4, 3, 3):",
        '        with T.block("Apad"):',
        "            vn = T.axis.spatial(1, 0)",
        "            vc = T.axis.spatial(4, ax0)",
        "            vh = T.axis.spatial(8, y + ax1)",
        "            vw = T.axis.spatial(8, x + ax2)",
    ]


def _epilogue(sch):
    i, j, k = sch.get_loops(sch.get_block("C"))
    i0, i1 = sch.split(i, [None, 4])
    j0, j1 = sch.split(j, [None, 4])
    sch.reorder(i0, j0, k, i1, j1)
    sch.reverse_compute_at(sch.get_block("D"), j0)


def test_reverse_compute_at_bias_relu_epilogue():
    sch = check_all(MM_BIAS_RELU, _epilogue, "main")
    text = body(sch)
    assert (
        """
    for ax0, ax1 in T.grid(4, 4):
        with T.block("D"):
            vi = T.axis.spatial(16, i_0 * 4 + ax0)
            vj = T.axis.spatial(16, j_0 * 4 + ax1)"""
        in text
    )
    assert text.index('with T.block("C")') < text.index('with T.block("D")')


def _chain_one_by_one(sch):
    i, _ = sch.get_loops(sch.get_block("D"))
    sch.compute_at(sch.get_block("C"), i)
    sch.compute_at(sch.get_block("B"), i)


def _chain_group(sch):
    i, _ = sch.get_loops(sch.get_block("D"))
    sch.compute_at([sch.get_block("B"), sch.get_block("C")], i)


def test_compute_at_chain_and_group():
    one = check_all(CHAIN, _chain_one_by_one, "main")
    text = body(one)
    assert 'vi, vj = T.axis.remap("SS", [ax0, i])' in text  # B, read transposed by C
    assert 'vi, vj = T.axis.remap("SS", [i, ax0])' in text
    group = check_all(CHAIN, _chain_group, "main", tvm_diff=False)  # TVM has no group form
    assert body(group) == text


def _index_first(sch):
    i, _ = sch.get_loops(sch.get_block("D"))
    sch.compute_at(sch.get_block("C"), i)
    sch.compute_at(sch.get_block("B"), i, index=0)


def test_compute_at_explicit_index():
    sch = check_all(CHAIN, _index_first, "main")
    text = body(sch)
    assert text.index('T.block("B")') < text.index('T.block("C")') < text.index('T.block("D")')


def test_compute_root_undoes_compute_at():
    mod = parse(CHAIN)
    sch = Schedule(mod)
    i, _ = sch.get_loops(sch.get_block("D"))
    sch.compute_at(sch.get_block("C"), i)
    sch.compute_root(sch.get_block("C"))
    text = body(sch)
    assert (
        """for ax0, ax1 in T.grid(16, 16):
    with T.block("C"):
        vi, vj = T.axis.remap("SS", [ax0, ax1])"""
        in text
    )
    assert text.index('T.block("B")') < text.index('T.block("C")') < text.index('T.block("D")')
    from schedule_check import check_numerics, check_replay

    check_numerics(mod, sch.mod, "main")
    check_replay(sch, mod)
    before = sch.mod.script()
    sch.compute_root(sch.get_block("C"))  # already at the root: no change
    assert sch.mod.script() == before


# --- illegal cases ----------------------------------------------------------------------------
def test_error_consumer_not_under_loop():
    sch = Schedule(parse(CHAIN))
    i, _ = sch.get_loops(sch.get_block("D"))
    blk = blocks(sch)
    check_error(
        sch,
        lambda s: s.compute_at(blk["B"], i),
        r"compute_at: block 'B' at loop 'i': the primitive requires all the "
        r"consumer\(s\) of the block under the loop \('C' is not\)",
    )


def test_error_producer_not_under_loop():
    sch = Schedule(parse(CHAIN))
    i, _ = sch.get_loops(sch.get_block("B"))
    blk = blocks(sch)
    check_error(
        sch,
        lambda s: s.reverse_compute_at(blk["D"], i),
        r"reverse_compute_at: block 'D' at loop 'i': the primitive requires all the "
        r"producer\(s\) of the block under the loop \('C' is not\)",
    )


def test_error_loop_is_ancestor():
    sch = Schedule(parse(EW))
    i, _ = sch.get_loops(sch.get_block("B"))
    blk = blocks(sch)
    check_error(
        sch,
        lambda s: s.compute_at(blk["B"], i),
        r"block 'B' at loop 'i': the loop is an ancestor of block 'B' \(it must be "
        r"outside it, under the same block scope\)",
    )


def test_error_not_only_writer():
    src = EW.replace(
        """    for i, j in T.grid(16, 16):
        with T.block("C"):""",
        """    for i, j in T.grid(16, 16):
        with T.block("B2"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = T.float32(3)
    for i, j in T.grid(16, 16):
        with T.block("C"):""",
    )
    sch = Schedule(parse(src))
    loops = sch.get_loops(sch.get_block("C"))
    blk = blocks(sch)
    check_error(
        sch,
        lambda s: s.compute_at(blk["B"], loops[0]),
        r"compute_at: block 'B' at loop 'i': the block is not a complete block: it is "
        r"not the only writer of its buffers \(block 'B2' writes them too\)",
    )


def test_non_constant_extent_bounding_region():
    """B[vi // 3] over one i_0 iteration (4 rows of C) spans 1 or 2 rows of B: like TVM, B is
    computed for the bounding region, 2 rows from (i_0 * 4) // 3."""
    src = EW.replace("C[vi, vj] = B[vi, vj]", "C[vi, vj] = B[vi // 3, vj]")

    def fn(s):
        i, _ = s.get_loops(s.get_block("C"))
        i0, _ = s.split(i, [None, 4])
        s.compute_at(s.get_block("B"), i0)

    text = check_all(src, fn, "main").mod.script()
    assert "for ax0, ax1 in T.grid(2, 16)" in text and "i_0 * 4 // 3 + ax0" in text


def test_error_bad_index():
    sch = Schedule(parse(CHAIN))
    i, _ = sch.get_loops(sch.get_block("D"))
    sch.compute_at(sch.get_block("C"), i)
    blk = blocks(sch)
    check_error(
        sch,
        lambda s: s.compute_at(blk["B"], i, index=1),
        r"compute_at: block 'B' at loop 'i': index 1 is not a valid position "
        r"\(valid: 0..0\)",
    )


def test_error_compute_root_between_producer_and_consumer():
    sch = Schedule(parse(CHAIN))
    i, _ = sch.get_loops(sch.get_block("D"))
    sch.compute_at(sch.get_block("C"), i)
    sch.compute_at(sch.get_block("B"), i)
    blk = blocks(sch)
    check_error(
        sch,
        lambda s: s.compute_root(blk["C"]),
        r"compute_root: block 'C': no position in the loop body is after all the "
        r"block's producers and before all its consumers",
    )


def test_reverse_compute_at_cannot_move_a_block_past_its_consumers():
    """Found by the schedule fuzzer: softmax's `maxelem` has no producer, so reverse_compute_at
    recomputes it under the loop; under `norm`'s loop it would run after its consumer `exp`."""
    mod = tir_mlir.load(str(PROGRAMS / "softmax.tir"))
    sch = Schedule(mod)
    i, _ = sch.get_loops(sch.get_block("norm"))
    maxelem = sch.get_block("maxelem")
    check_error(
        sch,
        lambda s: s.reverse_compute_at(maxelem, i),
        r"the block's consumer\(s\) 'exp' would run before it",
    )


def test_error_loop_in_another_block_scope():
    """TVM's blockized_1: a loop inside another block (here the blockized C) is not under the
    block's scope, whatever its consumers."""
    sch = Schedule(parse(EW))
    i, _ = sch.get_loops(sch.get_block("C"))
    sch.blockize(i)
    i, _ = sch.get_loops(sch.get_block("C"))
    blk = blocks(sch)
    check_error(
        sch,
        lambda s: s.compute_at(blk["B"], i),
        r"compute_at: block 'B' at loop 'i': the block and the loop are not under the "
        r"same block scope \(the loop is inside block 'C_o', the block is not\)",
    )


# TVM's test_compute_at_non_perfect_channel_group
CHANNEL_GROUPS = """
@T.prim_func
def main(X: T.Buffer((720, 8, 8), "float32"), Y: T.Buffer((720, 8, 8), "float32")):
    B = T.alloc_buffer((45,))
    for i in range(45):
        with T.block("init"):
            vi = T.axis.spatial(45, i)
            B[vi] = T.Cast("float32", vi)
    for c_o, h, w, c_i in T.grid(2, 8, 8, 360):
        with T.block("compute"):
            hh, ww = T.axis.remap("SS", [h, w])
            cc = T.axis.spatial(720, c_o * 360 + c_i)
            Y[cc, hh, ww] = X[cc, hh, ww] + B[cc // 16]
"""


def test_floordiv_region_start_folds_over_the_outer_loop():
    """B[cc // 16], cc = c_o * 360 + c_i: one c_o iteration reads B[c_o * 22 : c_o * 22 + 23]
    (c_o * 360 // 16 is c_o * 22 for c_o < 2), TVM's region: no T.where, not 24 values."""

    def fn(s):
        s.compute_at(s.get_block("init"), s.get_loops(s.get_block("compute"))[0])

    text = check_all(CHANNEL_GROUPS, fn, "main").mod.script()
    assert (
        """
    for c_o in range(2):
        for ax0 in range(23):
            with T.block("init"):
                vi = T.axis.spatial(45, c_o * 22 + ax0)
                T.reads()
                T.writes(B[vi])
                B[vi] = T.Cast("float32", vi)
"""
        in text
    )


# TVM's test_reverse_compute_at_with_unit_loop
UNIT_LOOP = """
@T.prim_func
def main(A: T.Buffer((128, 128), "float32"), D: T.Buffer((1, 2, 1), "float32")):
    B = T.alloc_buffer((128, 128))
    for i_0, j_0, i_1, j_1 in T.grid(T.int64(8), T.int64(8), T.int64(16), T.int64(16)):
        with T.block("B"):
            vi = T.axis.spatial(T.int64(128), i_0 * T.int64(16) + i_1)
            vj = T.axis.spatial(T.int64(128), j_0 * T.int64(16) + j_1)
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for ax0, ax1, ax2 in T.grid(T.int64(1), T.int64(2), T.int64(1)):
        with T.block("D"):
            v0, v1, v2 = T.axis.remap("SSS", [ax0, ax1, ax2])
            D[v0, v1, v2] = B[v0, v1] + T.float32(1)
"""


def test_unit_loop_is_zero_in_the_predicate():
    """A new loop of extent 1 keeps its `+ ax0` in the binding but is 0 in the T.where, as
    TVM simplifies the predicate over the loop's range (TVM's expected text)."""

    def fn(s):
        s.reverse_compute_at(
            s.get_block("D"), s.get_loops(s.get_block("B"))[2], preserve_unit_loops=True, index=1
        )

    text = check_all(UNIT_LOOP, fn, "main").mod.script()
    assert (
        """
                v0 = T.axis.spatial(T.int64(1), i_0 * T.int64(16) + i_1 + ax0)
                v1 = T.axis.spatial(T.int64(2), j_0 * T.int64(16) + ax1)
                v2 = T.axis.spatial(T.int64(1), ax2)
                T.where(i_0 * T.int64(16) + i_1 < T.int64(1) and j_0 * T.int64(16) + ax1 < T.int64(2))
"""
        in text
    )
