"""RewriteParallelVectorizeUnroll fuses TVM's parallel prefix: the outer serial spatial loops
up to and including the first one that takes the product past the limit (or holds more
than one statement), nothing when the product is 1; and it leaves purely spatial blocks
without an unroll pragma. Checked against TVM 0.21's postprocessor when TVM is installed."""

import pytest

import tir_mlir.meta_schedule as ms
from schedule_check import check_numerics, parse
from tir_mlir import Schedule

ROWSUM = """
@T.prim_func
def main(A: T.Buffer((2, 7, 8, 16), "float32"), B: T.Buffer((2, 7, 8), "float32")):
    T.func_attr({"global_symbol": "main", "tir.noalias": True})
    for a, b, c, k in T.grid(2, 7, 8, 16):
        with T.block("B"):
            va, vb, vc, vk = T.axis.remap("SSSR", [a, b, c, k])
            with T.init():
                B[va, vb, vc] = T.float32(0)
            B[va, vb, vc] = B[va, vb, vc] + A[va, vb, vc, vk]
"""

COPY = """
@T.prim_func
def main(A: T.Buffer((1, 3, 16), "float32"), B: T.Buffer((1, 3, 16), "float32")):
    T.func_attr({"global_symbol": "main", "tir.noalias": True})
    for a, b, c in T.grid(1, 3, 16):
        with T.block("B"):
            va, vb, vc = T.axis.remap("SSS", [a, b, c])
            B[va, vb, vc] = A[va, vb, vc] * T.float32(2)
"""


def _postprocessed(src, block, unroll=16):
    mod = parse(src)
    sch = Schedule(mod)
    b = sch.get_block(block)
    sch.annotate(b, "meta_schedule.parallel", 32)
    sch.annotate(b, "meta_schedule.vectorize", 64)
    sch.annotate(b, "meta_schedule.unroll_explicit", unroll)
    sch.enter_postproc()
    assert ms.postproc.RewriteParallelVectorizeUnroll().apply(sch)
    check_numerics(mod, sch.mod, "main")
    return sch.mod.script()


def test_parallel_prefix_takes_the_loop_past_the_limit():
    text = _postprocessed(ROWSUM, "B")
    # 2 x 7 = 14 <= 32, x 8 = 112 > 32: the 8 is fused too (16 jobs of 7 steps before)
    assert (
        'for a_b_c_fused in T.parallel(112, annotations={"pragma_auto_unroll_max_step": '
        '16, "pragma_unroll_explicit": 1}):'
    ) in text
    assert "for k in range(16):" in text
    assert "meta_schedule" not in text


def test_spatial_block_gets_no_unroll_and_unit_prefix_is_fused():
    text = _postprocessed(COPY, "B", unroll=64)
    assert "pragma_auto_unroll_max_step" not in text
    assert "for a_b_fused in T.parallel(3):" in text
    assert "for c in T.vectorized(16):" in text


def test_same_program_as_tvm():
    tvm = pytest.importorskip("tvm")
    from tvm import meta_schedule as tms

    ours = _postprocessed(ROWSUM, "B")
    sch = tvm.tir.Schedule(tvm.script.from_source(ROWSUM))
    root = sch.get_block("root")
    sch.annotate(root, "meta_schedule.parallel", 32)
    sch.annotate(root, "meta_schedule.vectorize", 64)
    sch.annotate(root, "meta_schedule.unroll_explicit", 16)
    sch.enter_postproc()
    assert tms.postproc.RewriteParallelVectorizeUnroll().apply(sch)
    tvm.ir.assert_structural_equal(tvm.script.from_source(ours), sch.mod["main"])
