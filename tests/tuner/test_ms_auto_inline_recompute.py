"""AutoInline does not inline a producer that calls a math function into a consumer that reads
each of its elements more than once (a GELU into the next layer's matmul: one erf per output
column instead of one per element), which a whole imported model (one function) offers and
TVM's per-operator functions never do; a cheap producer is still inlined there, and an
expensive one into a consumer that reads each element once."""

import numpy as np

import tir_mlir
import tir_mlir.meta_schedule as ms
from schedule_check import parse

TARGET = "llvm -num-cores=2"

PROGRAM = """
@T.prim_func
def main(A: T.Buffer((4, 16), "float32"), W: T.Buffer((16, 8), "float32"),
         B: T.Buffer((4, 16), "float32"), C: T.Buffer((4, 8), "float32"),
         D: T.Buffer((4, 16), "float32")):
    bias = T.alloc_buffer((4, 16))
    gelu = T.alloc_buffer((4, 16))
    gelu2 = T.alloc_buffer((4, 16))
    for i, j in T.grid(4, 16):
        with T.block("bias"):
            vi, vj = T.axis.remap("SS", [i, j])
            bias[vi, vj] = A[vi, vj] + B[vi, vj]
    for i, j in T.grid(4, 16):
        with T.block("gelu"):
            vi, vj = T.axis.remap("SS", [i, j])
            gelu[vi, vj] = bias[vi, vj] * T.erf(bias[vi, vj])
    for i, j, k in T.grid(4, 8, 16):
        with T.block("matmul"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + gelu[vi, vk] * W[vk, vj]
    for i, j in T.grid(4, 16):
        with T.block("gelu2"):
            vi, vj = T.axis.remap("SS", [i, j])
            gelu2[vi, vj] = T.erf(A[vi, vj])
    for i, j in T.grid(4, 16):
        with T.block("out2"):
            vi, vj = T.axis.remap("SS", [i, j])
            D[vi, vj] = gelu2[vi, vj] + T.float32(1)
"""


def test_math_producer_read_repeatedly_stays_a_block():
    mod = parse(PROGRAM)
    space = ms.space_generator.PostOrderApply(
        sch_rules=[ms.schedule_rule.AutoInline()], postprocs=[], mutator_probs={}
    )
    (sch,) = ms.generate_design_space(mod, TARGET, space=space, seed=0)
    # bias (an add) is inlined into gelu; gelu (erf, read for each of matmul's 8 columns)
    # stays; gelu2 (erf, read once per element by out2) is inlined
    assert sch.get_block_names() == ["gelu", "matmul", "out2"]
    rng = np.random.default_rng(0)
    args = [rng.standard_normal(s).astype("float32") for s in ((4, 16), (16, 8), (4, 16))]
    outs = [np.zeros((4, 8), "float32"), np.zeros((4, 16), "float32")]
    expected = [np.zeros((4, 8), "float32"), np.zeros((4, 16), "float32")]
    tir_mlir.build(sch.mod)["main"](*args, *outs)
    tir_mlir.build(mod)["main"](*args, *expected)
    for o, e in zip(outs, expected):
        np.testing.assert_allclose(o, e, rtol=1e-5, atol=1e-6)
