"""Random sequences of schedule primitives (loop primitives, and the block/buffer primitives:
compute_at, inlining, caches, rfactor, ...) on matmul, conv2d and softmax: every accepted schedule
computes the numbers of the unscheduled program (both JIT-compiled, bounds-checked); every rejected
primitive leaves the module exactly as it was. Derandomized (fixed seed) so failures replay."""

import numpy as np
from hypothesis import HealthCheck, given, settings, strategies as st

from schedule_check import random_args, run
from shared_programs import CONV2D_C2_6X6 as CONV
from tir_mlir import Schedule, ScheduleError, parse
from workloads import matmul, mm_relu

MATMUL = matmul(8, k=12)
SOFTMAX = """
@T.prim_func
def main(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4, 8), "float32")):
    maxelem = T.alloc_buffer((4,))
    expv = T.alloc_buffer((4, 8))
    expsum = T.alloc_buffer((4,))
    for i, k in T.grid(4, 8):
        with T.block("maxelem"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                maxelem[vi] = T.float32(-3.4028234663852886e38)
            maxelem[vi] = T.max(maxelem[vi], A[vi, vk])
    for i, j in T.grid(4, 8):
        with T.block("exp"):
            vi, vj = T.axis.remap("SS", [i, j])
            expv[vi, vj] = T.exp(A[vi, vj] - maxelem[vi])
    for i, k in T.grid(4, 8):
        with T.block("expsum"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                expsum[vi] = T.float32(0)
            expsum[vi] = expsum[vi] + expv[vi, vk]
    for i, j in T.grid(4, 8):
        with T.block("norm"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = expv[vi, vj] / expsum[vi]
"""
MM_RELU = mm_relu(8, k=12)
CONV_PAD = """
@T.prim_func
def main(A: T.Buffer((1, 2, 4, 4), "float32"), W: T.Buffer((3, 2, 3, 3), "float32"), B: T.Buffer((1, 3, 4, 4), "float32")):
    Apad = T.alloc_buffer((1, 2, 6, 6))
    for n, c, h, w in T.grid(1, 2, 6, 6):
        with T.block("Apad"):
            vn, vc, vh, vw = T.axis.remap("SSSS", [n, c, h, w])
            Apad[vn, vc, vh, vw] = T.if_then_else(1 <= vh and vh < 5 and 1 <= vw and vw < 5, A[vn, vc, vh - 1, vw - 1], T.float32(0))
    for n, f, y, x, rc, ry, rx in T.grid(1, 3, 4, 4, 2, 3, 3):
        with T.block("conv"):
            vn, vf, vy, vx, vc, vry, vrx = T.axis.remap("SSSSRRR", [n, f, y, x, rc, ry, rx])
            with T.init():
                B[vn, vf, vy, vx] = T.float32(0)
            B[vn, vf, vy, vx] = B[vn, vf, vy, vx] + Apad[vn, vc, vy + vry, vx + vrx] * W[vf, vc, vry, vrx]
"""
PROGRAMS = {
    "matmul": (MATMUL, ["C"]),
    "conv2d": (CONV, ["conv"]),
    "softmax": (SOFTMAX, ["maxelem", "exp", "expsum", "norm"]),
    "mm_relu": (MM_RELU, ["Y", "C"]),
    "conv2d_pad": (CONV_PAD, ["Apad", "conv"]),
}
_MODS = {}

LOOP_PRIMITIVES = [
    "split",
    "fuse",
    "reorder",
    "parallel",
    "vectorize",
    "unroll",
    "annotate",
    "add_unit_loop",
]
BLOCK_PRIMITIVES = [
    "compute_at",
    "reverse_compute_at",
    "compute_inline",
    "reverse_compute_inline",
    "cache_read",
    "cache_write",
    "rfactor",
    "decompose_reduction",
    "blockize",
    "storage_align",
    "transform_layout",
    "compute_root",
]
# (primitive, block index, loop index a, loop index b / other block index, split factor)
STEP = st.tuples(
    st.sampled_from(LOOP_PRIMITIVES + BLOCK_PRIMITIVES),
    st.integers(0, 3),
    st.integers(0, 7),
    st.integers(0, 6),
    st.sampled_from([None, 2, 3, 4]),
)


def apply(sch, blocks, step):
    """Apply one random primitive; returns False when it was rejected (module unchanged)."""
    kind, bi, a, b, factor = step
    names = [n for n in blocks if _has_block(sch, n)]
    if not names:
        return True
    blocks = names
    block = sch.get_block(blocks[bi % len(blocks)])
    loops = sch.get_loops(block)
    if not loops:
        return True
    la, lb = loops[a % len(loops)], loops[b % len(loops)]
    other = sch.get_block(blocks[b % len(blocks)])
    other_loops = sch.get_loops(other)
    lo = other_loops[a % len(other_loops)] if other_loops else la
    before = sch.mod.mlir()  # after the queries: they add tir.sid attributes
    try:
        if kind in BLOCK_PRIMITIVES:
            _block_primitive(sch, kind, block, la, lo, b)
        else:
            _primitive(sch, kind, block, la, lb, b, factor)
    except ScheduleError:
        assert sch.mod.mlir() == before
        return False
    return True


def _has_block(sch, name):
    """Blocks can disappear (compute_inline) or appear (cache_read) along a schedule."""
    try:
        sch.get_block(name)
        return True
    except ScheduleError:
        return False


def _primitive(sch, kind, block, la, lb, b, factor):
    if kind == "split":
        sch.split(la, factors=[None, factor or 2] if b % 2 else [factor or 3, None])
    elif kind == "fuse":
        sch.fuse(la, lb)
    elif kind == "reorder":
        sch.reorder(lb, la)
    elif kind == "annotate":
        sch.annotate(la, "pragma_auto_unroll_max_step", 4)
    elif kind == "add_unit_loop":
        sch.add_unit_loop(block if b % 2 else la)
    else:
        getattr(sch, kind)(la)


def _block_primitive(sch, kind, block, loop, other_loop, b):
    """`other_loop` is a loop of another (or the same) block: the compute_at targets."""
    if kind in ("compute_at", "reverse_compute_at"):
        getattr(sch, kind)(block, other_loop, preserve_unit_loops=bool(b % 2))
    elif kind in ("cache_read", "cache_write"):
        getattr(sch, kind)(block, b % 2, "local")
    elif kind == "rfactor":
        sch.rfactor(loop, factor_axis=0)
    elif kind == "decompose_reduction":
        sch.decompose_reduction(block, loop)
    elif kind == "blockize":
        sch.blockize(loop)
    elif kind == "storage_align":
        sch.storage_align(block, 0, 0, 4, b % 4)
    elif kind == "transform_layout":
        sch.transform_layout(block, ("write", 0), lambda *ax: tuple(reversed(ax)))
    else:
        getattr(sch, kind)(block)


@settings(
    max_examples=80, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
@given(program=st.sampled_from(sorted(PROGRAMS)), steps=st.lists(STEP, min_size=1, max_size=5))
def test_random_loop_schedules(program, steps):
    src, blocks = PROGRAMS[program]
    mod = _MODS.setdefault(program, parse(src))
    sch = Schedule(mod)
    for step in steps:
        apply(sch, blocks, step)
    args = random_args(mod, "main")
    # The JIT checks the rewrites and the lowering of what they produce (T.where with T.init,
    # parallel loops around reductions, unroll pragmas).
    for x, y in zip(run(mod, "main", args), run(sch.mod, "main", args)):
        np.testing.assert_allclose(x, y, rtol=1e-4, atol=1e-4)
