"""rolling_buffer: TVM 0.21's output, numbers, trace round trip, reparse of its
`T.where(i < 1 or 2 <= ax0)`, the calls TVM refuses and those refused where TVM's result
is wrong."""

import pytest

import tir_mlir
from schedule_check import check_all, check_error, parse
from tir_mlir import Schedule
from schedule_cases.rolling_buffer import ONE, SCHEDULES, _one


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


SYMBOLIC = """
@T.prim_func
def main(a: T.handle, c: T.handle):
    n = T.int32()
    A = T.match_buffer(a, (n + 2,), "float32")
    C = T.match_buffer(c, (n,), "float32")
    B = T.alloc_buffer((n + 2,))
    for i in range(n + 2):
        with T.block("B"):
            vi = T.axis.spatial(n + 2, i)
            B[vi] = A[vi] * T.float32(2)
    for i, k in T.grid(n, 3):
        with T.block("C"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                C[vi] = T.float32(0)
            C[vi] = C[vi] + B[vi + vk]
"""


def test_symbolic_window_loop_refused():
    """The window's T.where compares the rolled loop with its bounds: over `(n + 3) // 4`
    iterations that is no affine predicate."""
    sch = Schedule(parse(SYMBOLIC))
    io, _ = sch.split(sch.get_loops(sch.get_block("C"))[0], [None, 4])
    sch.compute_at(sch.get_block("B"), io)
    b = sch.get_block("B")
    check_error(
        sch, lambda s: s.rolling_buffer(b, 0), "loop 'i_0' has symbolic bounds: a rolling window"
    )


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
