"""A constant indexed through `T.Buffer(..., data=T.allocate_const(...))` without T.decl_buffer,
as TVM 0.21's allocate_const schedule tests write it: TVM declares no buffer, so no block lists
it in its inferred T.reads (a T.reads entry written for it stays), and it prints back as
`T.Buffer`. Texts are TVM's printing of the same programs and of its schedules' results."""

import numpy as np
import pytest

import tir_mlir

BEFORE = """# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((4, 256), "float32"), C: T.Buffer((4, 256), "float32")):
    # with T.block("root"):
    B = T.alloc_buffer((4,))
    offset = T.allocate_const([1.0, 2.0, 3.0, 4.0], "float32", [4])
    offset_1 = T.Buffer((4,), data=offset)
    for i in range(4):
        with T.block("compute_B"):
            vi = T.axis.spatial(4, i)
            T.reads()
            T.writes(B[vi])
            B[vi] = T.float32(10.0) * T.Cast("float32", vi) + offset_1[vi]
    for i, j in T.grid(4, 256):
        with T.block("compute_C"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads(B[vi])
            T.writes(C[vi, vj])
            C[vi, vj] = B[vi] + T.float32(100.0) * T.Cast("float32", vj)"""

HEAD = BEFORE.split("    for i in range(4)")[0]

COMPUTED_AT = (
    HEAD
    + """    for i in range(4):
        with T.block("compute_B"):
            vi = T.axis.spatial(4, i)
            T.reads()
            T.writes(B[vi])
            B[vi] = T.float32(10.0) * T.Cast("float32", vi) + offset_1[vi]
        for j in range(256):
            with T.block("compute_C"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(B[vi])
                T.writes(C[vi, vj])
                C[vi, vj] = B[vi] + T.float32(100.0) * T.Cast("float32", vj)"""
)

INLINED = """# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((4, 256), "float32"), C: T.Buffer((4, 256), "float32")):
    # with T.block("root"):
    offset = T.allocate_const([1.0, 2.0, 3.0, 4.0], "float32", [4])
    offset_1 = T.Buffer((4,), data=offset)
    for i, j in T.grid(4, 256):
        with T.block("compute_C"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads()
            T.writes(C[vi, vj])
            C[vi, vj] = T.float32(10.0) * T.Cast("float32", vi) + offset_1[vi] + T.float32(100.0) * T.Cast("float32", vj)"""


def printed(text: str) -> str:
    """What the printer gives for TVM's text: as TVM's printer, it names the constant's data
    after its buffer and the buffer next (`offset_1` / `offset_1_1`)."""
    text = text.replace("offset_1", "offset_1_1").replace("c1_buf", "c1_buf_1")
    text = text.replace("offset = ", "offset_1 = ").replace("data=offset)", "data=offset_1)")
    return text.replace("c1 = ", "c1_buf = ").replace("data=c1)", "data=c1_buf)")


def _expected_c():
    b = 10.0 * np.arange(4, dtype="float32") + np.array([1, 2, 3, 4], dtype="float32")
    return b[:, None] + 100.0 * np.arange(256, dtype="float32")[None, :]


def _run(mod):
    a = np.zeros((4, 256), "float32")
    c = np.zeros((4, 256), "float32")
    tir_mlir.build(mod, debug=True)["main"](a, c)
    return c


def test_prints_back_undeclared_and_out_of_the_inferred_reads():
    assert tir_mlir.parse(BEFORE).script() == printed(BEFORE)


def test_decl_buffer_form_still_declares_and_reads():
    declared = BEFORE.replace("T.Buffer((4,), data=offset)", "T.decl_buffer((4,), data=offset)")
    text = tir_mlir.parse(declared).script()
    assert "T.decl_buffer((4,), data=offset_1)" in text
    assert "T.reads(offset_1_1[vi])" in text


@pytest.mark.parametrize("reverse", [False, True])
def test_compute_at_keeps_the_constant_undeclared(reverse):
    sch = tir_mlir.Schedule(tir_mlir.parse(BEFORE))
    if reverse:
        sch.reverse_compute_at(sch.get_block("compute_C"), sch.get_loops("compute_B")[0])
    else:
        sch.compute_at(sch.get_block("compute_B"), sch.get_loops("compute_C")[0])
    expected = printed(COMPUTED_AT)
    if reverse:  # the new loop named as TVM's reverse_compute_at names it
        expected = expected.replace("for j in", "for ax0 in").replace("[i, j]", "[i, ax0]")
    assert sch.mod.script() == expected
    np.testing.assert_allclose(_run(sch.mod), _expected_c())


def test_compute_inline_moves_the_load_without_a_read_region():
    sch = tir_mlir.Schedule(tir_mlir.parse(BEFORE))
    sch.compute_inline(sch.get_block("compute_B"))
    assert sch.mod.script() == printed(INLINED)
    np.testing.assert_allclose(_run(sch.mod), _expected_c())


# TVM's test_cache_write_allocate_const: the written T.reads list the constants; they stay.
LISTED = """# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((8, 8), "float32"), C: T.Buffer((8, 8), "float32")):
    # with T.block("root"):
    c1 = T.allocate_const([0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0], "float32", [8])
    c1_buf = T.Buffer((8,), data=c1)
    for i, j, x in T.grid(8, 8, 8):
        with T.block("B"):
            vi, vj, vx = T.axis.remap("SSS", [i, j, x])
            T.reads(A[vi, vj], c1_buf[vx])
            T.writes(C[vi, vj])
            C[vi, vj] = A[vi, vj] * c1_buf[vx]"""


def test_a_listed_constant_stays_in_t_reads_through_cache_read():
    sch = tir_mlir.Schedule(tir_mlir.parse(LISTED))
    assert sch.mod.script() == printed(LISTED)
    sch.cache_read(sch.get_block("B"), 0, "global")
    assert "T.reads(A_global[vi, vj], c1_buf_1[vx])" in sch.mod.script()
