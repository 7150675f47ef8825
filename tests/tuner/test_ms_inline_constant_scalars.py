"""InlineConstantScalars (TVM's rule): a block storing a constant into a 0-d buffer is
inlined into its consumers, unless it writes a function parameter."""

import pytest
from schedule_check import check_numerics, parse

import tir_mlir.meta_schedule as ms
from tir_mlir import Schedule, ScheduleError

CONST = """
@T.prim_func
def main(A: T.Buffer((4,), "int32"), B: T.Buffer((4,), "int32")):
    c = T.alloc_buffer((), "int32")
    with T.block("compile_engine_const"):
        vi = T.axis.spatial(1, 0)
        c[()] = 59
    for i in range(4):
        with T.block("B"):
            vi = T.axis.spatial(4, i)
            B[vi] = A[vi] + c[()]
"""

FULL = """
@T.prim_func
def main(T_full: T.Buffer((), "float32")):
    with T.block("T_full"):
        vi = T.axis.spatial(1, 0)
        T_full[()] = T.float32(1)
"""


def test_constant_scalar_is_inlined():
    mod = parse(CONST)
    sch = Schedule(mod)
    (out,) = ms.schedule_rule.InlineConstantScalars().apply(
        sch, sch.get_block("compile_engine_const")
    )
    text = out.mod.script()
    assert "compile_engine_const" not in text and "B[vi] = A[vi] + 59" in text
    check_numerics(mod, out.mod, "main")


def test_output_block_and_other_blocks_are_kept():
    sch = Schedule(parse(FULL))
    before = sch.mod.script()
    (out,) = ms.schedule_rule.InlineConstantScalars().apply(sch, sch.get_block("T_full"))
    assert out.mod.script() == before
    sch = Schedule(parse(CONST))
    before = sch.mod.script()
    ms.schedule_rule.InlineConstantScalars().apply(sch, sch.get_block("B"))
    assert sch.mod.script() == before


ADD_CONST = """
@T.prim_func
def main(A: T.Buffer((4,), "int32"), C: T.Buffer((4,), "int32")):
    B = T.alloc_buffer((4,), "int32")
    c = T.alloc_buffer((), "int32")
    for i in range(4):
        with T.block("B"):
            vi = T.axis.spatial(4, i)
            B[vi] = A[vi] * 2
    with T.block("compile_engine_const"):
        vi = T.axis.spatial(1, 0)
        c[()] = 59
    for i in range(4):
        with T.block("C"):
            vi = T.axis.spatial(4, i)
            C[vi] = B[vi] + c[()]
"""


def test_inlined_constants_let_the_consumer_be_reverse_inlined():
    """TVM's conv2d_int8 case: an epilogue reading the producer and a constant scalar block
    cannot be reverse_compute_inline'd (TVM's words in the error) until the constant is
    inlined."""
    mod = parse(ADD_CONST)
    sch = Schedule(mod)
    with pytest.raises(ScheduleError) as e:
        sch.reverse_compute_inline(sch.get_block("C"))
    assert (
        "The block is only allowed to read a single buffer region, but it reads 2 region(s)"
        in str(e.value)
    )
    ms.schedule_rule.InlineConstantScalars().apply(sch, sch.get_block("compile_engine_const"))
    sch.reverse_compute_inline(sch.get_block("C"))
    assert "C[vi] = A[vi] * 2 + 59" in sch.mod.script()
    check_numerics(mod, sch.mod, "main")
