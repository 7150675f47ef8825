"""MultiLevelTiling with a structure of one tile level of a kind (TVM's max_pool_blocked test:
"SRS"): a loop of that kind is kept whole at its level, not split in one part."""

from schedule_check import check_numerics, parse

from tir_mlir import meta_schedule as ms

MATMUL = """
@T.prim_func
def main(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
    for i, j, k in T.grid(16, 16, 16):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
"""


def test_a_single_reduction_level_keeps_its_loop():
    mod = parse(MATMUL)
    rule = ms.schedule_rule.MultiLevelTiling(structure="SRS", max_innermost_factor=64)
    space = ms.space_generator.PostOrderApply(sch_rules=[rule], postprocs=[], mutator_probs={})
    (sketch,) = ms.generate_design_space(mod, "llvm", space=space, seed=0)
    trace = str(sketch.trace)
    assert trace.count("sample_perfect_tile(") == 2 and trace.count("sch.split(") == 2
    loops = [line.strip() for line in sketch.mod.script().splitlines() if "for " in line]
    assert loops[0].startswith("for i_0, j_0, k, i_1, j_1 in T.grid(")
    check_numerics(mod, sketch.mod, "main")
