"""TVM's root block in the tuner: `get_block("root")` is the function body, its annotations
live on the function and print as TVM prints them; ParallelizeVectorizeUnroll annotates it
(as TVM's rule does), RewriteParallelVectorizeUnroll applies them to the root's child
blocks, and MutateParallel picks another parallel plan with TVM's algorithm."""

import random

import pytest

import tir_mlir.meta_schedule as ms
from schedule_check import check_numerics, check_replay, parse
from tir_mlir import Schedule, ScheduleError
from workloads import matmul

# TVM 0.21's print of a root block with annotations (T.reads/T.writes included)
ANNOTATED = """# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((8, 16), "float32"), B: T.Buffer((8,), "float32")):
    with T.block("root"):
        T.reads()
        T.writes()
        T.block_attr({"meta_schedule.parallel": 16, "meta_schedule.unroll_explicit": 64})
        C = T.alloc_buffer((8,))
        for i, k in T.grid(8, 16):
            with T.block("C"):
                vi, vk = T.axis.remap("SR", [i, k])
                T.reads(A[vi, vk])
                T.writes(C[vi])
                with T.init():
                    C[vi] = T.float32(0.0)
                C[vi] = C[vi] + A[vi, vk]
        for i in range(8):
            with T.block("B"):
                vi = T.axis.spatial(8, i)
                T.reads(C[vi])
                T.writes(B[vi])
                B[vi] = C[vi] * T.float32(2.0)"""


# the same program without the root's annotations
PLAIN = """
@T.prim_func
def main(A: T.Buffer((8, 16), "float32"), B: T.Buffer((8,), "float32")):
    C = T.alloc_buffer((8,))
    for i, k in T.grid(8, 16):
        with T.block("C"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                C[vi] = T.float32(0.0)
            C[vi] = C[vi] + A[vi, vk]
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            B[vi] = C[vi] * T.float32(2.0)
"""

SPATIAL = """
@T.prim_func
def main(A: T.Buffer((8, 16), "float32"), B: T.Buffer((8,), "float32")):
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            B[vi] = A[vi, 0] * T.float32(2.0)
"""


def test_annotated_root_parses_and_prints_as_tvm():
    mod = parse(ANNOTATED)
    assert mod.script() == ANNOTATED
    sch = Schedule(mod)
    root = sch.get_block("root")
    assert sch.get(root).annotations == {
        "meta_schedule.parallel": 16,
        "meta_schedule.unroll_explicit": 64,
    }
    assert [sch.get(b).name_hint for b in sch.get_child_blocks(root)] == ["C", "B"]
    sch.unannotate(root, "meta_schedule.parallel")
    sch.unannotate(root, "meta_schedule.unroll_explicit")
    text = sch.mod.script()
    assert '    # with T.block("root"):\n    C = T.alloc_buffer((8,))' in text
    assert "T.block_attr" not in text


def test_annotate_the_root_replays_and_runs():
    mod = parse(matmul(32))
    sch = Schedule(mod)
    root = sch.get_block("root")
    sch.annotate(root, "meta_schedule.vectorize", 64)
    assert 'T.block_attr({"meta_schedule.vectorize": 64})' in sch.mod.script()
    with pytest.raises(ScheduleError, match="cannot find annotation key"):
        sch.unannotate(root, "meta_schedule.parallel")
    check_replay(sch, mod)
    check_numerics(mod, sch.mod, "main")  # the lowering ignores the root's hints


def test_rule_annotates_the_root_and_postproc_applies_it_to_each_child():
    mod = parse(PLAIN)
    rule = ms.schedule_rule.ParallelizeVectorizeUnroll(
        max_jobs_per_core=4, max_vectorize_extent=8, unroll_max_steps=[0, 16]
    )
    space = ms.space_generator.PostOrderApply(sch_rules=[rule], postprocs=[], mutator_probs={})
    (sch,) = ms.generate_design_space(mod, "llvm -num-cores=2", space=space, seed=0)
    trace = str(sch.trace)
    assert 'b2 = sch.get_block(name="root", func_name="main")' in trace
    assert 'ann_key="meta_schedule.parallel", ann_val=8' in trace
    assert 'sch.annotate(block_or_loop=b2, ann_key="meta_schedule.vectorize", ann_val=8)' in trace
    assert trace.count("sch.annotate(") == 3  # nothing on the blocks C and B
    sch.enter_postproc()
    assert ms.postproc.RewriteParallelVectorizeUnroll().apply(sch)
    text = sch.mod.script()
    assert "meta_schedule" not in text and "T.block_attr" not in text
    # each child block: C's spatial loop parallel with the unroll pragma (it reduces), B's
    # only loop vectorized (TVM prefers vectorizing to parallelizing the same loop)
    assert (
        'for i in T.parallel(8, annotations={"pragma_auto_unroll_max_step": 16, '
        '"pragma_unroll_explicit": 1}):'
    ) in text
    assert "for i in T.vectorized(8):" in text
    check_numerics(mod, sch.mod, "main")


