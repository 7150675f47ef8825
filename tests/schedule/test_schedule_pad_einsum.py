"""pad_einsum: TVM 0.21's output, numbers, trace round trip, the calls TVM refuses, and the
ones we refuse where TVM's result is wrong."""

import pytest

from schedule_check import check_all, check_error, parse
from tir_mlir import Schedule

MM = """
@T.prim_func
def main(A: T.Buffer((127, 127), "float32"), B: T.Buffer((127, 127), "float32"), C: T.Buffer((127, 127), "float32")):
    for i0, i1, i2 in T.grid(127, 127, 127):
        with T.block("C_shared"):
            i, j, k = T.axis.remap("SSR", [i0, i1, i2])
            with T.init():
                C[i, j] = T.float32(0)
            C[i, j] = C[i, j] + A[i, k] * B[k, j]
"""
EW = """
@T.prim_func
def main(A: T.Buffer((30, 127), "float32"), B: T.Buffer((30,), "float32"), E: T.Buffer((4,), "float32"), C: T.Buffer((127, 30), "float32")):
    for i0, i1 in T.grid(127, 30):
        with T.block("C"):
            i, j = T.axis.remap("SS", [i0, i1])
            C[i, j] = A[j, i] * T.float32(2) + B[j] + E[0]
"""
CHAIN = """
@T.prim_func
def main(A: T.Buffer((130, 30), "int32"), C: T.Buffer((127, 30), "int32")):
    D = T.alloc_buffer((127, 30), "int32")
    for i0, i1 in T.grid(127, 30):
        with T.block("D"):
            i, j = T.axis.remap("SS", [i0, i1])
            D[i, j] = A[i, j] * 2
    for i0, i1 in T.grid(127, 30):
        with T.block("C"):
            i, j = T.axis.remap("SS", [i0, i1])
            C[i, j] = D[i, j] + 1
"""
SUM = """
@T.prim_func
def main(A: T.Buffer((20, 30), "float32"), C: T.Buffer((20,), "float32")):
    for i0, i1 in T.grid(20, 30):
        with T.block("C"):
            i, k = T.axis.remap("SR", [i0, i1])
            with T.init():
                C[i] = T.float32(0)
            C[i] = C[i] + A[i, k]
"""


def pad(block, padding, before=None):
    def fn(sch):
        if before is not None:
            before(sch)
        sch.pad_einsum(sch.get_block(block), padding)

    return fn


def _split_first(sch):
    sch.split(sch.get_loops(sch.get_block("C_shared"))[0], [None, 4])


SCHEDULES = {
    "matmul_all": (MM, pad("C_shared", [32, 32, 32])),
    "matmul_one_spatial": (MM, pad("C_shared", [1, 16, 1])),
    "matmul_reduction_only": (MM, pad("C_shared", [1, 1, 32])),
    "matmul_nothing_to_pad": (MM, pad("C_shared", [1, 1, 1])),
    "matmul_after_split": (MM, pad("C_shared", [32, 32, 32], _split_first)),
    "transposed_input_constant_index": (EW, pad("C", [32, 8])),
    "int_intermediate_output": (CHAIN, pad("D", [32, 1])),
    "int_intermediate_input": (CHAIN, pad("C", [32, 1])),
    "sum": (SUM, pad("C", [8, 16])),
    # the padded copy of a buffer with axis separators has none, as TVM's (fuzzer seed 2682)
    "input_with_axis_separator": (
        MM,
        pad(
            "C_shared",
            [1, 32, 1],
            lambda sch: sch.set_axis_separator(sch.get_block("C_shared"), ("read", 1), [1]),
        ),
    ),
}


@pytest.mark.parametrize("name", sorted(SCHEDULES))
def test_pad_einsum_agrees_with_tvm(name):
    pytest.importorskip("tvm")
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


@pytest.mark.parametrize("name", sorted(ILLEGAL))
def test_tvm_refuses_the_same(name):
    tvm = pytest.importorskip("tvm")
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


@pytest.mark.parametrize("name", sorted(WRONG_IN_TVM))
def test_tvm_accepts_them(name):
    tvm = pytest.importorskip("tvm")
    src, block, padding, _ = WRONG_IN_TVM[name]
    sch = tvm.tir.Schedule(tvm.script.from_source(src))
    sch.pad_einsum(sch.get_block(block), padding)


def test_not_an_einsum_refused_even_with_nothing_to_pad():
    """TVM checks the einsum pattern before finding that nothing needs padding."""
    sch = Schedule(parse(NOT_EINSUM))
    b = sch.get_block("C")
    check_error(sch, lambda s: s.pad_einsum(b, [1, 1]), "different indices")
    tvm = pytest.importorskip("tvm")
    theirs = tvm.tir.Schedule(tvm.script.from_source(NOT_EINSUM))
    with pytest.raises(tvm.TVMError):
        theirs.pad_einsum(theirs.get_block("C"), [1, 1])
