"""reorder_block_iter_var (and transform_block_layout when built): TVM 0.21's output, numbers,
trace round trip, refusals."""
import pytest

from schedule_check import check_all, check_error, parse
from shared_programs import CONV2D_PAD_C4_6X6 as CONV, MATMUL_16 as MATMUL
from tir_mlir import Schedule


def reorder_iters(name, order):
    return lambda sch: sch.reorder_block_iter_var(sch.get_block(name), order)


def _after_split(sch):
    b = sch.get_block("B")
    loops = sch.get_loops(b)
    sch.split(loops[4], [2, 2])
    sch.reorder_block_iter_var(b, [6, 5, 4, 3, 2, 1, 0])
    sch.reorder_block_iter_var(b, [1, 0, 2, 3, 4, 5, 6])


def _twice_then_split(sch):
    b = sch.get_block("C")
    sch.reorder_block_iter_var(b, [2, 0, 1])
    i, j, k = sch.get_loops(b)
    sch.split(j, [None, 4])


REORDERS = {
    "matmul": (MATMUL, reorder_iters("C", [2, 0, 1])),
    "identity": (MATMUL, reorder_iters("C", [0, 1, 2])),
    "conv_after_split": (CONV, _after_split),
    "then_split": (MATMUL, _twice_then_split),
    "padding_block": (CONV, reorder_iters("Apad", [3, 2, 1, 0])),
}


@pytest.mark.parametrize("name", sorted(REORDERS))
def test_reorder_block_iter_var_agrees_with_tvm(name):
    pytest.importorskip("tvm")
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
    assert [v.var for v in sch.get(b).iter_vars] == ["vk", "vi", "vj"]    # the handle lives
    assert str(sch.trace).endswith("sch.reorder_block_iter_var(block=b0, new_order=[2, 0, 1])")


@pytest.mark.parametrize("order", [[0, 1], [0, 1, 1], [0, 1, 3], [-1, 0, 1], [0, 1, 2, 3]])
def test_not_a_permutation_refused(order):
    sch = Schedule(parse(MATMUL))
    b = sch.get_block("C")
    check_error(sch, lambda s: s.reorder_block_iter_var(b, order), "not a valid permutation")


@pytest.mark.parametrize("order", [[0, 1], [0, 1, 1], [0, 1, 3], [0, 1, 2, 3]])
def test_tvm_refuses_the_same(order):
    tvm = pytest.importorskip("tvm")
    sch = tvm.tir.Schedule(tvm.script.from_source(MATMUL))
    with pytest.raises(tvm.TVMError):
        sch.reorder_block_iter_var(sch.get_block("C"), order)
