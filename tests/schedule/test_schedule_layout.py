"""storage_align and transform_layout: printed result (TVM 0.21's), numerics, trace replay,
TVM differential, errors."""

import numpy as np

import tir_mlir
from schedule_check import check_error, check_replay, parse
from schedule_check import check_all_regions_reinferred as check
from shared_programs import MATMUL_16 as MM, MM_RELU_16 as MM_RELU
from tir_mlir import Schedule


def test_storage_align_annotates_like_tvm():
    def sched(s):
        a_shared = s.cache_read(s.get_block("C"), 0, "shared")
        s.storage_align(a_shared, 0, 0, 16, 1)

    sch = check(MM, sched, "main")
    assert 'T.block_attr({"buffer_dim_align": [[0, 0, 16, 1]]})' in sch.mod.script()
    assert "sch.storage_align(block=b1, buffer_index=0, axis=0, factor=16, offset=1)" in str(
        sch.trace
    )


def _run(sch, *arrays):
    tir_mlir.build(sch.mod)["main"](*arrays)


def test_transform_layout_of_parameters():
    """A parameter's layout changes the signature: the caller passes the new layout."""
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((16, 16), "float32"), rng.standard_normal((16, 16), "float32")
    sch = Schedule(parse(MM))
    sch.transform_layout(sch.get_block("C"), ("read", 0), lambda i, j: (j, i))
    check_replay(sch, parse(MM))
    assert "C[vi, vj] = C[vi, vj] + A[vk, vi] * B[vk, vj]" in sch.mod.script()
    c = np.zeros((16, 16), "float32")
    _run(sch, np.ascontiguousarray(a.T), b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)

    sch = Schedule(parse(MM))
    sch.transform_layout(sch.get_block("C"), ("write", 0), lambda i, j: (i // 4, j, i % 4))
    check_replay(sch, parse(MM))
    text = sch.mod.script()
    assert 'C: T.Buffer((4, 16, 4), "float32")' in text
    assert "C[vi // 4, vj, vi % 4] = C[vi // 4, vj, vi % 4] + A[vi, vk] * B[vk, vj]" in text
    c = np.zeros((4, 16, 4), "float32")
    _run(sch, a, b, c)
    np.testing.assert_allclose(c.transpose(0, 2, 1).reshape(16, 16), a @ b, rtol=1e-4, atol=1e-4)


def test_transform_layout_of_allocation_by_name():
    sch = check(
        MM_RELU,
        lambda s: s.transform_layout(s.get_block("Y"), "Y", lambda i, j: (j // 8, i, j % 8)),
        "main",
    )
    assert "Y = T.alloc_buffer((2, 16, 8))" in sch.mod.script()


def test_errors():
    sch = Schedule(parse(MM))
    c = sch.get_block("C")
    check_error(
        sch,
        lambda s: s.storage_align(c, 0, 0, 16, 1),
        "storage_align: buffer 'C' of block 'C' is a function parameter",
    )
    sch = Schedule(parse(MM_RELU))
    y = sch.get_block("Y")
    check_error(sch, lambda s: s.storage_align(y, 0, 2, 16, 1), "axis 2 is out of range")
    check_error(sch, lambda s: s.storage_align(y, 0, 0, 16, -1), "offset >= 0")
    check_error(
        sch,
        lambda s: s.transform_layout(y, "Y", lambda i, j: (i, j // 2)),
        r"sends shape \(16, 16\) to \(16, 8\), which is not a bijection",
    )
    check_error(
        sch,
        lambda s: s.transform_layout(y, "Q", lambda i, j: (j, i)),
        "block 'Y' does not access a buffer named 'Q'",
    )
    check_error(
        sch, lambda s: s.transform_layout(y, ("read", 0), lambda i, j: (i * j, 0)), "not affine"
    )
