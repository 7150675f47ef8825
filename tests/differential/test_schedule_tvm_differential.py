"""Schedules we had not seen, run in TVM 0.21 and in tir_mlir (tests/support/schedule_differential.py):
same accept/reject decision, TVM-equal result, same printed text and trace, same numbers.
Classic tutorial / TVM-test schedules first, then random sequences over all primitives."""

import pytest
import tvm_oracle

from schedule_differential import assert_agrees
from schedule_random import (
    KINDS,
    PROGRAM_NAMES,
    program,
    random_schedule,
)
from shared_programs import (
    CONV2D_PAD_C4_6X6 as CONV_PAD,
    MATMUL_16 as MATMUL,
    MM_RELU_16 as MM_RELU,
)

pytestmark = pytest.mark.tvm
tvm_oracle.import_tvm()

CHAIN = """
@T.prim_func
def main(A: T.Buffer((8, 8), "float32"), D: T.Buffer((8, 8), "float32")):
    B = T.alloc_buffer((8, 8))
    C = T.alloc_buffer((8, 8))
    for i, j in T.grid(8, 8):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for i, j in T.grid(8, 8):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] + T.float32(1)
    for i, j in T.grid(8, 8):
        with T.block("D"):
            vi, vj = T.axis.remap("SS", [i, j])
            D[vi, vj] = T.max(C[vi, vj], T.float32(0))
"""
CONV_S2 = """
@T.prim_func
def main(A: T.Buffer((1, 2, 9, 9), "float32"), W: T.Buffer((4, 2, 3, 3), "float32"), B: T.Buffer((1, 4, 4, 4), "float32")):
    Ac = T.alloc_buffer((1, 2, 9, 9))
    for n, c, h, w in T.grid(1, 2, 9, 9):
        with T.block("Ac"):
            vn, vc, vh, vw = T.axis.remap("SSSS", [n, c, h, w])
            Ac[vn, vc, vh, vw] = A[vn, vc, vh, vw] + T.float32(1)
    for n, f, y, x, rc, ry, rx in T.grid(1, 4, 4, 4, 2, 3, 3):
        with T.block("B"):
            vn, vf, vy, vx, vrc, vry, vrx = T.axis.remap("SSSSRRR", [n, f, y, x, rc, ry, rx])
            with T.init():
                B[vn, vf, vy, vx] = T.float32(0)
            B[vn, vf, vy, vx] = B[vn, vf, vy, vx] + Ac[vn, vrc, vy * 2 + vry, vx * 2 + vrx] * W[vf, vrc, vry, vrx]
"""
SOFTMAX = """
@T.prim_func
def main(A: T.Buffer((4, 16), "float32"), B: T.Buffer((4, 16), "float32")):
    maxelem = T.alloc_buffer((4,))
    expv = T.alloc_buffer((4, 16))
    expsum = T.alloc_buffer((4,))
    for i, k in T.grid(4, 16):
        with T.block("maxelem"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                maxelem[vi] = T.float32(-3.4028234663852886e38)
            maxelem[vi] = T.max(maxelem[vi], A[vi, vk])
    for i, j in T.grid(4, 16):
        with T.block("exp"):
            vi, vj = T.axis.remap("SS", [i, j])
            expv[vi, vj] = T.exp(A[vi, vj] - maxelem[vi])
    for i, k in T.grid(4, 16):
        with T.block("expsum"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                expsum[vi] = T.float32(0)
            expsum[vi] = expsum[vi] + expv[vi, vk]
    for i, j in T.grid(4, 16):
        with T.block("norm"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = expv[vi, vj] / expsum[vi]
"""
ROWSUM = """
@T.prim_func
def main(A: T.Buffer((8, 32), "float32"), B: T.Buffer((8,), "float32")):
    for i, k in T.grid(8, 32):
        with T.block("B"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                B[vi] = T.float32(0)
            B[vi] = B[vi] + A[vi, vk]
"""
ROWMAX = ROWSUM.replace("T.float32(0)", "T.float32(-3.4028234663852886e38)").replace(
    "B[vi] + A[vi, vk]", "T.max(B[vi], A[vi, vk])"
)


