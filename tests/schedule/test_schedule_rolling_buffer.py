"""rolling_buffer: TVM 0.21's output, numbers, trace round trip, reparse of its
`T.where(i < 1 or 2 <= ax0)`, the calls TVM refuses and those refused where TVM's result
is wrong."""

import pytest

import tir_mlir
from schedule_check import check_all, check_error, parse
from shared_programs import CONV2D_PAD_C4_6X6 as CONV
from tir_mlir import Schedule

ONE = """
@T.prim_func
def main(A: T.Buffer((18,), "float32"), C: T.Buffer((16,), "float32")):
    B = T.alloc_buffer((18,))
    for i in range(18):
        with T.block("B"):
            vi = T.axis.spatial(18, i)
            B[vi] = A[vi] * T.float32(2)
    for i, k in T.grid(16, 3):
        with T.block("C"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                C[vi] = T.float32(0)
            C[vi] = C[vi] + B[vi + vk]
"""
TWO = """
@T.prim_func
def main(A: T.Buffer((10, 18), "float32"), C: T.Buffer((8, 16), "float32")):
    B = T.alloc_buffer((10, 18))
    for i, j in T.grid(10, 18):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for i, j, k in T.grid(8, 16, 3):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + B[vi + vk, vj] + B[vi, vj + vk]
"""
POOL = """
@T.prim_func
def main(A: T.Buffer((12, 12), "int8"), C: T.Buffer((8, 8), "int8")):
    B = T.alloc_buffer([10, 10], dtype="int8")
    for i0, i1 in T.grid(2, 2):
        for ax0, ax1, ax2, ax3 in T.grid(6, 6, 3, 3):
            with T.block("B"):
                ax0_1 = T.axis.spatial(10, i0 * 4 + ax0)
                ax1_1 = T.axis.spatial(10, i1 * 4 + ax1)
                rv0, rv1 = T.axis.remap("RR", [ax2, ax3])
                with T.init():
                    B[ax0_1, ax1_1] = T.int8(-128)
                B[ax0_1, ax1_1] = T.max(B[ax0_1, ax1_1], A[ax0_1 + rv0, ax1_1 + rv1])
        for ax0, ax1, ax2, ax3 in T.grid(4, 4, 3, 3):
            with T.block("C"):
                ax0_1 = T.axis.spatial(8, i0 * 4 + ax0)
                ax1_1 = T.axis.spatial(8, i1 * 4 + ax1)
                rv0, rv1 = T.axis.remap("RR", [ax2, ax3])
                with T.init():
                    C[ax0_1, ax1_1] = T.int8(-128)
                C[ax0_1, ax1_1] = T.max(C[ax0_1, ax1_1], B[ax0_1 + rv0, ax1_1 + rv1])
"""


def _one(sch):
    i, _ = sch.get_loops(sch.get_block("C"))
    io, _ = sch.split(i, [4, 4])
    sch.compute_at(sch.get_block("B"), io)
    sch.rolling_buffer(sch.get_block("B"), 0)


def _two(sch):
    _, j, _ = sch.get_loops(sch.get_block("C"))
    jo, _ = sch.split(j, [4, 4])
    sch.compute_at(sch.get_block("B"), jo)
    sch.rolling_buffer(sch.get_block("B"), 0)


def _pool(sch):
    sch.rolling_buffer(sch.get_block("B"), 0)


def _conv_rows(split):
    def fn(sch):
        loops = sch.get_loops(sch.get_block("B"))
        y = sch.split(loops[2], [None, 2])[0] if split else loops[2]
        sch.compute_at(sch.get_block("Apad"), y)
        sch.rolling_buffer(sch.get_block("Apad"), 0)

    return fn


def _one_then_unroll_and_split(sch):
    _one(sch)
    sch.unroll(sch.get_loops(sch.get_block("C"))[-1])
    sch.split(sch.get_loops(sch.get_block("B"))[-1], [None, 2])


SCHEDULES = {
    "conv1d_after_compute_at": (ONE, _one),
    "two_overlapping_dims": (TWO, _two),
    "pool_2d_example": (POOL, _pool),
    "conv_padding_per_row": (CONV, _conv_rows(False)),
    "conv_padding_per_two_rows": (CONV, _conv_rows(True)),
    "then_unroll_and_split": (ONE, _one_then_unroll_and_split),
}


@pytest.mark.tvm
@pytest.mark.parametrize("name", sorted(SCHEDULES))
def test_rolling_buffer_agrees_with_tvm(name):
    from schedule_differential import assert_agrees

    src, fn = SCHEDULES[name]
    assert_agrees(src, fn)


@pytest.mark.parametrize("name", sorted(SCHEDULES))
def test_rolling_buffer_numbers_and_replay(name):
    src, fn = SCHEDULES[name]
    check_all(src, fn, "main", tvm_diff=False)


@pytest.mark.parametrize("name", sorted(SCHEDULES))
def test_rolling_buffer_output_reparses(name):
    src, fn = SCHEDULES[name]
    sch = Schedule(parse(src))
    fn(sch)
    text = sch.mod.script()
    assert parse(text).script() == text


def test_rolling_buffer_text_and_trace():
    sch = check_all(ONE, _one, "main", tvm_diff=False)
    text = sch.mod.script()
    assert (
        """    B = T.alloc_buffer((6,))
    for i_0 in range(4):
        for ax0 in range(6):
            with T.block("B"):
                vi = T.axis.opaque(18, i_0 * 4 + ax0)
                T.where(i_0 < 1 or 2 <= ax0)
                T.reads(A[vi])
                T.writes(B[vi % 6])
                B[vi % 6] = A[vi] * T.float32(2.0)"""
        in text
    )
    assert "C[vi] = C[vi] + B[(vi + vk) % 6]" in text
    assert str(sch.trace).endswith("sch.rolling_buffer(block=b6, write_buffer_index=0)")


