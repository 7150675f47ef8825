"""PostOrderApply visits as TVM's does: rule by rule (the first rule over every block, then the
second, ...), each over the original blocks from the last to the first; the blocks' handles
are got up front (in program order, the root last), as TVM's BlockCollector gets them."""

import tir_mlir.meta_schedule as ms
from schedule_check import check_numerics, parse

MM_RELU = """
@T.prim_func
def main(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32"), D: T.Buffer((16, 16), "float32")):
    C = T.alloc_buffer((16, 16))
    for i, j, k in T.grid(16, 16, 16):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0.0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
    for i, j in T.grid(16, 16):
        with T.block("D"):
            vi, vj = T.axis.remap("SS", [i, j])
            D[vi, vj] = T.max(C[vi, vj], T.float32(0.0))
"""


def _space(rules):
    return ms.generate_design_space(
        parse(MM_RELU), "llvm", sch_rules=rules, postprocs=[], mutator_probs={}, seed=0
    )


def test_rules_apply_one_after_the_other_over_all_blocks():
    visits = []

    def rule(tag):
        def apply(sch, block):
            visits.append((tag, sch.get(block).name))
            return [sch]

        return apply

    _space([rule("first"), rule("second")])
    assert visits == [("first", "D"), ("first", "C"), ("second", "D"), ("second", "C")]


def test_the_block_handles_are_got_up_front():
    (sch,) = _space([lambda sch, block: [sch]])
    assert [str(i.python()) for i in sch.trace.insts] == [
        'b0 = sch.get_block(name="C", func_name="main")',
        'b1 = sch.get_block(name="D", func_name="main")',
        'b2 = sch.get_block(name="root", func_name="main")',
    ]


def test_a_later_rule_sees_what_an_earlier_one_did():
    """AutoInline after a tiling rule: the relu is inlined into the tiled block's write-back
    cache (what TVM's tensor-core tests expect of [MultiLevelTilingTensorCore, AutoInline])."""

    def cache(sch, block):
        if sch.get(block).name == "C":
            sch.cache_write(block, 0, "global")
        return [sch]

    inline = ms.schedule_rule.AutoInline(
        into_producer=True,
        into_consumer=True,
        disallow_if_then_else=False,
        require_injective=False,
        require_ordered=False,
    )
    (sch,) = _space([cache, inline])
    text = sch.mod.script()
    assert 'T.block("D")' not in text
    assert "D[v0, v1] = T.max(C_global[v0, v1], T.float32(0.0))" in text, text
    check_numerics(parse(MM_RELU), sch.mod, "main")