def _mm(sch):
    b = sch.get_block("C")
    return (b, *sch.get_loops(b))


def split_predicate(sch):
    _, i, j, k = _mm(sch)
    sch.split(i, factors=[None, 5])


def split_three(sch):
    _, i, j, k = _mm(sch)
    sch.split(j, factors=[2, None, 4])


def split_unit_preserve(sch):
    _, i, j, k = _mm(sch)
    sch.split(i, factors=[1, 16])


def split_unit_no_preserve(sch):
    _, i, j, k = _mm(sch)
    sch.split(i, factors=[1, 16, 1], preserve_unit_iters=False)


def split_disable_pred(sch):
    _, i, j, k = _mm(sch)
    sch.split(i, factors=[None, 3], disable_predication=True)


def fuse_split(sch):
    _, i, j, k = _mm(sch)
    f = sch.fuse(i, j)
    sch.split(f, factors=[None, 7])


def fuse_three(sch):
    _, i, j, k = _mm(sch)
    sch.fuse(i, j, k)


def reorder_many(sch):
    _, i, j, k = _mm(sch)
    i0, i1 = sch.split(i, factors=[4, 4])
    j0, j1 = sch.split(j, factors=[2, 8])
    k0, k1 = sch.split(k, factors=[None, 4])
    sch.reorder(k1, j1, i0, k0, i1, j0)


def reorder_not_chain(sch):
    b = sch.get_block("C")
    i, j = sch.get_loops(b)
    y = sch.get_block("Y")
    yi, yj, yk = sch.get_loops(y)
    sch.reorder(j, yk)


def reorder_dup(sch):
    _, i, j, k = _mm(sch)
    sch.reorder(i, i)


def fuse_not_adjacent(sch):
    _, i, j, k = _mm(sch)
    sch.fuse(i, k)


def parallel_reduction(sch):
    _, i, j, k = _mm(sch)
    sch.parallel(k)


def vectorize_reduction(sch):
    _, i, j, k = _mm(sch)
    sch.vectorize(k)


def bind_reduction(sch):
    _, i, j, k = _mm(sch)
    sch.bind(k, "threadIdx.x")


def unroll_reduction(sch):
    _, i, j, k = _mm(sch)
    sch.unroll(k)


def bind_gpu(sch):
    _, i, j, k = _mm(sch)
    i0, i1 = sch.split(i, factors=[None, 4])
    sch.bind(i0, "blockIdx.x")
    sch.bind(i1, "threadIdx.x")
    sch.unroll(k)


def annotate_loop_block(sch):
    b, i, j, k = _mm(sch)
    sch.annotate(i, "pragma_auto_unroll_max_step", 16)
    sch.annotate(b, "meta_schedule.tiling_structure", "SSRSRS")
    sch.unannotate(i, "pragma_auto_unroll_max_step")


def add_unit_loops(sch):
    b, i, j, k = _mm(sch)
    sch.add_unit_loop(b)
    sch.add_unit_loop(i)


def blitz(sch):
    """TensorIR blitz course: split j, reorder, reverse_compute_at the relu, decompose."""
    y = sch.get_block("Y")
    i, j, k = sch.get_loops(y)
    j0, j1 = sch.split(j, factors=[None, 4])
    sch.reorder(j0, k, j1)
    c = sch.get_block("C")
    sch.reverse_compute_at(c, j0)
    sch.decompose_reduction(y, k)


def blitz_vectorize(sch):
    blitz(sch)
    c = sch.get_block("C")
    ci, cj = sch.get_loops(c)[-2:]
    sch.vectorize(cj)
    sch.parallel(sch.get_loops(c)[0])


def compute_inline_chain(sch):
    sch.compute_inline(sch.get_block("B"))
    sch.compute_inline(sch.get_block("C"))


