"""RewriteParallelVectorizeUnroll fuses TVM's parallel prefix: the outer serial spatial loops
up to and including the first one that takes the product past the limit (or holds more
than one statement), nothing when the product is 1; and it leaves purely spatial blocks
without an unroll pragma; a loop over a symbolic size counts as 1 job. Checked against TVM 0.21's postprocessor when TVM is installed."""

import numpy as np
import pytest

import tir_mlir
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


@pytest.mark.tvm
def test_same_program_as_tvm():
    import tvm
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


SYMBOLIC_MATMUL = """
@T.prim_func
def main(a: T.handle, B: T.Buffer((32, 32), "float32"), c: T.handle):
    T.func_attr({"tir.noalias": True})
    n = T.int32()
    A = T.match_buffer(a, (n, 32))
    C = T.match_buffer(c, (n, 32))
    for i, j, k in T.grid(n, 32, 32):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
"""


def test_symbolic_outer_loop_fuses_with_the_constant_loops_inside_it():
    # The loop over n's tiles counts as 1 job (its value at sizes within one tile), so the 4
    # column tiles inside it join the parallel loop: at n <= 8 the kernel still has 4 jobs,
    # as the kernel tuned at such a size has (TVM tunes no symbolic loop).
    sch = Schedule(parse(SYMBOLIC_MATMUL))
    b = sch.get_block("C")
    i, j, k = sch.get_loops(b)
    i0, i1 = sch.split(i, [None, 8])
    j0, j1 = sch.split(j, [4, 8])
    sch.reorder(i0, j0, k, i1, j1)
    sch.annotate(b, "meta_schedule.parallel", 32)
    sch.enter_postproc()
    assert ms.postproc.RewriteParallelVectorizeUnroll().apply(sch)
    assert "for i_0_j_0_fused in T.parallel((n + 7) // 8 * 4):" in sch.mod.script()
    lib = tir_mlir.build(sch.mod)
    rng = np.random.default_rng(0)
    w = rng.random((32, 32), dtype="float32")
    for n in (1, 5, 8, 13, 37):
        x, out = rng.random((n, 32), dtype="float32"), np.zeros((n, 32), "float32")
        lib["main"](x, w, out)
        np.testing.assert_allclose(out, x @ w, rtol=1e-5)
