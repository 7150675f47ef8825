"""read_at / write_at: TVM 0.21's output, numbers, trace round trip, and the cases TVM refuses
(plus those where TVM would compute wrong numbers)."""

import pytest

from schedule_check import check_all, check_error, parse
from shared_programs import CONV2D_PAD_C4_6X6 as CONV, MATMUL_16 as MATMUL, MM_RELU_16 as MM_RELU
from tir_mlir import Schedule
from schedule_cases.read_write_at import SCHEDULES, _read_tile


@pytest.mark.tvm
@pytest.mark.parametrize("name", sorted(SCHEDULES))
def test_read_write_at_agrees_with_tvm(name):
    from schedule_differential import assert_agrees

    src, fn = SCHEDULES[name]
    assert_agrees(src, fn)


@pytest.mark.parametrize("name", sorted(SCHEDULES))
def test_read_write_at_numbers_and_replay(name):
    src, fn = SCHEDULES[name]
    check_all(src, fn, "main", tvm_diff=False)


def test_read_at_text():
    sch = check_all(MATMUL, _read_tile, "main", tvm_diff=False)
    assert """    for i_0, j, k_0 in T.grid(4, 16, 4):
        with T.block("A_shared"):
            v0, v1 = T.axis.remap("SS", [i_0, k_0])
            T.reads(A[v0 * 4:v0 * 4 + 4, v1 * 4:v1 * 4 + 4])
            T.writes(A_shared[v0 * 4:v0 * 4 + 4, v1 * 4:v1 * 4 + 4])
            T.block_attr({"auto_copy": True})
            for ax0, ax1 in T.grid(4, 4):
                A_shared[v0 * 4 + ax0, v1 * 4 + ax1] = A[v0 * 4 + ax0, v1 * 4 + ax1]
        for i_1, k_1 in T.grid(4, 4):""" in sch.mod.script()
    assert str(sch.trace).endswith(
        'b8 = sch.read_at(loop=l6, block=b0, read_buffer_index=0, storage_scope="shared")'
    )


INPLACE = """
@T.prim_func
def main(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    for i in range(16):
        with T.block("X"):
            vi = T.axis.spatial(16, i)
            A[vi] = A[vi] * T.float32(2) + B[vi]
"""


def _relu_inside(sch):
    y, c = sch.get_block("Y"), sch.get_block("C")
    sch.reverse_compute_at(c, sch.get_loops(y)[0])
    return sch.get_loops(y)[0], y, 0


# (program, setup giving (loop, block, buffer index), "read"|"write", scope, message);
# TVM refuses each too
ILLEGAL = {
    "nothing_reads": (
        MM_RELU,
        lambda s: (s.get_loops(s.get_block("C"))[0], s.get_block("Y"), 0),
        "read",
        "shared",
        "nothing under loop 'i' reads 'A'",
    ),
    "written_after_read": (
        INPLACE,
        lambda s: (s.get_loops(s.get_block("X"))[0], s.get_block("X"), 0),
        "read",
        "local",
        "written under loop 'i' after it is first read",
    ),
    "read_after_write": (
        MM_RELU,
        _relu_inside,
        "write",
        "local",
        "read under loop 'i' after it is last written",
    ),
    "index_out_of_range": (
        MATMUL,
        lambda s: (s.get_loops(s.get_block("C"))[0], s.get_block("C"), 3),
        "read",
        "shared",
        "out of range",
    ),
    "bad_scope": (
        MATMUL,
        lambda s: (s.get_loops(s.get_block("C"))[0], s.get_block("C"), 0),
        "write",
        "nowhere",
        "scope",
    ),
}


@pytest.mark.parametrize("name", sorted(ILLEGAL))
def test_illegal_read_write_at_refused(name):
    src, setup, kind, scope, match = ILLEGAL[name]
    sch = Schedule(parse(src))
    loop, block, i = setup(sch)
    check_error(sch, lambda s: getattr(s, f"{kind}_at")(loop, block, i, scope), match)


@pytest.mark.tvm
@pytest.mark.parametrize("name", sorted(ILLEGAL))
def test_tvm_refuses_the_same(name):
    import tvm

    src, setup, kind, scope, _ = ILLEGAL[name]
    sch = tvm.tir.Schedule(tvm.script.from_source(src))
    loop, block, i = setup(sch)
    with pytest.raises((tvm.TVMError, ValueError)):
        getattr(sch, f"{kind}_at")(loop, block, i, scope)


def test_write_read_before_written_refused():
    """After decompose_reduction the update block reads C, initialised outside the loop: TVM
    makes it read the cache, never written (wrong numbers)."""
    sch = Schedule(parse(MATMUL))
    c = sch.get_block("C")
    sch.decompose_reduction(c, sch.get_loops(c)[0])
    j = sch.get_loops(c)[1]
    check_error(sch, lambda s: s.write_at(j, c, 0, "local"), "without writing it first")


def test_write_not_covering_its_region_refused():
    """Every other element: the copy back would store elements never written."""
    src = """
@T.prim_func
def main(A: T.Buffer((16,), "float32"), C: T.Buffer((32,), "float32")):
    for i, j in T.grid(4, 4):
        with T.block("S"):
            vi = T.axis.spatial(16, i * 4 + j)
            C[vi * 2] = A[vi]
"""
    sch = Schedule(parse(src))
    s_ = sch.get_block("S")
    i = sch.get_loops(s_)[0]
    check_error(sch, lambda s: s.write_at(i, s_, 0, "local"), "does not write every element")


def test_guarded_read_outside_the_buffer_refused():
    sch = Schedule(parse(CONV))
    a = sch.get_block("Apad")
    c = sch.get_loops(a)[1]
    check_error(sch, lambda s: s.read_at(c, a, 0, "shared"), "outside the buffer")


def test_cache_primitives_replay_through_the_mlir_script():
    """Issue 13's cache primitives in one trace: MLIR schedule script -> replay, same program."""
    from tir_mlir.schedule.mlir_script import trace_from_mlir, trace_to_mlir

    sch = Schedule(parse(CONV))
    b = sch.get_block("B")
    sch.reindex_cache_read(b, 1, "local", lambda n, f, y, x, rc, ry, rx: (f, rc, ry, rx))
    sch.read_at(sch.get_loops(b)[1], b, 0, "shared")
    sch.reindex_cache_write(b, 0, "local", lambda n, f, y, x, rc, ry, rx: (n, y, x, f))
    sch.cache_index(sch.get_block("Apad"), "global", 0)
    fresh = Schedule(parse(CONV))
    trace_from_mlir(trace_to_mlir(sch.trace)).apply_to_schedule(fresh)
    assert fresh.mod.script() == sch.mod.script()
    check_all(
        CONV,
        lambda s: trace_from_mlir(trace_to_mlir(sch.trace)).apply_to_schedule(s),
        "main",
        tvm_diff=False,
    )
