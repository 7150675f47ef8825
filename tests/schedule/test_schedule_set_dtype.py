"""unsafe_set_dtype: TVM 0.21's output, the numbers it gives (rounded through the new dtype),
trace round trip, refusals."""

import numpy as np
import pytest

import tir_mlir
from schedule_check import check_all, check_error, check_replay, parse
from tir_mlir import Schedule
from schedule_cases.set_dtype import SRC, set_dtype


@pytest.mark.tvm
@pytest.mark.parametrize("dtype", ["float16", "int32", "float64", "float32"])
def test_set_dtype_agrees_with_tvm(dtype):
    from schedule_differential import assert_agrees

    assert_agrees(SRC, set_dtype(dtype), numerics=dtype in ("float64", "float32"))


@pytest.mark.parametrize(
    "dtype,rounding",
    [
        ("float16", lambda x: x.astype(np.float16).astype(np.float32)),
        ("int32", lambda x: np.trunc(x).astype(np.int32).astype(np.float32)),
        ("float64", lambda x: x),
    ],
)
def test_set_dtype_numbers_round_through_the_new_dtype(dtype, rounding):
    mod = parse(SRC)
    sch = Schedule(mod)
    set_dtype(dtype)(sch)
    check_replay(sch, mod)
    a = np.random.default_rng(0).standard_normal((8, 8)).astype(np.float32) * 100
    c = np.zeros((8, 8), np.float32)
    tir_mlir.build(sch.mod, debug=True)["main"](a, c)
    np.testing.assert_allclose(c, rounding(a * 2) + 1, rtol=1e-6)


def test_same_dtype_changes_nothing():
    sch = check_all(SRC, set_dtype("float32"), "main", tvm_diff=False)
    assert sch.mod.script() == Schedule(parse(SRC)).mod.script()
    assert str(sch.trace).endswith(
        'sch.unsafe_set_dtype(block=b0, buffer_index=0, dtype="float32")'
    )


@pytest.mark.parametrize(
    "block,index,dtype,match",
    [
        ("C", 0, "float16", "function parameter"),
        ("B", 1, "float16", "out of range"),
        ("B", 0, "float17", "unknown dtype"),
    ],
)
def test_illegal_set_dtype_refused(block, index, dtype, match):
    sch = Schedule(parse(SRC))
    b = sch.get_block(block)
    check_error(sch, lambda s: s.unsafe_set_dtype(b, index, dtype), match)


@pytest.mark.tvm
@pytest.mark.parametrize("block,index,dtype", [("C", 0, "float16"), ("B", 1, "float16")])
def test_tvm_refuses_the_same(block, index, dtype):
    import tvm

    sch = tvm.tir.Schedule(tvm.script.from_source(SRC))
    with pytest.raises(tvm.TVMError):
        sch.unsafe_set_dtype(sch.get_block(block), index, dtype)


def test_same_dtype_on_a_parameter_changes_nothing():
    """TVM returns before its allocation-site check when the dtype is already the buffer's
    (fuzzer seed 14: our refusal was a difference)."""
    sch = Schedule(parse(SRC))
    before = sch.mod.script()
    sch.unsafe_set_dtype(sch.get_block("C"), 0, "float32")
    assert sch.mod.script() == before


@pytest.mark.tvm
def test_same_dtype_on_a_parameter_agrees_with_tvm():
    from schedule_differential import assert_agrees

    assert_agrees(SRC, lambda s: s.unsafe_set_dtype(s.get_block("C"), 0, "float32"))
