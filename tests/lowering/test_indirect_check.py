"""Plain builds check accesses whose index is read from memory (passes/lowering/indirect_check.py):
a bad index in the data skips that access and the call raises OutOfBoundsError, instead of
reading or writing outside the buffer. Good data computes what numpy does."""

import numpy as np
import pytest

import tir_mlir
from tir_mlir.errors import OutOfBoundsError

GATHER_SCATTER = """@T.prim_func
def gather(A: T.Buffer((64,), "float32"), I: T.Buffer((32,), "int32"),
           B: T.Buffer((32,), "float32")):
    for i in range(32):
        with T.block("B"):
            vi = T.axis.spatial(32, i)
            B[vi] = A[I[vi]]


@T.prim_func
def scatter(A: T.Buffer((32,), "float32"), I: T.Buffer((32,), "int64"),
            B: T.Buffer((16, 8), "float32")):
    for i in range(32):
        with T.block("B"):
            vi = T.axis.spatial(32, i)
            B[I[vi] // 8, I[vi] % 8 + 0] = A[vi]
"""


@pytest.fixture(scope="module")
def lib():
    return tir_mlir.build(tir_mlir.parse(GATHER_SCATTER, "ind.tir"))


def test_good_indices_compute_like_numpy(lib):
    a = np.random.rand(64).astype(np.float32)
    idx = np.random.randint(0, 64, 32).astype(np.int32)
    b = np.zeros(32, np.float32)
    lib["gather"](a, idx, b)
    np.testing.assert_array_equal(b, a[idx])
    a = np.random.rand(32).astype(np.float32)
    idx = np.random.permutation(128)[:32].astype(np.int64)
    b = np.zeros((16, 8), np.float32)
    lib["scatter"](a, idx, b)
    np.testing.assert_array_equal(b.reshape(-1)[idx], a)


def test_bad_index_in_a_gather_is_reported_and_skipped(lib):
    a = np.arange(64, dtype=np.float32)
    idx = np.arange(32, dtype=np.int32)
    idx[3], idx[5] = 10**9, -7
    b = np.full(32, -1, np.float32)
    with pytest.raises(OutOfBoundsError) as e:
        lib["gather"](a, idx, b)
    assert str(e.value).startswith(
        "ind.tir:7:21: out-of-bounds load of buffer 'A': index "
        "1000000000 on axis 0, read from memory"
    )
    assert (e.value.buffer, e.value.index, e.value.axis) == ("A", 10**9, 0)
    assert [(m, str(loc)) for m, loc in e.value.notes] == [
        ("buffer 'A' declared here", "ind.tir:2:12")
    ]
    expect = a[np.clip(idx, 0, 63)]
    expect[[3, 5]] = 0  # the skipped loads read as 0
    np.testing.assert_array_equal(b, expect)
    idx[3], idx[5] = 1, 2  # the status was reset: the next call is clean
    lib["gather"](a, idx, b)
    np.testing.assert_array_equal(b, a[idx])


def test_bad_index_in_a_scatter_writes_nothing_outside(lib):
    a = np.arange(32, dtype=np.float32) + 1
    idx = np.arange(32, dtype=np.int64)
    idx[7] = 16 * 8 + 3  # row 16 of a 16-row buffer
    big = np.zeros((17, 8), np.float32)  # the row after B in memory, watched
    b = big[:16]
    with pytest.raises(
        OutOfBoundsError,
        match=r"out-of-bounds store of buffer 'B': index 16 "
        r"on axis 0",
    ):
        lib["scatter"](a, idx, b)
    assert not big[16].any()
    assert b.reshape(-1)[7] == 0 and b.reshape(-1)[8] == 9


def test_timing_loop_reports_after_the_loop(lib):
    a, b = np.arange(64, dtype=np.float32), np.zeros(32, np.float32)
    idx = np.full(32, 64, np.int32)
    with pytest.raises(OutOfBoundsError):
        lib.time_evaluator("gather", number=3)(a, idx, b)


def test_affine_accesses_are_not_guarded():
    """Only indices read from memory are checked: the common affine code is unchanged."""
    from tir_mlir.passes.lowering.pipeline import emit_text

    text = emit_text(tir_mlir.parse(GATHER_SCATTER).module, "affine")
    assert text.count("tir_mlir.checked_access") == 2  # the load of A, the store to B
    assert 'checked_access = "A|load|' in text and 'checked_access = "B|store|' in text
    plain = tir_mlir.parse(GATHER_SCATTER.replace("A[I[vi]]", "A[vi]").split("\n\n\n")[0])
    assert "tir_mlir_oob_status" not in emit_text(plain.module, "scf")
