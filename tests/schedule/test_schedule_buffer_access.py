"""annotate_buffer_access and unsafe_hide_buffer_access: TVM 0.21's printed result and trace,
numbers, trace round trip, reparse of TVM's explicit regions, and the calls TVM refuses."""

import pytest

from schedule_check import check_all, check_error, parse
from shared_programs import MATMUL_16
from tir_mlir import Schedule
from schedule_cases.buffer_access import SCHEDULES, SRC, _both_kinds, ann, hide


@pytest.mark.tvm
@pytest.mark.parametrize("name", sorted(SCHEDULES))
def test_buffer_access_agrees_with_tvm(name):
    from schedule_differential import assert_agrees

    src, fn = SCHEDULES[name]
    assert_agrees(src, fn)


@pytest.mark.parametrize("name", sorted(SCHEDULES))
def test_buffer_access_numbers_and_replay(name):
    src, fn = SCHEDULES[name]
    check_all(src, fn, "main", tvm_diff=False)


def test_annotated_text_trace_and_view():
    sch = check_all(SRC, _both_kinds, "main", tvm_diff=False)
    text = sch.mod.script()
    assert (
        """            T.reads(A[vi - 1:vi - 1 + 2, vj - 1:vj - 1 + 2])
            T.writes(B[vi, vj:vj + 4])
            T.block_attr({"explicit_read_region": [T.int32(0)], "explicit_write_region": [T.int32(0)]})"""
        in text
    )
    assert str(sch.trace).endswith(
        """gen_new_ranges=lambda vi, vj: [(vi, vi + 1), (vj, vj + 4)])"""
    )
    assert sch.get(sch.get_block("B")).reads == ["A[vi - 1:vi - 1 + 2, vj - 1:vj - 1 + 2]"]


def test_explicit_regions_reparse():
    """TVM keeps the regions its annotation marks; so does our parser (the others are
    re-inferred)."""
    sch = Schedule(parse(SRC))
    _both_kinds(sch)
    text = sch.mod.script()
    assert parse(text).script() == text


def test_hidden_region_text():
    sch = check_all(SRC, hide("C", "read", [1]), "main", tvm_diff=False)
    assert "            T.reads(B[vi, vj])\n            T.writes(C[vi, vj])" in sch.mod.script()


def test_hidden_access_still_orders_blocks():
    """TVM's dependence analysis no longer sees a hidden read; ours does, so compute_at keeps
    refusing to move B below its consumer."""
    sch = Schedule(parse(SRC))
    hide("C", "read", [0])(sch)
    c = sch.get_block("C")
    assert [sch.get(b).name_hint for b in sch.get_producers(c)] == ["B"]


ILLEGAL = {
    "index_out_of_range": (ann("B", 1, "read", lambda vi, vj: (vi, vj)), "out of range"),
    "bad_kind": (ann("B", 0, "rd", lambda vi, vj: (vi, vj)), "'read' or 'write'"),
    "too_few_ranges": (ann("B", 0, "read", lambda vi, vj: (vi,)), "2 iter vars"),
    "wrong_arity": (ann("B", 0, "read", lambda vi: (vi, vi)), "argument"),
    "hide_out_of_range": (hide("B", "read", [1]), "out of range"),
    "hide_negative": (hide("B", "read", [-1]), "out of range"),
    "hide_bad_kind": (hide("B", "rd", [0]), "'read' or 'write'"),
}


def refused(src, block, method, *args):
    """(our schedule, the call on it) with the block looked up first (so the failing call
    adds nothing to the trace)."""
    sch = Schedule(parse(src))
    b = sch.get_block(block)
    return sch, lambda s: getattr(s, method)(b, *args)


def test_fewer_ranges_than_iter_vars_refused_like_tvm():
    """TVM wants one range per iter var, even where the buffer has fewer dimensions."""
    fn = lambda vi, vj, vk: ((0, 16), vj)  # noqa: E731
    check_error(*refused(MATMUL_16, "C", "annotate_buffer_access", 1, "read", fn), "3 iter vars")


@pytest.mark.tvm
def test_fewer_ranges_than_iter_vars_refused_by_tvm():
    import tvm

    fn = lambda vi, vj, vk: ((0, 16), vj)  # noqa: E731
    with pytest.raises(ValueError):
        ann("C", 1, "read", fn)(tvm.tir.Schedule(tvm.script.from_source(MATMUL_16)))


A, H = "annotate_buffer_access", "unsafe_hide_buffer_access"
ILLEGAL = {
    "index_out_of_range": (A, (1, "read", lambda vi, vj: (vi, vj)), "out of range"),
    "bad_kind": (A, (0, "rd", lambda vi, vj: (vi, vj)), "'read' or 'write'"),
    "too_few_ranges": (A, (0, "read", lambda vi, vj: (vi,)), "2 iter vars"),
    "wrong_arity": (A, (0, "read", lambda vi: (vi, vi)), "argument"),
    "hide_out_of_range": (H, ("read", [1]), "out of range"),
    "hide_negative": (H, ("read", [-1]), "out of range"),
    "hide_bad_kind": (H, ("rd", [0]), "'read' or 'write'"),
}


@pytest.mark.parametrize("name", sorted(ILLEGAL))
def test_illegal_buffer_access_refused(name):
    method, args, match = ILLEGAL[name]
    check_error(*refused(SRC, "B", method, *args), match)


@pytest.mark.tvm
@pytest.mark.parametrize("name", sorted(ILLEGAL))
def test_tvm_refuses_the_same(name):
    import tvm

    method, args, _ = ILLEGAL[name]
    sch = tvm.tir.Schedule(tvm.script.from_source(SRC))
    with pytest.raises((tvm.TVMError, ValueError, TypeError)):
        getattr(sch, method)(sch.get_block("B"), *args)


@pytest.mark.parametrize(
    "fn, match",
    [
        (lambda vi, vj: ((0, vi), vj), "positive constant"),
        (lambda vi, vj: ((vi + 3, vi), vj), "positive constant"),
        (lambda vi, vj: (vi * vj, vj), "not affine"),
    ],
)
def test_regions_beyond_affine_constant_extents_refused(fn, match):
    """TVM accepts any expression (even a negative extent); we keep regions we can reason
    about: affine begins, positive constant extents."""
    check_error(*refused(SRC, "B", A, 0, "read", fn), match)


def test_recorded_lambda_is_data():
    check_error(
        *refused(SRC, "B", A, 0, "read", "lambda vi, vj: (__import__('os'), vj)"), "not allowed"
    )


@pytest.mark.tvm
def test_hide_in_tvm_json_trace():
    import tvm
    from tir_mlir.schedule.tvm_trace import from_tvm_json, to_tvm_json

    fn = hide("C", "read", [1])
    theirs = tvm.tir.Schedule(tvm.script.from_source(SRC))
    fn(theirs)
    ours = Schedule(parse(SRC))
    fn(ours)
    tvm_json = plain(theirs.trace.as_json())
    assert to_tvm_json(ours.trace) == tvm_json
    replayed = Schedule(parse(SRC))
    from_tvm_json(tvm_json).apply_to_schedule(replayed, remove_postproc=False)
    assert replayed.mod.script() == ours.mod.script()


def plain(obj):
    """A TVM JSON trace object as plain Python lists, strings and numbers."""
    if isinstance(obj, (str, bool, int, float)):
        return obj if not isinstance(obj, str) else str(obj)
    if hasattr(obj, "value"):
        return obj.value
    return [plain(x) for x in obj]
