"""pad_einsum: TVM 0.21's output, numbers, trace round trip, the calls TVM refuses, and the
ones we refuse where TVM's result is wrong."""

import numpy as np
import pytest

import tir_mlir
from schedule_check import check_all, check_error, check_replay, parse
from tir_mlir import Schedule
from schedule_cases.pad_einsum import MM, SCHEDULES, SUM, pad


@pytest.mark.tvm
@pytest.mark.parametrize("name", sorted(SCHEDULES))
def test_pad_einsum_agrees_with_tvm(name):
    from schedule_differential import assert_agrees

    src, fn = SCHEDULES[name]
    assert_agrees(src, fn)


@pytest.mark.parametrize("name", sorted(SCHEDULES))
def test_pad_einsum_numbers_and_replay(name):
    src, fn = SCHEDULES[name]
    check_all(src, fn, "main", tvm_diff=False)


def test_pad_einsum_text_and_trace():
    sch = check_all(MM, pad("C_shared", [1, 16, 1]), "main", tvm_diff=False)
    text = sch.mod.script()
    assert (
        """    B_pad = T.alloc_buffer((127, 128))
    C_pad = T.alloc_buffer((127, 128))
    for i0, i1 in T.grid(127, 128):
        with T.block("B_pad"):
            v0, v1 = T.axis.remap("SS", [i0, i1])
            T.reads(B[v0, v1])
            T.writes(B_pad[v0, v1])
            B_pad[v0, v1] = T.if_then_else(v1 < 127, B[v0, v1], T.float32(0.0))"""
        in text
    )
    assert (
        """    for i0, i1 in T.grid(127, 127):
        with T.block("C_pad"):
            v0, v1 = T.axis.remap("SS", [i0, i1])
            T.reads(C_pad[v0, v1])
            T.writes(C[v0, v1])
            C[v0, v1] = C_pad[v0, v1]"""
        in text
    )
    assert str(sch.trace).endswith("sch.pad_einsum(block=b0, padding=[1, 16, 1])")


NOT_EINSUM = """
@T.prim_func
def main(A: T.Buffer((127, 30), "float32"), C: T.Buffer((127, 30), "float32")):
    for i0, i1 in T.grid(127, 30):
        with T.block("C"):
            i, j = T.axis.remap("SS", [i0, i1])
            C[i, j] = A[i, j] + A[i, 0]
"""
SHIFTED = NOT_EINSUM.replace("A[i, j] + A[i, 0]", "A[i, j] + A[T.min(i + 1, 126), j]")
ILLEGAL = {
    "different_indices": (NOT_EINSUM, "C", [32, 1], "different indices"),
    "composite_index": (SHIFTED, "C", [32, 1], "neither an iter var nor a constant"),
    "zero_padding": (MM, "C_shared", [0, 1, 1], "positive integers"),
    "too_few": (MM, "C_shared", [32], "positive integers"),
    "accumulate_without_init": (
        SUM.replace(
            """            with T.init():
                C[i] = T.float32(0)
""",
            "",
        ),
        "C",
        [8, 16],
        "without T.init",
    ),
}


@pytest.mark.parametrize("name", sorted(ILLEGAL))
def test_illegal_pad_einsum_refused(name):
    src, block, padding, match = ILLEGAL[name]
    sch = Schedule(parse(src))
    b = sch.get_block(block)
    check_error(sch, lambda s: s.pad_einsum(b, padding), match)


@pytest.mark.tvm
@pytest.mark.parametrize("name", sorted(ILLEGAL))
def test_tvm_refuses_the_same(name):
    import tvm

    src, block, padding, _ = ILLEGAL[name]
    sch = tvm.tir.Schedule(tvm.script.from_source(src))
    with pytest.raises(tvm.TVMError):
        sch.pad_einsum(sch.get_block(block), padding)


MAX = MM.replace("C[i, j] + A[i, k] * B[k, j]", "T.max(C[i, j], A[i, k] * B[k, j])")
SHARED = """
@T.prim_func
def main(A: T.Buffer((127, 30), "float32"), C: T.Buffer((127, 30), "float32"), D: T.Buffer((127, 30), "float32")):
    for i0 in range(127):
        for i1 in range(30):
            with T.block("C"):
                i, j = T.axis.remap("SS", [i0, i1])
                C[i, j] = A[i, j]
        for i1 in range(30):
            with T.block("D"):
                i, j = T.axis.remap("SS", [i0, i1])
                D[i, j] = A[i, j]
"""
OFFSET = """
@T.prim_func
def main(A: T.Buffer((127, 30), "float32"), C: T.Buffer((127, 30), "float32")):
    for i0, i1 in T.grid(126, 30):
        with T.block("C"):
            i = T.axis.spatial((1, 127), i0 + 1)
            j = T.axis.spatial(30, i1)
            C[i, j] = A[i, j]
"""
WRONG_IN_TVM = {  # TVM accepts these and computes something else
    "max_reduction_padded": (MAX, "C_shared", [1, 1, 32], "would change its result"),
    "loop_shared_with_another_block": (SHARED, "C", [32, 1], "hold other blocks"),
    "domain_not_from_zero": (OFFSET, "C", [32, 1], "start at 0"),
}


