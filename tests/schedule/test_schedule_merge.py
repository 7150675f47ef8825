"""merge: TVM 0.21's output, numbers, trace round trip, refusals (TVM's and the dependence
check it lacks)."""

import pytest

from schedule_check import check_all, check_error, parse
from tir_mlir import Schedule
from schedule_cases.merge import CHAIN, SCHEDULES, THREE, loops_of, merge

SHIFTED = THREE.replace("SHIFT", "(vi + 1) % 8")


def _inner_after_compute_at(sch):
    b = sch.get_block("B")
    sch.reverse_compute_at(sch.get_block("C"), sch.get_loops(b)[0])
    sch.merge(*loops_of(sch, "B", "C", level=1))


# TVM 0.21 fails ("normalize using SeqStmt::Flatten()") when the loops are a whole body.
TVM_FAILS = {
    "all_three": (CHAIN, merge("B", "C", "D")),
    "inner_loops": (CHAIN, _inner_after_compute_at),
}


@pytest.mark.tvm
@pytest.mark.parametrize("name", sorted(SCHEDULES))
def test_merge_agrees_with_tvm(name):
    from schedule_differential import assert_agrees

    src, fn = SCHEDULES[name]
    assert_agrees(src, fn)


@pytest.mark.parametrize("name", sorted(SCHEDULES) + sorted(TVM_FAILS))
def test_merge_numbers_and_replay(name):
    src, fn = {**SCHEDULES, **TVM_FAILS}[name]
    check_all(src, fn, "main", tvm_diff=False)


def test_merge_text_and_trace():
    sch = check_all(CHAIN, merge("B", "C"), "main", tvm_diff=False)
    assert """    for i_m in range(8):
        for j in range(8):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i_m, j])""" in sch.mod.script()
    assert str(sch.trace).endswith("l6 = sch.merge(l1, l4)")


@pytest.mark.parametrize("name", sorted(TVM_FAILS))
def test_merge_whole_body_where_tvm_fails(name):
    src, fn = TVM_FAILS[name]
    sch = check_all(src, fn, "main", tvm_diff=False)
    assert (
        sum(
            line.lstrip().startswith(("for i_m in", "for i, j_m in"))
            for line in sch.mod.script().splitlines()
        )
        == 1
    )


@pytest.mark.tvm
@pytest.mark.parametrize("name", sorted(TVM_FAILS))
def test_merge_whole_body_fails_in_tvm(name):
    import tvm

    src, fn = TVM_FAILS[name]
    with pytest.raises(tvm.TVMError, match="SeqStmt"):
        fn(tvm.tir.Schedule(tvm.script.from_source(src)))


def test_merge_across_a_shifted_dependence_refused():
    sch = Schedule(parse(SHIFTED))
    b, d = loops_of(sch, "B", "C")[0], loops_of(sch, "D")[0]
    c = loops_of(sch, "C")[0]
    check_error(sch, lambda s: s.merge(b, c, d), "do not follow the loop variable")


@pytest.mark.parametrize(
    "case,match",
    [
        ("one", "at least two"),
        ("same_twice", "at least two"),
        ("depth", "same depth"),
        ("extent", "extents must be the same"),
        ("gap", "consecutive"),
        ("annotated", "annotation"),
        ("parallel", "non-serial"),
    ],
)
def test_illegal_merge_refused(case, match):
    sch = Schedule(parse(CHAIN))
    b, c, d = loops_of(sch, "B", "C", "D")
    bj = sch.get_loops(sch.get_block("B"))[1]
    args = {
        "one": [b],
        "same_twice": [b, b],
        "depth": [b, sch.get_loops(sch.get_block("C"))[1]],
        "extent": None,
        "gap": [b, d],
        "annotated": [b, c],
        "parallel": [b, c],
    }[case]
    if case == "extent":
        c0, c1 = sch.split(c, [2, 4])
        args = [b, c0]
    elif case == "annotated":
        sch.annotate(c, "pragma_x", 1)
    elif case == "parallel":
        sch.parallel(c)
    del bj
    check_error(sch, lambda s: s.merge(*args), match)


@pytest.mark.tvm
@pytest.mark.parametrize("case", ["depth", "extent", "annotated"])
def test_tvm_refuses_the_same(case):
    import tvm

    sch = tvm.tir.Schedule(tvm.script.from_source(CHAIN))
    b, c = loops_of(sch, "B", "C")
    if case == "depth":
        args = [b, sch.get_loops(sch.get_block("C"))[1]]
    elif case == "extent":
        args = [b, sch.split(c, [2, 4])[0]]
    else:
        sch.annotate(c, "pragma_x", 1)
        args = [b, c]
    with pytest.raises(tvm.TVMError):
        sch.merge(*args)