def reverse_inline_chain(sch):
    sch.reverse_compute_inline(sch.get_block("D"))
    sch.reverse_compute_inline(sch.get_block("C"))


def inline_output_rejected(sch):
    sch.compute_inline(sch.get_block("D"))


def inline_reduction_rejected(sch):
    sch.compute_inline(sch.get_block("Y"))


def compute_at_chain(sch):
    d = sch.get_block("D")
    i, j = sch.get_loops(d)
    sch.compute_at(sch.get_block("C"), j)
    sch.compute_at(sch.get_block("B"), j)


def compute_at_tiled(sch):
    d = sch.get_block("D")
    i, j = sch.get_loops(d)
    i0, i1 = sch.split(i, factors=[None, 4])
    sch.compute_at(sch.get_block("C"), i0)


def compute_at_index0(sch):
    d = sch.get_block("D")
    i, j = sch.get_loops(d)
    sch.compute_at(sch.get_block("C"), i)
    sch.compute_at(sch.get_block("B"), i, index=0)


def compute_at_index_m2(sch):
    d = sch.get_block("D")
    i, j = sch.get_loops(d)
    sch.compute_at(sch.get_block("C"), i)
    sch.compute_at(sch.get_block("B"), i, index=-2)


def compute_at_unit(sch):
    d = sch.get_block("D")
    i, j = sch.get_loops(d)
    sch.compute_at(sch.get_block("C"), j, preserve_unit_loops=True)


def reverse_compute_at_unit(sch):
    b = sch.get_block("B")
    i, j = sch.get_loops(b)
    sch.reverse_compute_at(sch.get_block("C"), j, preserve_unit_loops=True)


def conv_pad_compute_at(sch):
    b = sch.get_block("B")
    n, f, y, x, rc, ry, rx = sch.get_loops(b)
    sch.compute_at(sch.get_block("Apad"), x)


def conv_pad_compute_at_y(sch):
    b = sch.get_block("B")
    n, f, y, x, rc, ry, rx = sch.get_loops(b)
    sch.reorder(y, f)
    sch.compute_at(sch.get_block("Apad"), y)


def conv_s2_compute_at(sch):
    b = sch.get_block("B")
    n, f, y, x, rc, ry, rx = sch.get_loops(b)
    sch.compute_at(sch.get_block("Ac"), x)


def conv_s2_compute_at_y(sch):
    b = sch.get_block("B")
    n, f, y, x, rc, ry, rx = sch.get_loops(b)
    sch.compute_at(sch.get_block("Ac"), y)


def conv_pad_inline(sch):
    sch.compute_inline(sch.get_block("Apad"))


def compute_at_rejected_consumer_first(sch):
    c = sch.get_block("C")
    i, j = sch.get_loops(c)
    sch.compute_at(sch.get_block("Y"), j)
    y = sch.get_block("Y")
    sch.compute_at(sch.get_block("C"), sch.get_loops(y)[0])


def cache_read_write_cpu(sch):
    """GPU-style tiling on CPU: cache_write at the tile, cache_read of A at the k loop."""
    b, i, j, k = _mm(sch)
    i0, i1 = sch.split(i, factors=[None, 4])
    j0, j1 = sch.split(j, factors=[None, 4])
    sch.reorder(i0, j0, k, i1, j1)
    cw = sch.cache_write(b, 0, "local")
    sch.reverse_compute_at(cw, j0)
    ca = sch.cache_read(b, 0, "shared")
    sch.compute_at(ca, k)


def cache_read_only(sch):
    b, i, j, k = _mm(sch)
    sch.cache_read(b, 1, "global")


def cache_write_only(sch):
    b, i, j, k = _mm(sch)
    sch.cache_write(b, 0, "global")