@pytest.mark.parametrize("name", sorted(WRONG_IN_TVM))
def test_pad_einsum_refused_where_tvm_is_wrong(name):
    src, block, padding, match = WRONG_IN_TVM[name]
    sch = Schedule(parse(src))
    b = sch.get_block(block)
    check_error(sch, lambda s: s.pad_einsum(b, padding), match)


@pytest.mark.tvm
@pytest.mark.parametrize("name", sorted(WRONG_IN_TVM))
def test_tvm_accepts_them(name):
    import tvm

    src, block, padding, _ = WRONG_IN_TVM[name]
    sch = tvm.tir.Schedule(tvm.script.from_source(src))
    sch.pad_einsum(sch.get_block(block), padding)


def test_not_an_einsum_refused_even_with_nothing_to_pad():
    """TVM checks the einsum pattern before finding that nothing needs padding."""
    sch = Schedule(parse(NOT_EINSUM))
    b = sch.get_block("C")
    check_error(sch, lambda s: s.pad_einsum(b, [1, 1]), "different indices")


@pytest.mark.tvm
def test_not_an_einsum_refused_by_tvm_too():
    import tvm

    theirs = tvm.tir.Schedule(tvm.script.from_source(NOT_EINSUM))
    with pytest.raises(tvm.TVMError):
        theirs.pad_einsum(theirs.get_block("C"), [1, 1])


SYM_MM = """
@T.prim_func
def main(a: T.handle, b: T.handle, c: T.handle):
    n = T.int32()
    A = T.match_buffer(a, (128, 128), "float32")
    B = T.match_buffer(b, (n, 128), "float32")
    C = T.match_buffer(c, (128, n), "float32")
    for i0, i1, i2 in T.grid(128, n, 128):
        with T.block("C"):
            i, j, k = T.axis.remap("SSR", [i0, i1, i2])
            with T.init():
                C[i, j] = T.float32(0)
            C[i, j] = C[i, j] + A[i, k] * B[j, k]
"""
SYM_SQUARES = """
@T.prim_func
def main(a: T.handle, r: T.handle):
    n = T.int32()
    A = T.match_buffer(a, (n, 64))
    R = T.match_buffer(r, (n,))
    S = T.alloc_buffer((n,))
    for i, k in T.grid(n, 64):
        with T.block("S"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                S[vi] = T.float32(0)
            S[vi] = S[vi] + A[vi, vk] * A[vi, vk]
    for i in range(n):
        with T.block("R"):
            vi = T.axis.remap("S", [i])
            R[vi] = S[vi] + T.float32(1)
"""


def test_pad_einsum_of_a_symbolic_extent():
    """A size n pads to `(n + 31) // 32 * 32` (TVM's spelling; the map `s0 ceildiv 32 * 32`):
    the padded buffers are allocated at that size, the fill compares with n itself."""
    sch = Schedule(parse(SYM_MM))
    sch.pad_einsum(sch.get_block("C"), [32, 32, 32])
    text = sch.mod.script()
    assert (
        """    B_pad = T.alloc_buffer(((n + 31) // 32 * 32, 128))
    C_pad = T.alloc_buffer((128, (n + 31) // 32 * 32))
    for i0, i1 in T.grid((n + 31) // 32 * 32, 128):
        with T.block("B_pad"):
            v0, v1 = T.axis.remap("SS", [i0, i1])
            T.reads(B[v0, v1])
            T.writes(B_pad[v0, v1])
            B_pad[v0, v1] = T.if_then_else(v0 < n, B[v0, v1], T.float32(0.0))
    for i0, i1, i2 in T.grid(128, (n + 31) // 32 * 32, 128):
        with T.block("C"):
            i, j, k = T.axis.remap("SSR", [i0, i1, i2])
            T.reads(A[i, k], B_pad[j, k])
            T.writes(C_pad[i, j])"""
        in text
    )
    assert (
        """    for i0, i1 in T.grid(128, n):
        with T.block("C_pad"):"""
        in text
    )
    check_replay(sch, parse(SYM_MM))
    lib = tir_mlir.build(sch.mod)
    rng = np.random.default_rng(0)
    for n in (1, 31, 32, 45):
        a = rng.random((128, 128), dtype="float32")
        b = rng.random((n, 128), dtype="float32")
        c = np.zeros((128, n), "float32")
        lib["main"](a, b, c)
        np.testing.assert_allclose(c, a @ b.T, rtol=1e-4, err_msg=f"n = {n}")


def test_pad_einsum_of_a_symbolic_intermediate():
    """An allocated output of symbolic size: its padded copy is allocated over the padded
    size and copied back over n."""
    sch = Schedule(parse(SYM_SQUARES))
    sch.pad_einsum(sch.get_block("S"), [16, 1])
    text = sch.mod.script()
    assert "S_pad = T.alloc_buffer(((n + 15) // 16 * 16,))" in text
    assert "A_pad = T.alloc_buffer(((n + 15) // 16 * 16, 64))" in text
    lib = tir_mlir.build(sch.mod)
    rng = np.random.default_rng(1)
    for n in (1, 16, 21):
        a = rng.random((n, 64), dtype="float32")
        r = np.zeros(n, "float32")
        lib["main"](a, r)
        np.testing.assert_allclose(r, (a * a).sum(1) + 1, rtol=1e-4, err_msg=f"n = {n}")