@pytest.mark.parametrize(
    "cond",
    [
        "i < 2 or 2 <= j",
        "i < 1 or -1 <= j",
        "i < 1 or 2 <= j - 1",
        "i < 1 or j < 2",
        "i < 1 or 2 <= j or j < 3",
    ],
)
def test_bad_or_in_where_is_a_located_error(cond):
    src = f"""
@T.prim_func
def main(A: T.Buffer((8,), "float32")):
    for i, j in T.grid(2, 4):
        with T.block("A"):
            vi = T.axis.spatial(8, i * 4 + j)
            T.where({cond})
            A[vi] = T.float32(1)
"""
    with pytest.raises(tir_mlir.errors.TIRParseError, match="rolling_buffer writes it"):
        parse(src)


def _compute_at_only(sch):
    i, _ = sch.get_loops(sch.get_block("C"))
    io, _ = sch.split(i, [4, 4])
    sch.compute_at(sch.get_block("B"), io)


NO_OVERLAP = ONE.replace("B[vi + vk]", "B[vi] * T.float32(3)")


ILLEGAL = [
    ("lca_not_a_loop", ONE, None, "B", 0, "not a loop"),
    ("index_out_of_range", ONE, _compute_at_only, "B", 1, "out of range"),
    ("output_block", ONE, _compute_at_only, "C", 0, "output block"),
    ("no_overlap", NO_OVERLAP, _compute_at_only, "B", 0, "positive bound overlap"),
]


@pytest.mark.parametrize("name, src, prep, block, index, match", ILLEGAL)
def test_illegal_rolling_buffer_refused(name, src, prep, block, index, match):
    sch = Schedule(parse(src))
    if prep:
        prep(sch)
    b = sch.get_block(block)
    check_error(sch, lambda s: s.rolling_buffer(b, index), match)


@pytest.mark.tvm
@pytest.mark.parametrize("name, src, prep, block, index, match", ILLEGAL)
def test_illegal_rolling_buffer_refused_by_tvm_too(name, src, prep, block, index, match):
    import tvm

    theirs = tvm.tir.Schedule(tvm.script.from_source(src))
    if prep:
        prep(theirs)
    with pytest.raises((tvm.TVMError, AssertionError)):
        theirs.rolling_buffer(theirs.get_block(block), index)


def _parallel(sch):
    _compute_at_only(sch)
    sch.parallel(sch.get_loops(sch.get_block("B"))[0])


def test_parallel_rolling_loop_refused():
    sch = Schedule(parse(ONE))
    _parallel(sch)
    b = sch.get_block("B")
    check_error(sch, lambda s: s.rolling_buffer(b, 0), "not serial")


@pytest.mark.tvm
def test_parallel_rolling_loop_accepted_by_tvm():
    """(TVM is wrong here: the refusal above is ours.)"""
    import tvm

    theirs = tvm.tir.Schedule(tvm.script.from_source(ONE))
    _parallel(theirs)
    theirs.rolling_buffer(theirs.get_block("B"), 0)  # accepted


BEHIND = """
@T.prim_func
def main(A: T.Buffer((18,), "float32"), C: T.Buffer((16,), "float32")):
    B = T.alloc_buffer((18,))
    for i in range(4):
        for ax0 in range(6):
            with T.block("B"):
                vi = T.axis.spatial(18, i * 4 + ax0)
                B[vi] = A[vi] * T.float32(2)
        for j in range(4):
            with T.block("C"):
                vi = T.axis.spatial(16, i * 4 + j - 1)
                T.where(1 <= i * 4 + j)
                C[vi] = B[vi]
"""


def test_consumer_reading_behind_the_window_refused():
    """C reads B[i * 4 - 1], computed in the previous iteration: after TVM's rolling_buffer
    the producer has overwritten that slot (i * 4 + 5 is the same modulo 6) first."""
    sch = Schedule(parse(BEHIND))
    b = sch.get_block("B")
    check_error(sch, lambda s: s.rolling_buffer(b, 0), "outside the window")


@pytest.mark.tvm
def test_consumer_reading_behind_the_window_accepted_by_tvm():
    import tvm

    theirs = tvm.tir.Schedule(tvm.script.from_source(BEHIND))
    theirs.rolling_buffer(theirs.get_block("B"), 0)  # accepted


@pytest.mark.tvm
@pytest.mark.parametrize(
    "src, fn",
    [(ONE, _one), (ONE, lambda s: s.pad_einsum(s.get_block("B"), [8]))],
    ids=["rolling_buffer", "pad_einsum"],
)
def test_tvm_json_trace_both_ways(src, fn):
    """TVM's JSON trace (its tuning logs) replays here, and ours is TVM's."""
    import tvm
    from tir_mlir.schedule.tvm_trace import from_tvm_json, to_tvm_json

    theirs = tvm.tir.Schedule(tvm.script.from_source(src))
    fn(theirs)
    ours = Schedule(parse(src))
    fn(ours)
    tvm_json = plain(theirs.trace.as_json())
    assert to_tvm_json(ours.trace) == tvm_json
    replayed = Schedule(parse(src))
    from_tvm_json(tvm_json).apply_to_schedule(replayed, remove_postproc=False)
    assert replayed.mod.script() == ours.mod.script()


def plain(obj):
    """A TVM JSON trace object as plain Python lists, strings and numbers."""
    if isinstance(obj, (str, bool, int, float)):
        return obj if not isinstance(obj, str) else str(obj)
    if hasattr(obj, "value"):
        return obj.value
    return [plain(x) for x in obj]