def cpu_matmul(sch):
    """A real CPU schedule: tile, cache_write, reverse_compute_at, vectorize, parallel,
    decompose_reduction."""
    b, i, j, k = _mm(sch)
    i0, i1 = sch.split(i, factors=[None, 4])
    j0, j1 = sch.split(j, factors=[None, 8])
    k0, k1 = sch.split(k, factors=[None, 4])
    sch.reorder(i0, j0, k0, k1, i1, j1)
    cw = sch.cache_write(b, 0, "global")
    sch.reverse_compute_at(cw, j0)
    sch.vectorize(sch.get_loops(cw)[-1])
    f = sch.fuse(i0, j0)
    sch.parallel(f)
    sch.decompose_reduction(b, k0)


def rfactor_sum(sch):
    b = sch.get_block("B")
    i, k = sch.get_loops(b)
    k0, k1 = sch.split(k, factors=[None, 4])
    sch.rfactor(k1, 0)


def rfactor_max(sch):
    b = sch.get_block("B")
    i, k = sch.get_loops(b)
    k0, k1 = sch.split(k, factors=[4, None])
    sch.rfactor(k0, 1)


def rfactor_spatial_rejected(sch):
    b = sch.get_block("B")
    i, k = sch.get_loops(b)
    sch.rfactor(i, 0)


def decompose_after_tiling(sch):
    b, i, j, k = _mm(sch)
    i0, i1 = sch.split(i, factors=[None, 4])
    sch.reorder(i0, k, i1)
    sch.decompose_reduction(b, i1)


def decompose_outer(sch):
    b, i, j, k = _mm(sch)
    sch.decompose_reduction(b, i)


def blockize_inner(sch):
    b, i, j, k = _mm(sch)
    i0, i1 = sch.split(i, factors=[None, 4])
    j0, j1 = sch.split(j, factors=[None, 4])
    k0, k1 = sch.split(k, factors=[None, 4])
    sch.reorder(i0, j0, k0, i1, j1, k1)
    sch.blockize(i1)


def softmax_inline_at(sch):
    norm = sch.get_block("norm")
    i, j = sch.get_loops(norm)
    sch.compute_inline(sch.get_block("exp"))
    sch.compute_at(sch.get_block("expsum"), i)
    sch.compute_at(sch.get_block("maxelem"), i)
    sch.parallel(i)


def set_scope_transform(sch):
    y = sch.get_block("Y")
    sch.set_scope(y, 0, "local")
    sch.transform_layout(y, ("write", 0), lambda i, j: (j, i))


