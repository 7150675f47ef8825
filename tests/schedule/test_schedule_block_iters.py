"""reorder_block_iter_var (and transform_block_layout when built): TVM 0.21's output, numbers,
trace round trip, refusals."""

import pytest

from schedule_check import check_all, check_error, parse
from shared_programs import MATMUL_16 as MATMUL
from tir_mlir import Schedule
from schedule_cases.block_iters import LAYOUTS, REORDERS


@pytest.mark.tvm
@pytest.mark.parametrize("name", sorted(REORDERS))
def test_reorder_block_iter_var_agrees_with_tvm(name):
    from schedule_differential import assert_agrees

    src, fn = REORDERS[name]
    assert_agrees(src, fn)


@pytest.mark.parametrize("name", sorted(REORDERS))
def test_reorder_block_iter_var_numbers_and_replay(name):
    src, fn = REORDERS[name]
    check_all(src, fn, "main", tvm_diff=False)


def test_reorder_block_iter_var_text_and_handle():
    sch = Schedule(parse(MATMUL))
    b = sch.get_block("C")
    sch.reorder_block_iter_var(b, [2, 0, 1])
    assert 'vk, vi, vj = T.axis.remap("RSS", [k, i, j])' in sch.mod.script()
    assert [v.var for v in sch.get(b).iter_vars] == ["vk", "vi", "vj"]  # the handle lives
    assert str(sch.trace).endswith("sch.reorder_block_iter_var(block=b0, new_order=[2, 0, 1])")


@pytest.mark.parametrize("order", [[0, 1], [0, 1, 1], [0, 1, 3], [-1, 0, 1], [0, 1, 2, 3]])
def test_not_a_permutation_refused(order):
    sch = Schedule(parse(MATMUL))
    b = sch.get_block("C")
    check_error(sch, lambda s: s.reorder_block_iter_var(b, order), "not a valid permutation")


@pytest.mark.tvm
@pytest.mark.parametrize("order", [[0, 1], [0, 1, 1], [0, 1, 3], [0, 1, 2, 3]])
def test_tvm_refuses_the_same(order):
    import tvm

    sch = tvm.tir.Schedule(tvm.script.from_source(MATMUL))
    with pytest.raises(tvm.TVMError):
        sch.reorder_block_iter_var(sch.get_block("C"), order)


@pytest.mark.tvm
@pytest.mark.parametrize("name", sorted(LAYOUTS))
def test_transform_block_layout_agrees_with_tvm(name):
    from schedule_differential import assert_agrees

    src, fn = LAYOUTS[name]
    assert_agrees(src, fn)


@pytest.mark.parametrize("name", sorted(LAYOUTS))
def test_transform_block_layout_numbers_and_replay(name):
    src, fn = LAYOUTS[name]
    check_all(src, fn, "main", tvm_diff=False)


def test_transform_block_layout_text_and_trace():
    sch = Schedule(parse(MATMUL))
    b = sch.get_block("C")
    sch.transform_block_layout(b, "lambda i, j, k: (i * 16 + j, k)")
    text = sch.mod.script()
    assert (
        """    for ax0, ax1 in T.grid(256, 16):
        with T.block("C"):
            v0, v1 = T.axis.remap("SR", [ax0, ax1])"""
        in text
    )
    assert "C[v0 // 16, v0 % 16] = C[v0 // 16, v0 % 16] + A[v0 // 16, v1] * B[v1, v0 % 16]" in text
    assert str(sch.trace).endswith(
        "sch.transform_block_layout(block=b0, index_map=lambda i, j, k: (i * 16 + j, k,))"
    )
    assert len(sch.get_loops(b)) == 2  # the handle lives


def _split_first(sch):
    i, j, k = sch.get_loops(sch.get_block("C"))
    sch.split(j, [4, 4])
    return sch.get_block("C")


ILLEGAL_LAYOUTS = {
    "mixes_kinds": (lambda i, j, k: (i * 16 + k, j), None, "more than one type"),
    "not_bijective": (lambda i, j, k: (i, j), None, "not bijective"),
    "not_dividing": (lambda i, j, k: (i // 3, i % 3, j, k), None, "not bijective"),
    "offset": (lambda i, j, k: (i + 1, j, k), None, "not bijective"),
    "non_trivial_binding": (lambda i, j, k: (j, i, k), _split_first, "not variables"),
}


@pytest.mark.parametrize("name", sorted(ILLEGAL_LAYOUTS))
def test_illegal_block_layout_refused(name):
    fn, prepare, match = ILLEGAL_LAYOUTS[name]
    sch = Schedule(parse(MATMUL))
    b = prepare(sch) if prepare else sch.get_block("C")
    check_error(sch, lambda s: s.transform_block_layout(b, fn), match)


@pytest.mark.tvm
@pytest.mark.parametrize("name", sorted(ILLEGAL_LAYOUTS))
def test_tvm_refuses_the_same_layouts(name):
    import tvm

    fn, prepare, _ = ILLEGAL_LAYOUTS[name]
    sch = tvm.tir.Schedule(tvm.script.from_source(MATMUL))
    b = prepare(sch) if prepare else sch.get_block("C")
    with pytest.raises(tvm.TVMError):
        sch.transform_block_layout(b, fn)
