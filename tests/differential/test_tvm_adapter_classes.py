"""TVM-differential tests for the failure classes found by running TVM's own schedule tests
through benchmarks/tvm_schedule_tests.py, each on a program of the same kind written here
(same decision, TVM-equal result, same printed text and trace, same numbers where it runs)."""

import pytest
import tvm_oracle

from adapter_programs import (
    FOLDED_READ,
    MATCHED,
    NESTED,
    NOT_QUASI_AFFINE,
    OPAQUE,
    PADDED_POOL,
    RFACTOR_REFUSED,
    ROWSUM_SPLIT,
    TILED_REPEAT,
    TILED_THEN_REDUCED,
    UNIT_DIM,
    CONST_FIRST,
)
from schedule_differential import assert_agrees

pytestmark = pytest.mark.tvm
tvm_oracle.import_tvm()


def _loops(s, name):
    return s.get_loops(s.get_block(name))


@pytest.mark.parametrize("how", ["fuse", "split", "reorder"])
def test_opaque_builtin_blocks(how):
    def fn(s):
        for name in ("A", "B"):
            i, j = _loops(s, name)
            if how == "fuse":
                s.fuse(i, j)
            elif how == "split":
                s.split(j, factors=[None, 4])
            else:
                s.reorder(j, i)

    assert_agrees(OPAQUE, fn, printer=True, numerics=False)


# --- decompose_padding of a producer that already has a T.where (non-dividing tiles) --------


def test_decompose_padding_after_nondividing_tiles():
    def fn(s):
        i, _ = _loops(s, "pool")
        io, _ = s.split(i, factors=[None, 8])
        s.compute_at(s.get_block("pad"), io)
        pad = s.get_block("pad")
        s.decompose_padding(pad, _loops(s, "pad")[1])

    assert_agrees(PADDED_POOL, fn, printer=True)


# --- set_scope of a buffer a block writes through a T.match_buffer view -----------------------


@pytest.mark.parametrize("scope", ["shared", "local"])
def test_set_scope_through_match_buffer(scope):
    assert_agrees(MATCHED, lambda s: s.set_scope(s.get_block("B"), 0, scope), printer=True)


# --- bind / parallel above nested reduction blocks; quasi-affine reductions ----------------------


@pytest.mark.parametrize("how", ["bind", "parallel"])
def test_loop_kind_above_nested_reduction(how):
    def fn(s):
        (i,) = _loops(s, "outer")
        _, l = _loops(s, "inner")
        if how == "bind":
            s.bind(l, "threadIdx.x")
            s.bind(i, "blockIdx.x")
        else:
            s.parallel(i)

    assert_agrees(NESTED, fn, printer=True)


def test_parallel_refuses_non_quasi_affine_reduction():
    def fn(s):
        s.parallel(_loops(s, "B")[0])

    out = assert_agrees(NOT_QUASI_AFFINE, fn)
    assert out.ours_error is not None and "compact dataflow" in str(out.ours_error)


# --- rfactor: TVM's refusals, the write-back nest keeps unit loops ---------------------------
@pytest.mark.parametrize("which", [3, 4])
def test_rfactor_keeps_loops_not_bound_to_reductions(which):
    assert_agrees(ROWSUM_SPLIT, lambda s: s.rfactor(_loops(s, "B")[which], 0), printer=True)


@pytest.mark.parametrize("case", sorted(RFACTOR_REFUSED))
def test_rfactor_refuses_like_tvm(case):
    out = assert_agrees(
        RFACTOR_REFUSED[case],
        lambda s: s.rfactor(s.get_loops(s.get_block("C" if case == "not_covered" else "B"))[-1], 0),
    )
    assert out.ours_error is not None


# --- blockize(..., preserve_unit_iters=False) --------------------------------------------------
@pytest.mark.parametrize("preserve", [True, False])
def test_blockize_preserve_unit_iters(preserve):
    assert_agrees(
        ROWSUM_SPLIT,
        lambda s: s.blockize(_loops(s, "B")[3], preserve_unit_iters=preserve),
        printer=True,
    )


# --- compute_at / reverse_compute_at regions ----------------------------------------------------
def test_reverse_compute_at_reduction_consumer_covers_the_tile():
    assert_agrees(
        TILED_THEN_REDUCED,
        lambda s: s.reverse_compute_at(s.get_block("B"), _loops(s, "P")[0]),
        printer=True,
    )


def test_compute_at_floordiv_region_is_exact():
    assert_agrees(
        TILED_REPEAT, lambda s: s.compute_at(s.get_block("t"), _loops(s, "y")[0]), printer=True
    )


# --- reindex: folded indices; written accumulator reads ----------------------------------------
@pytest.mark.parametrize("buf", [("read", 1), ("write", 0)])
def test_reindex_folded_index_and_accumulator_read(buf):
    assert_agrees(FOLDED_READ, lambda s: s.reindex(s.get_block("C"), buf), printer=True)


def test_reverse_compute_at_constant_index():
    assert_agrees(
        UNIT_DIM, lambda s: s.reverse_compute_at(s.get_block("C"), _loops(s, "B")[2]), printer=True
    )


# --- a binding written constant first prints as written ------------------------------------------
def test_const_first_binding_prints_as_written():
    assert_agrees(CONST_FIRST, lambda s: s.parallel(_loops(s, "hi")[0]), printer=True)