def transform_layout_split(sch):
    y = sch.get_block("Y")
    sch.transform_layout(y, ("write", 0), lambda i, j: (i // 4, j, i % 4))


NO_PRODUCER = CHAIN.replace(
    "C[vi, vj] = B[vi, vj] + T.float32(1)", "C[vi, vj] = A[vi, vj] + T.float32(1)"
)
POOL = program("maxpool2d")


def reverse_compute_at_no_producer(sch):
    """C reads only a parameter: TVM recomputes all of it under the loop."""
    i, j = sch.get_loops(sch.get_block("B"))
    sch.reverse_compute_at(sch.get_block("C"), i)


def compute_at_output_rejected(sch):
    i, j = sch.get_loops(sch.get_block("B"))
    sch.compute_at(sch.get_block("D"), j)


def _compute_at_split(factors, at):
    def fn(sch):
        loops = sch.split(sch.get_loops(sch.get_block("D"))[0], factors=factors)
        sch.compute_at(sch.get_block("C"), loops[at])

    return fn


def blockize_unit_iter(sch):
    sch.blockize(sch.get_loops(sch.get_block("pool"))[0])


def rfactor_whole_reduction(sch):
    """No reduction iter left in the rf block: a plain spatial block, no init."""
    b, i, j, k = _mm(sch)
    sch.rfactor(k, factor_axis=1)


def cache_read_self_updated(sch):
    """maxelem reads its own output: the cache goes after it, for the other readers."""
    sch.cache_read(sch.get_block("maxelem"), 0, "global")


def cache_read_input_first(sch):
    sch.cache_read(sch.get_block("B"), 1, "global")


def split_no_preserve_other_unit(sch):
    """preserve_unit_iters=False binds the block's other unit loops as constants too."""
    sch.split(sch.get_loops(sch.get_block("pool"))[4], factors=[None, 1], preserve_unit_iters=False)


def split_unused_unit_loop(sch):
    """The predicate of a split goes on a block that does not use the loop (it must still run
    once per original iteration)."""
    u = sch.add_unit_loop(sch.get_block("pool"))
    sch.split(u, factors=[None, 4])


def cache_write_under_shared_loop(sch):
    """The writer shares loop n with its reader: the copy back goes inside n, before B."""
    n = sch.get_loops(sch.get_block("B"))[0]
    sch.compute_at(sch.get_block("Apad"), n)
    sch.cache_write(sch.get_block("Apad"), 0, "global")


def split_annotated_rejected(sch):
    _, i, j, k = _mm(sch)
    sch.annotate(j, "pragma_auto_unroll_max_step", 4)
    sch.split(j, factors=[None, 4])


def fuse_bound_rejected(sch):
    _, i, j, k = _mm(sch)
    sch.bind(i, "blockIdx.x")
    sch.fuse(i, j)


def _blockize_where(split_loop, at):
    def fn(sch):
        b, i, j, k = _mm(sch)
        sch.split({"i": i, "j": j, "k": k}[split_loop], factors=[None, 5])
        loops = sch.get_loops(b)
        sch.blockize(loops[at])

    return fn


def cache_read_two_writers_rejected(sch):
    b, i, j, k = _mm(sch)
    sch.decompose_reduction(b, k)
    sch.cache_read(b, 0, "local")  # reads C, written by C_init and C_update


CASES = {
    "split_predicate": (MATMUL, split_predicate),
    "split_three": (MATMUL, split_three),
    "split_unit_preserve": (MATMUL, split_unit_preserve),
    "split_unit_no_preserve": (MATMUL, split_unit_no_preserve),
    # disable_predication on a non-dividing factor runs past the loop, in TVM too
    "split_disable_pred": (MATMUL, split_disable_pred, {"numerics": False}),
    "fuse_split": (MATMUL, fuse_split),
    "fuse_three": (MATMUL, fuse_three),
    "reorder_many": (MATMUL, reorder_many),
    "reorder_not_chain": (MM_RELU, reorder_not_chain),
    "reorder_dup": (MATMUL, reorder_dup),
    "fuse_not_adjacent": (MATMUL, fuse_not_adjacent),
    "parallel_reduction": (MATMUL, parallel_reduction),
    "vectorize_reduction": (MATMUL, vectorize_reduction),
    "bind_reduction": (MATMUL, bind_reduction),
    "unroll_reduction": (MATMUL, unroll_reduction),
    "bind_gpu": (MATMUL, bind_gpu),
    "annotate": (MATMUL, annotate_loop_block),
    "add_unit_loops": (MATMUL, add_unit_loops),
    "blitz": (MM_RELU, blitz),
    "blitz_vectorize": (MM_RELU, blitz_vectorize),
    "compute_inline_chain": (CHAIN, compute_inline_chain),
    "reverse_inline_chain": (CHAIN, reverse_inline_chain),
    "inline_output_rejected": (CHAIN, inline_output_rejected),
    "inline_reduction_rejected": (MM_RELU, inline_reduction_rejected),
    "compute_at_chain": (CHAIN, compute_at_chain),
    "compute_at_tiled": (CHAIN, compute_at_tiled),
    "compute_at_index0": (CHAIN, compute_at_index0),
    "compute_at_index_m2": (CHAIN, compute_at_index_m2),
    "compute_at_unit": (CHAIN, compute_at_unit),
    "reverse_compute_at_unit": (CHAIN, reverse_compute_at_unit),
    "conv_pad_compute_at": (CONV_PAD, conv_pad_compute_at),
    "conv_pad_compute_at_y": (CONV_PAD, conv_pad_compute_at_y),
    "conv_s2_compute_at": (CONV_S2, conv_s2_compute_at),
    "conv_s2_compute_at_y": (CONV_S2, conv_s2_compute_at_y),
    "conv_pad_inline": (CONV_PAD, conv_pad_inline),
    "compute_at_rejected_consumer_first": (MM_RELU, compute_at_rejected_consumer_first),
    "cache_read_write_cpu": (MATMUL, cache_read_write_cpu),
    "cache_read_only": (MATMUL, cache_read_only),
    "cache_write_only": (MATMUL, cache_write_only),
    "cpu_matmul": (MATMUL, cpu_matmul),
    "rfactor_sum": (ROWSUM, rfactor_sum),
    "rfactor_max": (ROWMAX, rfactor_max),
    "rfactor_spatial_rejected": (ROWSUM, rfactor_spatial_rejected),
    "decompose_after_tiling": (MATMUL, decompose_after_tiling),
    "decompose_outer": (MATMUL, decompose_outer),
    "blockize_inner": (MATMUL, blockize_inner),
    "softmax_inline_at": (SOFTMAX, softmax_inline_at),
    "set_scope_transform": (MM_RELU, set_scope_transform),
    "transform_layout_split": (MM_RELU, transform_layout_split),
    "reverse_compute_at_no_producer": (NO_PRODUCER, reverse_compute_at_no_producer),
    "compute_at_output_rejected": (NO_PRODUCER, compute_at_output_rejected),
    "compute_at_clipped_const": (CHAIN, _compute_at_split([None, 16], 0)),
    "compute_at_where_unclipped": (CHAIN, _compute_at_split([2, None, 8], 1)),
    "compute_at_where_divided": (CHAIN, _compute_at_split([3, None], 0)),
    "compute_at_where_split": (CHAIN, _compute_at_split([None, 3], 0)),
    "blockize_unit_iter": (POOL, blockize_unit_iter),
    "rfactor_whole_reduction": (MATMUL, rfactor_whole_reduction),
    "cache_read_self_updated": (SOFTMAX, cache_read_self_updated),
    "cache_read_input_first": (CONV_PAD, cache_read_input_first),
    "split_no_preserve_other_unit": (POOL, split_no_preserve_other_unit),
    "split_unused_unit_loop": (POOL, split_unused_unit_loop),
    "cache_write_under_shared_loop": (CONV_PAD, cache_write_under_shared_loop),
    "split_annotated_rejected": (MATMUL, split_annotated_rejected),
    "fuse_bound_rejected": (MATMUL, fuse_bound_rejected),
    "blockize_where_outer": (MATMUL, _blockize_where("i", 2)),  # T.where on C_o
    "blockize_where_inner": (MATMUL, _blockize_where("j", 0)),  # on C and C_init
    "blockize_where_mixed_rejected": (MATMUL, _blockize_where("i", 1)),
    "cache_read_two_writers_rejected": (MATMUL, cache_read_two_writers_rejected),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_classic_schedule(name):
    src, fn, *kw = CASES[name]
    assert_agrees(src, fn, **(kw[0] if kw else {}))


# --- random schedules over all primitives (tests/support/schedule_random.py; the long seed loop is
# tests/support/schedule_fuzz.py) ----------------------------------------------------------------------
from hypothesis import HealthCheck, Phase, given, settings, strategies as st  # noqa: E402

STEP = st.tuples(
    st.sampled_from(KINDS),
    st.integers(0, 7),
    st.integers(0, 7),
    st.integers(0, 7),
    st.integers(0, 7),
    st.sampled_from([None, 2, 3, 4, 8, 16]),
)


@settings(
    max_examples=45,
    deadline=None,
    derandomize=True,
    database=None,
    phases=[Phase.explicit, Phase.generate],  # no shrinking: keep the suite fast
    suppress_health_check=[HealthCheck.too_slow],
)
@given(name=st.sampled_from(PROGRAM_NAMES), steps=st.lists(STEP, min_size=1, max_size=4))
def test_random_schedules_agree_with_tvm(name, steps):
    assert_agrees(program(name), random_schedule(program(name), steps))
