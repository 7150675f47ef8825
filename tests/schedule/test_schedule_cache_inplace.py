"""cache_inplace: TVM 0.21's output, numbers, trace round trip, and the cases TVM refuses."""

import pytest

from schedule_check import check_all, check_error, parse
from shared_programs import MATMUL_16 as MATMUL
from tir_mlir import Schedule
from schedule_cases.cache_inplace import AGREES, INPLACE


STENCIL = """
@T.prim_func
def main(A: T.Buffer((18, 8), "float32")):
    for i, j in T.grid(16, 8):
        with T.block("S"):
            vi, vj = T.axis.remap("SS", [i, j])
            A[vi + 1, vj] = A[vi, vj] + A[vi + 1, vj] + A[vi + 2, vj]
"""


def _update_in_loops(sch):
    c = sch.get_block("C")
    sch.decompose_reduction(c, sch.get_loops(c)[0])
    sch.cache_inplace(c, 0, "local")


def _stencil_row(sch):
    outer = sch.blockize(sch.get_loops(sch.get_block("S"))[1])
    sch.cache_inplace(outer, 0, "local")


# a block in loops: TVM's copies use the block's iter vars outside the block (unbound)
OURS_ONLY = {
    "in_loop": (INPLACE, lambda sch: sch.cache_inplace(sch.get_block("X"), 0, "local")),
    "update_in_loops": (MATMUL, _update_in_loops),
    "stencil_point": (STENCIL, lambda sch: sch.cache_inplace(sch.get_block("S"), 0, "local")),
    "stencil_row": (STENCIL, _stencil_row),
}


@pytest.mark.tvm
@pytest.mark.parametrize("name", sorted(AGREES))
def test_cache_inplace_agrees_with_tvm(name):
    from schedule_differential import assert_agrees

    src, fn = AGREES[name]
    assert_agrees(src, fn)


@pytest.mark.parametrize("name", sorted({**AGREES, **OURS_ONLY}))
def test_cache_inplace_numbers_and_replay(name):
    src, fn = {**AGREES, **OURS_ONLY}[name]
    check_all(src, fn, "main", tvm_diff=False)


def test_cache_inplace_in_a_loop_text():
    sch = check_all(*OURS_ONLY["stencil_point"], "main", tvm_diff=False)
    assert """    for i, j in T.grid(16, 8):
        for ax0, ax1 in T.grid(3, 1):
            with T.block("A_local"):
                v0 = T.axis.spatial(18, i + ax0)
                v1 = T.axis.spatial(8, j + ax1)
                T.reads(A[v0, v1])
                T.writes(A_local[v0, v1])
                A_local[v0, v1] = A[v0, v1]
        with T.block("S"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads(A_local[vi:vi + 3, vj])
            T.writes(A_local[vi + 1, vj])
            A_local[vi + 1, vj] = A_local[vi, vj] + A_local[vi + 1, vj] + A_local[vi + 2, vj]
        for ax0, ax1 in T.grid(1, 1):
            with T.block("A_local"):
                v0 = T.axis.spatial(18, i + ax0 + 1)
                v1 = T.axis.spatial(8, j + ax1)
                T.reads(A_local[v0, v1])
                T.writes(A[v0, v1])
                A[v0, v1] = A_local[v0, v1]""" in sch.mod.script()
    assert str(sch.trace).endswith(
        'b1, b2 = sch.cache_inplace(block=b0, read_buffer_index=0, storage_scope="local")'
    )


# (program, block, read buffer index, scope, message); TVM refuses each too
ILLEGAL = {
    "not_written": (INPLACE, "Y", 0, "local", "does not both read and write"),
    "index_out_of_range": (INPLACE, "X", 2, "local", "out of range"),
    "bad_scope": (INPLACE, "X", 0, "nowhere", "scope"),
}


@pytest.mark.parametrize("name", sorted(ILLEGAL))
def test_illegal_cache_inplace_refused(name):
    src, block, i, scope, match = ILLEGAL[name]
    sch = Schedule(parse(src))
    b = sch.get_block(block)
    check_error(sch, lambda s: s.cache_inplace(b, i, scope), match)


@pytest.mark.tvm
@pytest.mark.parametrize("name", sorted(ILLEGAL))
def test_tvm_refuses_the_same(name):
    import tvm

    src, block, i, scope, _ = ILLEGAL[name]
    sch = tvm.tir.Schedule(tvm.script.from_source(src))
    with pytest.raises((tvm.TVMError, ValueError)):
        sch.cache_inplace(sch.get_block(block), i, scope)


def test_write_outside_the_read_region_refused():
    """The copy back would store cache elements the block never wrote."""
    src = STENCIL.replace(
        "A[vi + 1, vj] = A[vi, vj] + A[vi + 1, vj] + A[vi + 2, vj]",
        "A[vi + 2, vj] = A[vi, vj] * T.float32(2)",
    )
    sch = Schedule(parse(src))
    b = sch.get_block("S")
    check_error(sch, lambda s: s.cache_inplace(b, 0, "local"), "does not read")


def test_region_outside_the_buffer_refused():
    """A guarded access reaches past the buffer: the copy in would read out of bounds."""
    src = """
@T.prim_func
def main(A: T.Buffer((16,), "float32")):
    for i in range(16):
        with T.block("X"):
            vi = T.axis.spatial(16, i)
            A[vi] = T.if_then_else(vi >= 1, A[vi - 1], A[vi])
"""
    sch = Schedule(parse(src))
    b = sch.get_block("X")
    check_error(sch, lambda s: s.cache_inplace(b, 0, "local"), "outside the buffer")
