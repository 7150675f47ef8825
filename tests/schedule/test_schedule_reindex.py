"""reindex: TVM 0.21's output, numbers, trace round trip, and the cases TVM refuses."""

import pytest

from schedule_check import check_all, check_error, parse
from shared_programs import CONV2D_PAD_C4_6X6 as CONV, MATMUL_16 as MATMUL
from tir_mlir import Schedule
from schedule_cases.reindex import SCHEDULES, TWO, reindex


@pytest.mark.tvm
@pytest.mark.parametrize("name", sorted(SCHEDULES))
def test_reindex_agrees_with_tvm(name):
    from schedule_differential import assert_agrees

    src, fn = SCHEDULES[name]
    assert_agrees(src, fn)


@pytest.mark.parametrize("name", sorted(SCHEDULES))
def test_reindex_numbers_and_replay(name):
    src, fn = SCHEDULES[name]
    check_all(src, fn, "main", tvm_diff=False)


def test_reindex_text():
    sch = check_all(MATMUL, reindex("C", ("read", 1)), "main", tvm_diff=False)
    assert """    B_reindex = T.alloc_buffer((16, 16))
    for ax0, ax1 in T.grid(16, 16):
        with T.block("B_reindex_reindex"):
            v0, v1 = T.axis.remap("SS", [ax0, ax1])
            T.reads(B[v1, v0])
            T.writes(B_reindex[v0, v1])
            B_reindex[v0, v1] = B[v1, v0]""" in sch.mod.script()
    assert "A[vi, vk] * B_reindex[vj, vk]" in sch.mod.script()
    assert str(sch.trace).endswith('b1 = sch.reindex(block=b0, buffer=("read", 1))')
    named = Schedule(parse(MATMUL))
    named.reindex(named.get_block("C"), "B")
    assert str(named.trace) == str(sch.trace)  # a name is recorded as (kind, index)


ILLEGAL = {
    "non_unique_indices": ("D", ("read", 0), "different indices"),
    "non_unique_indices_2": ("E", ("read", 1), "different indices"),
    "index_out_of_range": ("E", ("read", 5), "out of range"),
    "unknown_name": ("E", "Q", "could not find buffer"),
    "bad_kind": ("E", ("update", 0), "'read'|'write'"),
}


@pytest.mark.parametrize("name", sorted(ILLEGAL))
def test_illegal_reindex_refused(name):
    block, buffer, match = ILLEGAL[name]
    sch = Schedule(parse(TWO))
    b = sch.get_block(block)
    check_error(sch, lambda s: s.reindex(b, buffer), match)


@pytest.mark.tvm
@pytest.mark.parametrize("name", sorted(ILLEGAL))
def test_tvm_refuses_the_same(name):
    import tvm

    block, buffer, _ = ILLEGAL[name]
    sch = tvm.tir.Schedule(tvm.script.from_source(TWO))
    with pytest.raises((tvm.TVMError, ValueError, AssertionError)):
        sch.reindex(sch.get_block(block), buffer)


def test_not_a_stage_pipeline_refused():
    src = TWO.replace("C[vi, vj] = D[vi, vj]", "A[vi, vj] = D[vi, vj]")  # E writes what D read
    sch = Schedule(parse(src))
    b = sch.get_block("E")
    check_error(sch, lambda s: s.reindex(b, ("read", 0)), "stage pipeline")


def test_block_sharing_its_loops_refused():
    """TVM fails (internal check); a copy after the shared loop would come too late for E."""

    def fn(sch):
        d = sch.get_block("D")
        sch.compute_at(d, sch.get_loops(sch.get_block("E"))[0])
        return d

    sch = Schedule(parse(TWO))
    d = fn(sch)
    check_error(sch, lambda s: s.reindex(d, ("write", 0)), "hold other blocks")


def test_write_that_does_not_cover_its_domain_refused():
    """TVM accepts and copies back elements the block never wrote (wrong numbers)."""
    src = """
@T.prim_func
def main(C: T.Buffer((16, 16), "float32")):
    for i, j in T.grid(4, 16):
        with T.block("F"):
            vi = T.axis.spatial(16, i * 4 + 1)
            vj = T.axis.spatial(16, j)
            C[vi, vj] = T.float32(1)
"""
    sch = Schedule(parse(src))
    b = sch.get_block("F")
    check_error(sch, lambda s: s.reindex(b, ("write", 0)), "does not write every element")


def test_read_modify_write_without_init_refused():
    """After decompose_reduction the update block reads the buffer the init block wrote: TVM
    redirects both to the new, unwritten buffer (wrong numbers)."""
    sch = Schedule(parse(MATMUL))
    b = sch.get_block("C")
    sch.decompose_reduction(b, sch.get_loops(b)[0])
    check_error(sch, lambda s: s.reindex(b, ("write", 0)), "without T.init")
    check_error(sch, lambda s: s.reindex(b, "C"), "without T.init")


def test_read_reindex_of_the_written_buffer_refused():
    sch = Schedule(parse(MATMUL))
    b = sch.get_block("C")
    sch.decompose_reduction(b, sch.get_loops(b)[0])
    reads = [str(r) for r in sch.get(b).reads]
    k = next(i for i, r in enumerate(reads) if r.startswith("C["))
    check_error(sch, lambda s: s.reindex(b, ("read", k)), "copy would not see its writes")


def test_guarded_read_reaching_outside_the_buffer_refused():
    """The padding block reads A[vh - 1, vw - 1] under T.if_then_else: a copy over the whole
    domain would read A[-1] (TVM accepts and does; fuzzer seed 474)."""
    sch = Schedule(parse(CONV))
    b = sch.get_block("Apad")
    check_error(
        sch,
        lambda s: s.reindex(b, ("read", 0)),
        r"accesses 'A' at \[-1, 6\] on axis 2 over its iteration domain, outside the "
        r"buffer",
    )
