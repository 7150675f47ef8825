"""RewriteUnboundBlock's results print as TVM's (its own tests' expected modules, the binding
lines recorded here): the fused-then-split bindings keep the fused sum whole, a single loop is
fused too (`i0_fused_0`), a fused unit loop binds 0, and the T.where a split puts on an
uneven nest bounds the fused sum; the numbers are the unscheduled program's."""

from pathlib import Path

import numpy as np
from binding_forms import add_one, binding_lines, norm_bmn

import tir_mlir
import tir_mlir.meta_schedule as ms

SYMBOLIC = Path(__file__).parent.parent / "data" / "symbolic"
COOPERATIVE = add_one(512, 512)
NORM = norm_bmn(256)

UNROLLED = """
@T.prim_func
def main(A: T.Buffer((6, 6, 196, 64), "float32"), B: T.Buffer((4, 4, 196, 64), "float32")):
    for i2_0, i3_0, i2_1, i3_1 in T.grid(98, 4, 2, 16):
        for i0 in T.unroll(4):
            for i1 in T.unroll(4):
                with T.block("inverse"):
                    vh, vw = T.axis.remap("SS", [i0, i1])
                    p = T.axis.spatial(196, i2_0 * 2 + i2_1)
                    co = T.axis.spatial(64, i3_0 * 16 + i3_1)
                    B[vh, vw, p, co] = A[vh, vw, p, co] * T.float32(2.0)
"""


def _rewrite(text):
    mod = tir_mlir.parse(text)
    sch = tir_mlir.Schedule(mod)
    post = ms.postproc.RewriteUnboundBlock()
    post.target = ms.target.Target("cuda --max_threads_per_block=1024")
    assert post.apply(sch)
    return mod, sch


def _lines(sch):
    return binding_lines(sch, ("T.axis", "T.where", "thread_binding"))


def test_cooperative_fetch():
    _, sch = _rewrite(COOPERATIVE)
    assert _lines(sch) == [
        'for i_j_fused_0 in T.thread_binding(256, thread="blockIdx.x"):',
        'for i_j_fused_1 in T.thread_binding(1024, thread="threadIdx.x"):',
        "vi = T.axis.spatial(512, (i_j_fused_0 * 1024 + i_j_fused_1) // 512)",
        "vj = T.axis.spatial(512, (i_j_fused_0 * 1024 + i_j_fused_1) % 512)",
    ]


def test_norm_bmn_fuses_the_one_unit_loop():
    _, sch = _rewrite(NORM)
    assert _lines(sch) == [
        'for i0_fused_0 in T.thread_binding(1, thread="blockIdx.x"):',
        'for i0_fused_1 in T.thread_binding(1, thread="threadIdx.x"):',
        "b = T.axis.spatial(1, 0)",
        'i, j = T.axis.remap("RR", [i1, i2])',
        'for i0_fused_0 in T.thread_binding(1, thread="blockIdx.x"):',
        'for i0_fused_1 in T.thread_binding(1, thread="threadIdx.x"):',
        "b = T.axis.spatial(1, 0)",
    ]


def test_unrolled_loop_bound_by_the_fused_sum():
    mod, sch = _rewrite(UNROLLED)
    f = "i2_0_i3_0_i2_1_i3_1_fused"
    s = f"({f}_0 * 1024 + {f}_1)"
    assert _lines(sch) == [
        f'for {f}_0 in T.thread_binding(13, thread="blockIdx.x"):',
        f'for {f}_1 in T.thread_binding(1024, thread="threadIdx.x"):',
        'vh, vw = T.axis.remap("SS", [i0, i1])',
        f"p = T.axis.spatial(196, {s} // 128 * 2 + {s} % 32 // 16)",
        f"co = T.axis.spatial(64, {s} % 128 // 32 * 16 + {s} % 16)",
        f"T.where({f}_0 * 1024 + {f}_1 < 12544)",
    ]
    # the same numbers: the bindings print differently, the IR's maps are what they were
    a = np.random.default_rng(0).standard_normal((6, 6, 196, 64)).astype(np.float32)
    want, got = np.zeros((4, 4, 196, 64), np.float32), np.zeros((4, 4, 196, 64), np.float32)
    tir_mlir.interpret(mod, "main", a, want)
    tir_mlir.interpret(sch.mod, "main", a, got)
    np.testing.assert_array_equal(got, want)


def test_a_symbolic_extent_is_split_in_three():
    # TVM 0.21's RewriteUnboundBlock on tests/data/symbolic/softmax.tir (a cuda target with
    # 1024 threads a block): the fused extent n * 64 has no known bound, so the blockIdx.x
    # and threadIdx.x parts go outside the rest (the same numbers as the unscheduled
    # program: tests/schedule/test_schedule_symbolic.py's fuse_split3_reorder cases)
    _, sch = _rewrite((SYMBOLIC / "softmax.tir").read_text())
    s = "(i_j_fused_0 * 262144 + i_j_fused_1 * 1024 + i_j_fused_2)"
    assert _lines(sch)[-5:] == [
        'for i_j_fused_1 in T.thread_binding(256, thread="blockIdx.x"):',
        'for i_j_fused_2 in T.thread_binding(1024, thread="threadIdx.x"):',
        f"vi = T.axis.spatial(64, {s} // n)",
        f"vj = T.axis.spatial(n, {s} % n)",
        "T.where((i_j_fused_0 * 256 + i_j_fused_1) * 1024 + i_j_fused_2 < n * 64)",
    ]
    assert "for i_j_fused_0 in range((n * 64 + 262143) // 262144):" in sch.mod.script()
