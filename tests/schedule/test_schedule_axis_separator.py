"""set_axis_separator and the buffer keywords it prints (axis_separators, offset_factor):
TVM 0.21's printed result and trace, numbers, trace round trip, survival through other
primitives, and the calls refused."""

import pytest

import tir_mlir
from schedule_check import check_all, check_error, parse
from tir_mlir import Schedule
from workloads import matmul
from schedule_cases.axis_separator import KEYWORDS, PLAIN, SCHEDULES, sep


def test_buffer_keywords_print_and_reparse():
    ours = parse(KEYWORDS).script()
    assert parse(ours).script() == ours
    assert "C = T.match_buffer(C_handle, (8, 4, 2), axis_separators=[1])" in ours
    assert "A = T.match_buffer(A_handle, (8, 8), offset_factor=16)" in ours


@pytest.mark.tvm
def test_buffer_keywords_print_like_tvm():
    import tvm

    assert parse(KEYWORDS).script() == tvm.script.from_source(KEYWORDS).script()


def test_buffer_keywords_keep_the_numbers():
    from schedule_check import check_numerics

    check_numerics(parse(PLAIN), parse(KEYWORDS), "main")


@pytest.mark.parametrize(
    "bad, match",
    [
        ("axis_separators=[0]", "1..1"),
        ("axis_separators=[2]", "1..1"),
        ("axis_separators=[1, 1]", "increasing"),
        ("offset_factor=-1", "negative"),
    ],
)
def test_bad_buffer_keywords_are_located_errors(bad, match):
    src = KEYWORDS.replace(
        "D = T.alloc_buffer((8, 8), axis_separators=[1])", "D = T.alloc_buffer((8, 8))"
    ).replace("b: T.handle", f'b: T.handle, Z: T.Buffer((4, 4), "float32", {bad})')
    with pytest.raises(tir_mlir.errors.TIRError, match=match) as e:
        parse(src)
    assert ":3:" in str(e.value)


@pytest.mark.tvm
@pytest.mark.parametrize("name", sorted(SCHEDULES))
def test_set_axis_separator_agrees_with_tvm(name):
    from schedule_differential import assert_agrees

    src, fn = SCHEDULES[name]
    assert_agrees(src, fn)


@pytest.mark.parametrize("name", sorted(SCHEDULES))
def test_set_axis_separator_numbers_and_replay(name):
    src, fn = SCHEDULES[name]
    check_all(src, fn, "main", tvm_diff=False)


def test_set_axis_separator_text_and_trace():
    sch = check_all(PLAIN, sep("B", "E", [1]), "main", tvm_diff=False)
    assert "E = T.alloc_buffer((8, 8), axis_separators=[1])" in sch.mod.script()
    assert str(sch.trace).endswith(
        'sch.set_axis_separator(block=b0, buffer=("write", 1), axis_separators=[1])'
    )


ILLEGAL = {
    "index_out_of_range": (("read", 9), [1], "out of range"),
    "unknown_name": ("Q", [1], "could not find buffer"),
}


@pytest.mark.parametrize("name", sorted(ILLEGAL))
def test_illegal_set_axis_separator_refused(name):
    buffer, seps, match = ILLEGAL[name]
    sch = Schedule(parse(PLAIN))
    b = sch.get_block("B")
    check_error(sch, lambda s: s.set_axis_separator(b, buffer, seps), match)


@pytest.mark.tvm
@pytest.mark.parametrize("name", sorted(ILLEGAL))
def test_tvm_refuses_the_same(name):
    import tvm

    buffer, seps, _ = ILLEGAL[name]
    sch = tvm.tir.Schedule(tvm.script.from_source(PLAIN))
    with pytest.raises((tvm.TVMError, AssertionError)):
        sch.set_axis_separator(sch.get_block("B"), buffer, seps)


@pytest.mark.parametrize("seps", [[0], [2], [1, 1], [-1]])
def test_separators_outside_the_buffer_refused(seps):
    """TVM records them and fails only when lowering; we refuse them at once."""
    sch = Schedule(parse(PLAIN))
    b = sch.get_block("B")
    check_error(sch, lambda s: s.set_axis_separator(b, ("write", 0), seps), "increasing")


SEP_MATMUL = matmul(16, c_axis_separators=[1])


def _rfactor(sch):
    sch.rfactor(sch.get_loops(sch.get_block("C"))[2], 0)


@pytest.mark.tvm
@pytest.mark.parametrize(
    "fn",
    [
        lambda s: s.reindex(s.get_block("C"), ("write", 0)),
        lambda s: s.cache_write(s.get_block("C"), 0, "local"),
        _rfactor,
    ],
    ids=["reindex", "cache_write", "rfactor"],
)
def test_new_buffers_keep_the_separators_like_tvm(fn):
    from schedule_differential import assert_agrees

    assert_agrees(SEP_MATMUL, fn)
