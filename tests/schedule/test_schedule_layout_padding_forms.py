"""transform_layout with pad_value for maps beyond TVM's usual `d // c, d % c` tile: an offset
(`(i + 1) // 8`, padding at both ends), a constant result (TVM's
test_index_map_dtype_legalize_with_constant), two padded dimensions. The producer writes the
pad value wherever the old index leaves the old shape."""

from schedule_check import check_all, check_error, parse
from tir_mlir import Schedule

ONE_D = """
@T.prim_func
def main(B: T.Buffer((N,), "int32")):
    A = T.alloc_buffer((N,), "int32")
    for i in range(N):
        with T.block("block"):
            v0 = T.axis.remap("S", [i])
            A[v0] = VALUE
    for i in range(N):
        with T.block("copy"):
            v0 = T.axis.remap("S", [i])
            B[v0] = A[v0]
"""

TWO_D = """
@T.prim_func
def main(B: T.Buffer((6, 6), "int32")):
    A = T.alloc_buffer((6, 6), "int32")
    for i, j in T.grid(6, 6):
        with T.block("block"):
            v0, v1 = T.axis.remap("SS", [i, j])
            A[v0, v1] = v0 * 10 + v1
    for i, j in T.grid(6, 6):
        with T.block("copy"):
            v0, v1 = T.axis.remap("SS", [i, j])
            B[v0, v1] = A[v0, v1]
"""


def _src(n, value):
    return ONE_D.replace("N", str(n)).replace("VALUE", value)


def test_offset_map_with_a_constant_result():
    src = _src(16, "v0 * 3")

    def sched(s):
        s.transform_layout(
            "block", ("write", 0), lambda i: [0, (i + 1) // 8, (i + 1) % 8], pad_value=-7
        )

    sch = check_all(src, sched, "main", tvm_diff=False)
    text = sch.mod.script()
    assert 'A = T.alloc_buffer((1, 3, 8), "int32")' in text
    assert (
        "T.if_then_else(v_axis1 * 8 + v_axis2 - 1 < 0 or v_axis1 * 8 + v_axis2 - 1 > 15, "
        "-7, (v_axis1 * 8 + v_axis2 - 1) * 3)"
    ) in text


def test_two_padded_dimensions():
    src = TWO_D

    def sched(s):
        s.transform_layout(
            "block", ("write", 0), lambda i, j: [i // 4, j // 4, i % 4, j % 4], pad_value=0
        )

    sch = check_all(src, sched, "main", tvm_diff=False)
    assert 'A = T.alloc_buffer((2, 2, 4, 4), "int32")' in sch.mod.script()


def test_usual_tile_keeps_tvms_condition():
    src = _src(14, "v0 + 1")

    def sched(s):
        s.transform_layout("block", ("write", 0), lambda i: [i // 4, i % 4], pad_value=0)

    sch = check_all(src, sched, "main")
    assert "T.if_then_else(v_axis0 == 3 and 2 <= v_axis1, 0, " in sch.mod.script()


def test_map_of_two_old_dimensions_refused():
    sch = Schedule(parse(TWO_D))
    b = sch.get_block("block")
    check_error(
        sch,
        lambda s: s.transform_layout(
            b, ("write", 0), lambda i, j: [(i + j) // 4, i % 4, j], pad_value=0
        ),
        "is not d \\+ a, \\(d \\+ a\\) // c",
    )


SIDE_EFFECTS = """
@T.prim_func
def main(A: T.Buffer((14,), "int32"), D: T.Buffer((14,), "int32"),
         E: T.Buffer((14,), "int32")):
    B = T.alloc_buffer((14,), "int32")
    for i in range(14):
        with T.block("block"):
            vi = T.axis.remap("S", [i])
            B[vi] = A[vi] + 1
            E[vi] = A[vi] * 2
    for i in range(14):
        with T.block("copy"):
            vi = T.axis.remap("S", [i])
            D[vi] = B[vi]
"""


def test_writer_with_other_effects_pads_in_a_block_after_it():
    """TVM's post-processing form: the writer kept, a padding block after its nest."""

    def sched(s):
        s.transform_layout("block", ("write", 0), lambda i: [i // 4, i % 4], pad_value=0)

    sch = check_all(SIDE_EFFECTS, sched, "main")
    assert """            B[vi // 4, vi % 4] = A[vi] + 1
            E[vi] = A[vi] * 2
    for axis0, axis1 in T.grid(4, 4):
        with T.block("buffer_B_padding"):
            v_axis0, v_axis1 = T.axis.remap("SS", [axis0, axis1])
            T.where(axis0 == 3 and 2 <= axis1)
            T.reads()
            T.writes(B[v_axis0, v_axis1])
            B[v_axis0, v_axis1] = 0""" in sch.mod.script()


def test_writer_at_a_constant_index_pads_in_a_block_after_it():
    src = """
@T.prim_func
def main(D: T.Buffer((14,), "int32")):
    B = T.alloc_buffer((14,), "int32")
    with T.block("block"):
        B[0] = 5
    for i in range(14):
        with T.block("copy"):
            vi = T.axis.remap("S", [i])
            D[vi] = T.if_then_else(vi == 0, B[vi], 0)
"""

    def sched(s):
        s.transform_layout("block", ("write", 0), lambda i: [i // 4, i % 4], pad_value=0)

    sch = check_all(src, sched, "main")
    assert 'with T.block("buffer_B_padding"):' in sch.mod.script()


def test_padding_block_needing_an_or_is_refused():
    """The padding block's T.where would need `or` (padding at both ends)."""
    sch = Schedule(parse(SIDE_EFFECTS))
    b = sch.get_block("block")
    check_error(
        sch,
        lambda s: s.transform_layout(
            b, ("write", 0), lambda i: [(i + 1) // 4, (i + 1) % 4], pad_value=0
        ),
        "writes other buffers too, and TVM's padding block after it would need a T.where with `or`",
    )


OPAQUE = """
@T.prim_func
def main(A: T.Buffer((14, 32), "int32"), D: T.Buffer((14,), "int32")):
    B = T.alloc_buffer((14,), "int32")
    for i in range(14):
        B[i] = 0
        for k in range(32):
            with T.block("block"):
                B[i] = B[i] + A[i, k]
    for i in range(14):
        with T.block("copy"):
            vi = T.axis.remap("S", [i])
            D[vi] = B[vi]
"""


def test_opaque_writer_loops_rewritten_in_place():
    """TVM's if_then_else_reduction_opaque: the loop over the buffer becomes the new shape's
    loops, every store padded, other uses of i read the inverse."""

    def sched(s):
        s.transform_layout("block", ("write", 0), lambda i: [i // 4, i % 4], pad_value=0)

    sch = check_all(OPAQUE, sched, "main")
    assert """    for axis0, axis1 in T.grid(4, 4):
        B[axis0, axis1] = T.if_then_else(axis0 == 3 and 2 <= axis1, 0, 0)
        for k in range(32):
            with T.block("block"):""" in sch.mod.script()
    assert "B[axis0, axis1] + A[axis0 * 4 + axis1, k]" in sch.mod.script()
