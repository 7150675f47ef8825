"""decompose_padding / can_decompose_padding: TVM 0.21's output, numbers, trace round trip, and
the padding blocks TVM refuses (TVM 0.21 cannot print a trace holding decompose_padding, so
traces are checked against our own golden text)."""

import pytest

from schedule_check import check_all, check_error, parse
from shared_programs import CONV2D_PAD_C4_6X6 as CONV
from tir_mlir import Schedule
from schedule_cases.decompose_padding import SCHEDULES, at, pad


@pytest.mark.tvm
@pytest.mark.parametrize("name", sorted(SCHEDULES))
def test_decompose_padding_agrees_with_tvm(name):
    from schedule_differential import assert_agrees

    src, fn = SCHEDULES[name]
    assert_agrees(src, fn, trace=False)


@pytest.mark.parametrize("name", sorted(SCHEDULES))
def test_decompose_padding_numbers_and_replay(name):
    src, fn = SCHEDULES[name]
    check_all(src, fn, "main", tvm_diff=False)


def test_decompose_padding_text_and_trace():
    sch = check_all(CONV, at(2), "main", tvm_diff=False)
    text = sch.mod.script()
    assert (
        """    for n, c in T.grid(1, 4):
        for h, w in T.grid(8, 8):
            with T.block("Apad_pad_const"):
                vn = T.axis.spatial(1, 0)
                vc, vh, vw = T.axis.remap("SSS", [c, h, w])
                T.reads()
                T.writes(Apad[vn, vc, vh, vw])
                Apad[vn, vc, vh, vw] = T.float32(0.0)
        for h, w in T.grid(6, 6):
            with T.block("Apad"):
                vn = T.axis.spatial(1, 0)
                vc, vh, vw = T.axis.remap("SSS", [c, h, w])
                T.reads(A[vn, vc, vh, vw])
                T.writes(Apad[vn, vc, vh + 1, vw + 1])
                Apad[vn, vc, vh + 1, vw + 1] = A[vn, vc, vh, vw]"""
        in text
    )
    assert str(sch.trace).endswith("""  b0 = sch.get_block(name="Apad", func_name="main")
  l1, l2, l3, l4 = sch.get_loops(block=b0)
  b5 = sch.decompose_padding(block=b0, loop=l3)""")
    assert sch.get(sch.get_block("Apad_pad_const")).name_hint == "Apad_pad_const"


ILLEGAL = {
    "two_vars": (pad("1 <= vh + vw and vh < 7"), "not independent"),
    "not_equal": (pad("vh != 3"), "not independent"),
    "equal": (pad("vh == 3"), "not independent"),
    "or": (pad("1 <= vh or vh < 7"), "not a conjunction"),
    "trivial": (pad("vh < 100"), "trivial"),
    "empty": (pad("vh < 0"), "empty range"),
    "pad_reads": (pad("1 <= vh and vh < 7", "A[0, 0]"), "should be constant"),
    "pad_varies": (pad("1 <= vh and vh < 7", 'T.Cast("float32", vh)'), "should be constant"),
}


@pytest.mark.parametrize("name", sorted(ILLEGAL))
def test_illegal_padding_refused(name):
    src, match = ILLEGAL[name]
    sch = Schedule(parse(src))
    b = sch.get_block("Apad")
    loop = sch.get_loops(b)[0]
    assert not sch.can_decompose_padding(b, loop)
    check_error(sch, lambda s: s.decompose_padding(b, loop), match)


@pytest.mark.tvm
@pytest.mark.parametrize("name", sorted(ILLEGAL))
def test_tvm_refuses_the_same(name):
    import tvm

    sch = tvm.tir.Schedule(tvm.script.from_source(ILLEGAL[name][0]))
    b = sch.get_block("Apad")
    assert not sch.can_decompose_padding(b, sch.get_loops(b)[0])
    with pytest.raises(tvm.TVMError):
        sch.decompose_padding(b, sch.get_loops(b)[0])


def test_loop_must_enclose_the_block():
    sch = Schedule(parse(pad("1 <= vh and vh < 7")))
    b = sch.get_block("Apad")
    other = sch.get_loops(sch.get_block("B"))[0]
    assert not sch.can_decompose_padding(b, other)
    check_error(sch, lambda s: s.decompose_padding(b, other), "does not enclose")


def test_not_a_padding_block_refused():
    sch = Schedule(parse(CONV))
    b = sch.get_block("B")
    loop = sch.get_loops(b)[0]
    check_error(sch, lambda s: s.decompose_padding(b, loop), "spatial block")
    sch = Schedule(
        parse(
            pad("1 <= vh and vh < 7").replace(
                "T.if_then_else(1 <= vh and vh < 7, A[T.max(vh - 1, 0) % 6, T.max(vw - 1, 0) % 6], "
                "T.float32(0))",
                "A[vh % 6, vw % 6]",
            )
        )
    )
    b = sch.get_block("Apad")
    loop = sch.get_loops(b)[0]
    check_error(sch, lambda s: s.decompose_padding(b, loop), "if_then_else")


def test_can_decompose_padding_is_not_traced():
    sch = Schedule(parse(CONV))
    b = sch.get_block("Apad")
    n = len(sch.trace)
    assert sch.can_decompose_padding(b, sch.get_loops(b)[0])
    assert len(sch.trace) == n + 1  # the get_loops only


def _annotated_parallel(sch):
    b = sch.get_block("Apad")
    sch.annotate(b, "pragma_x", 1)
    n, c, h, w = sch.get_loops(b)
    sch.parallel(c)
    sch.annotate(w, "pragma_auto_unroll_max_step", 4)
    sch.decompose_padding(b, n)


def test_fill_loops_are_serial_and_bare():
    """TVM builds the fill loops serial without annotations and drops the block annotations
    from both blocks (fuzzer seed 2617)."""
    sch = check_all(CONV, _annotated_parallel, "main")
    text = sch.mod.script()
    assert "pragma_x" not in text and text.count("T.parallel(") == 1
    assert text.count("pragma_auto_unroll_max_step") == 1
