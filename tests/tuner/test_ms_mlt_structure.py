"""MultiLevelTiling with a structure of one tile level of a kind (TVM's max_pool_blocked test:
"SRS"): a loop of that kind is kept whole at its level, not split in one part."""

from schedule_check import check_numerics, parse

from workloads import matmul, mm_relu

import tir_mlir
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


def _mlt_sketches(text: str, target: str):
    rules = [
        r
        for r in ms.schedule_rule.create(target.split()[0])
        if type(r) is ms.schedule_rule.MultiLevelTiling
    ]
    space = ms.space_generator.PostOrderApply(sch_rules=rules, postprocs=[], mutator_probs={})
    return ms.generate_design_space(parse(text), target, space=space, seed=0)


def _block_attrs(text: str, block: str) -> str:
    lines = text.splitlines()
    start = next(k for k, line in enumerate(lines) if f'T.block("{block}")' in line)
    return next(line.strip() for line in lines[start:] if "T.block_attr(" in line)


# a cuda target as TVM's tags spell it (nvidia/geforce-rtx-2080): it names its thread limits
CUDA_TAG = "cuda -arch=sm_75 -max_threads_per_block=1024 -thread_warp_size=32"


def test_cuda_sketch_is_tvms_tile_loop_nest_and_read_reuse():
    """TVM's cuda sketch of a matmul: the block bounds its threads (a warp at least: 512x512
    outputs cover more than two warps; the target's 1024 at most), each input is cached for
    this block alone, its copy's loops fused into one and marked for a cooperative fetch of
    a float32 vector length (at most 4)."""
    (sketch,) = _mlt_sketches(matmul(512), CUDA_TAG)
    text, trace = sketch.mod.script(), str(sketch.trace)
    assert _block_attrs(text, "C") == (
        'T.block_attr({"meta_schedule.thread_extent_high_inclusive": 1024, '
        '"meta_schedule.thread_extent_low_inclusive": 32, '
        '"meta_schedule.tiling_structure": "SSSRRSRS"})'
    )
    assert trace.count('storage_scope="shared", consumer_blocks=[b0])') == 2
    assert trace.count("sch.sample_categorical(candidates=[1, 2, 3, 4], ") == 2
    assert text.count("for ax0_ax1_fused in range(") == 2
    # few outputs (64, two warps): no lower bound
    (small,) = _mlt_sketches(matmul(8, k=16), CUDA_TAG)
    assert '"meta_schedule.thread_extent_low_inclusive": 1,' in small.mod.script()
    # a plain "cuda" names no limits: no bounds (TVM's cuda target kind neither)
    (plain,) = _mlt_sketches(matmul(512), "cuda")
    assert "thread_extent" not in plain.mod.script()


def test_cuda_must_reuse_caches_the_result_even_before_an_elementwise_consumer():
    """reuse_write "must" (cuda): the result goes through a local cache, the relu after it
    stays a separate block (TVM's AddWriteReuse moves an existing write cache only for
    "may")."""
    (sketch,) = _mlt_sketches(mm_relu(64), "cuda")
    text = sketch.mod.script()
    assert 'Y_local = T.alloc_buffer((64, 64), scope="local")' in text
    assert 'with T.block("Y_local"):' in text and 'with T.block("C"):' in text


def test_cpu_may_reuse_moves_the_elementwise_consumer_instead_of_caching():
    """reuse_write "may" (llvm) with a relu consumer, which is already a write cache (it
    copies the result elementwise): the relu is computed under tile level 1, under level 2,
    or left where it is; no cache is added."""
    sketches = _mlt_sketches(mm_relu(16), "llvm")
    traces = [str(s.trace) for s in sketches]
    assert len(sketches) == 3 and not any("cache_write" in t for t in traces)
    assert sorted(t.count("sch.reverse_compute_at(") for t in traces) == [0, 1, 1]
    for s in sketches:
        check_numerics(parse(mm_relu(16)), s.mod, "main")


def test_a_write_cache_level_annotation_makes_write_reuse_a_must_at_those_levels():
    """`meta_schedule.write_cache_level` on the block (TVM's override of reuse_write): one
    sketch, the result cached and copied back under tile level 1."""
    sch = tir_mlir.Schedule(parse(matmul(16)))
    sch.annotate(sch.get_block("C"), "meta_schedule.write_cache_level", [1])
    rules = [
        r for r in ms.schedule_rule.create("llvm") if type(r) is ms.schedule_rule.MultiLevelTiling
    ]
    space = ms.space_generator.PostOrderApply(sch_rules=rules, postprocs=[], mutator_probs={})
    (sketch,) = ms.generate_design_space(sch.mod, "llvm", space=space, seed=0)
    trace = str(sketch.trace)
    assert 'cache_write(block=b0, write_buffer_index=0, storage_scope="global")' in trace
    assert trace.count("sch.reverse_compute_at(") == 1
    check_numerics(parse(matmul(16)), sketch.mod, "main")
