"""InlineConstantScalars (TVM's rule): a block storing a constant into a 0-d buffer is
inlined into its consumers, unless it writes a function parameter."""

import tir_mlir.meta_schedule as ms
from schedule_check import check_numerics, parse
from tir_mlir import Schedule

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
