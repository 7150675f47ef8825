"""AutoBind follows TVM's BindBlockThreadIdx: a block without spatial loops gets a unit
loop bound to blockIdx.x x threadIdx.x, a single thread-count candidate is not sampled, and
only an extent past max_threadblocks x the max threads per block is split in three (the
rest a serial loop inside the bound ones)."""

import tir_mlir.meta_schedule as ms
from schedule_check import parse
from tir_mlir.meta_schedule.tune_context import TuneContext

TARGET = "cuda -max_threads_per_block=1024 -max_num_threads=1024 -thread_warp_size=32"

ZERO_DIM = """
@T.prim_func
def main(A: T.Buffer((), "float32"), B: T.Buffer((), "float32"), C: T.Buffer((), "float32")):
    with T.block("C"):
        vi = T.axis.spatial(1, 0)
        C[()] = A[()] + B[()]
"""

REDUCTION_ONLY = """
@T.prim_func
def main(A: T.Buffer((2,), "float32"), C: T.Buffer((), "float32")):
    for i0 in range(2):
        with T.block("C"):
            k0 = T.axis.reduce(2, i0)
            with T.init():
                C[()] = T.float32(1.0)
            C[()] = T.min(C[()], A[k0])
"""

ADD = """
@T.prim_func
def main(A: T.Buffer(({n},), "float32"), B: T.Buffer(({n},), "float32")):
    for i in range({n}):
        with T.block("B"):
            vi = T.axis.spatial({n}, i)
            B[vi] = A[vi] + T.float32(1.0)
"""


def _sketch(text, **kwargs):
    gen = ms.space_generator.PostOrderApply(
        sch_rules=[ms.schedule_rule.AutoBind(**kwargs)], postprocs=[], mutator_probs={}
    )
    (sch,) = TuneContext(parse(text), TARGET, space_generator=gen).generate_design_space()
    return sch


def test_no_spatial_loop_gets_a_bound_unit_loop():
    for text in (ZERO_DIM, REDUCTION_ONLY):
        sch = _sketch(text)
        script = sch.mod.script()
        assert 'in T.thread_binding(1, thread="blockIdx.x"):' in script
        assert 'in T.thread_binding(1, thread="threadIdx.x"):' in script
        assert "sample_categorical" not in str(sch.trace)  # no thread count fits: 1 itself


def test_one_thread_candidate_is_not_sampled():
    sch = _sketch(ADD.format(n=48))
    # 48 threads at most: only 32 of TVM's counts fits, taken without a sample
    assert "factors=[None, 32]" in str(sch.trace)
    assert "sample_categorical" not in str(sch.trace)


def test_three_way_split_only_past_blocks_times_threads():
    small = _sketch(ADD.format(n=4096), max_threadblocks=4)
    assert "sample_categorical" in str(small.trace)  # 4096 <= 4 x 1024: two-way
    big = _sketch(ADD.format(n=8192), max_threadblocks=4)
    script = big.mod.script()
    assert 'for i_1 in T.thread_binding(4, thread="blockIdx.x"):' in script
    assert 'for i_2 in T.thread_binding(1024, thread="threadIdx.x"):' in script
    assert "for i_0 in range(2):" in script  # the rest, serial, inside the bound loops
    assert script.index("i_2 in T.thread_binding") < script.index("for i_0 in range(2)")
