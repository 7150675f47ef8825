"""cache_index: TVM 0.21's output, numbers, trace round trip, and the cases TVM refuses."""

import re

import pytest

from schedule_check import check_all, check_error, parse
from shared_programs import MATMUL_16 as MATMUL
from tir_mlir import Schedule
from schedule_cases.cache_index import AGREES, PAIR, RESHAPE, SHARED, index


def _after_split(sch):
    b = sch.get_block("B")
    sch.split(sch.get_loops(b)[0], [None, 8])
    sch.cache_index(b, "global")


OURS_ONLY = {
    "common_subexpression": (SHARED, index("B", 2)),  # caches (vi * 4 + vj) alone
    "pair_common": (PAIR, index("B", 2)),  # caches vi * 2 alone
    # TVM loops over the loops the binding uses, with the iter var's domain too small
    "after_split": (RESHAPE, _after_split),
}


def _normalized(text: str) -> str:
    """Without T.reads (TVM keeps the block's regions from before the caching; ours are the
    new ones) and TVM's `strides=(1,)` on the index buffers (not represented here)."""
    text = text.replace(", strides=(1,)", "")
    return "\n".join(ln for ln in text.splitlines() if not ln.strip().startswith("T.reads("))


@pytest.mark.tvm
@pytest.mark.parametrize("name", sorted(AGREES))
def test_cache_index_agrees_with_tvm(name):
    import tvm
    from schedule_differential import body_text, trace_text

    src, fn = AGREES[name]
    theirs = tvm.tir.Schedule(tvm.script.from_source(src))
    fn(theirs)
    ours = check_all(src, fn, "main", tvm_diff=False)
    assert _normalized(body_text(ours.mod.script())) == _normalized(body_text(theirs.mod.script()))
    assert trace_text(ours.trace) == trace_text(theirs.trace)


@pytest.mark.parametrize("name", sorted({**AGREES, **OURS_ONLY}))
def test_cache_index_numbers_and_replay(name):
    src, fn = {**AGREES, **OURS_ONLY}[name]
    check_all(src, fn, "main", tvm_diff=False)


def test_cache_index_text():
    sch = check_all(SHARED, index("B", 2), "main", tvm_diff=False)
    text = sch.mod.script()
    assert (
        """    index_var_0 = T.alloc_buffer((16, 4), "int32")
    for ax0, ax1 in T.grid(16, 4):
        with T.block("index_0"):
            v0, v1 = T.axis.remap("SS", [ax0, ax1])
            T.reads()
            T.writes(index_var_0[v0, v1])
            index_var_0[v0, v1] = v0 * 4 + v1"""
        in text
    )
    assert "A[index_var_0[vi, vj] // 8, index_var_0[vi, vj] % 8] + A[vi // 2, 0]" in text
    assert str(sch.trace).endswith(
        'b1, = sch.cache_index(block=b0, storage_scope="global", cse_thresh=2)'
    )
    assert len(re.findall(r'T\.block\("index_', text)) == 1


# (program, block, scope, cse_thresh, message); TVM refuses each too
ILLEGAL = {
    "nothing_to_cache": (MATMUL, "C", "global", 0, "no index computation"),
}


@pytest.mark.parametrize("name", sorted(ILLEGAL))
def test_illegal_cache_index_refused(name):
    src, block, scope, thresh, match = ILLEGAL[name]
    sch = Schedule(parse(src))
    b = sch.get_block(block)
    check_error(sch, lambda s: s.cache_index(b, scope, thresh), match)


@pytest.mark.tvm
@pytest.mark.parametrize("name", sorted(ILLEGAL))
def test_tvm_refuses_the_same(name):
    import tvm

    src, block, scope, thresh, _ = ILLEGAL[name]
    sch = tvm.tir.Schedule(tvm.script.from_source(src))
    with pytest.raises((tvm.TVMError, ValueError)):
        sch.cache_index(sch.get_block(block), scope, thresh)


def test_bad_arguments_refused():
    """(TVM accepts any scope name here, unlike its other cache primitives.)"""
    sch = Schedule(parse(RESHAPE))
    b = sch.get_block("B")
    check_error(sch, lambda s: s.cache_index(b, "global", -1), "non-negative")
    check_error(sch, lambda s: s.cache_index(b, "nowhere"), "scope")