def test_spatial_function_gets_no_unroll_on_the_root():
    mod = parse(SPATIAL)
    rule = ms.schedule_rule.ParallelizeVectorizeUnroll(
        max_jobs_per_core=-1, max_vectorize_extent=-1, unroll_max_steps=[0, 16, 64]
    )
    space = ms.space_generator.PostOrderApply(sch_rules=[rule], postprocs=[], mutator_probs={})
    (sch,) = ms.generate_design_space(mod, "llvm -num-cores=2", space=space, seed=0)
    assert "sample_categorical" not in str(sch.trace)
    assert "annotate" not in str(sch.trace)


def _tiled_matmul_with_parallel(ann_val):
    """TVM's test_mutate_parallel_matmul schedule: 512 matmul tiled [4, 32, 4, 1] x
    [8, 4, 8, 2] x [512, 1], a cache_write at the second j tile, the root annotated."""
    mod = parse(matmul(512))
    sch = Schedule(mod)
    c = sch.get_block("C")
    root = sch.get_block("root")
    cw = sch.cache_write(c, 0, "global")
    i, j, k = sch.get_loops(c)
    i0, i1, i2, i3 = sch.split(i, [4, 32, 4, 1])
    j0, j1, j2, j3 = sch.split(j, [8, 4, 8, 2])
    k0, k1 = sch.split(k, [512, 1])
    sch.reorder(i0, j0, i1, j1, k0, i2, j2, k1, i3, j3)
    sch.reverse_compute_at(cw, j1, preserve_unit_loops=True)
    sch.annotate(root, "meta_schedule.parallel", ann_val)
    return mod, sch


class _Context:
    def __init__(self, mod, target):
        self.mod, self.target = mod, ms.target.Target(target)


def test_mutate_parallel_picks_the_other_plans_as_tvm():
    mod, sch = _tiled_matmul_with_parallel(64)
    mutator = ms.mutator.MutateParallel(max_jobs_per_core=256)
    mutator.initialize_with_tune_context(_Context(mod, "llvm -num-cores=16"))
    seen = set()
    for seed in range(60):
        trace = mutator.apply(sch.trace, random.Random(seed))
        (ann,) = [i for i in trace.insts if i.name == "annotate"]
        seen.add(ann.args["ann_val"])
    # the products of the outer spatial extents 4, 8, 32, 4 (limit 16 x 256 = 4096): 64
    # fuses the same three loops as 1024, so the plans left are 4, 32 and 4096 (TVM's answer)
    assert seen == {4, 32, 4096}


def test_mutate_parallel_without_the_task_module_is_none():
    _, sch = _tiled_matmul_with_parallel(64)
    assert ms.mutator.MutateParallel(16).apply(sch.trace, 0) is None


ADD = """
@T.prim_func
def main(A: T.Buffer((1, 8, 56, 56, 32), "uint8"), B: T.Buffer((1, 8, 56, 56, 32), "uint8"),
         C: T.Buffer((1, 8, 56, 56, 32), "uint8")):
    for n, c0, h, w, c1 in T.grid(1, 8, 56, 56, 32):
        with T.block("add"):
            v0, v1, v2, v3, v4 = T.axis.remap("SSSSS", [n, c0, h, w, c1])
            C[v0, v1, v2, v3, v4] = A[v0, v1, v2, v3, v4] + B[v0, v1, v2, v3, v4]
"""


def test_contiguous_nest_is_fused_split_parallel_and_vectorized_as_tvm():
    """TVM's test_parallel_vectorize_add: every loop spatial and every access contiguous over
    the nest, so all loops fuse and split by the vector limit (6272 jobs of 128 lanes)."""
    mod = parse(ADD)
    sch = Schedule(mod)
    root = sch.get_block("root")
    sch.annotate(root, "meta_schedule.parallel", 64)
    sch.annotate(root, "meta_schedule.vectorize", 128)
    sch.enter_postproc()
    assert ms.postproc.RewriteParallelVectorizeUnroll().apply(sch)
    text = sch.mod.script()
    assert "for n_c0_h_w_c1_fused_0 in T.parallel(6272):" in text
    assert "for n_c0_h_w_c1_fused_1 in T.vectorized(128):" in text
    check_numerics(mod, sch.mod, "main")


def test_strided_access_keeps_the_parallel_prefix():
    """A transposed read is not contiguous over the nest: TVM's prefix rule applies."""
    mod = parse(ADD.replace("A[v0, v1, v2, v3, v4]", "A[v0, v1, v3, v2, v4]"))
    sch = Schedule(mod)
    root = sch.get_block("root")
    sch.annotate(root, "meta_schedule.parallel", 64)
    sch.annotate(root, "meta_schedule.vectorize", 128)
    sch.enter_postproc()
    assert ms.postproc.RewriteParallelVectorizeUnroll().apply(sch)
    text = sch.mod.script()
    assert "for n_c0_h_fused in T.parallel(448):" in text
    assert "for c1 in T.vectorized(32):" in text
    check_numerics(mod, sch.mod, "main")
