"""Programs and schedules of rolling_buffer (tests/schedule/test_schedule_rolling_buffer.py runs them; the trace
tests replay them)."""

from shared_programs import CONV2D_PAD_C4_6X6 as CONV


ONE = """
@T.prim_func
def main(A: T.Buffer((18,), "float32"), C: T.Buffer((16,), "float32")):
    B = T.alloc_buffer((18,))
    for i in range(18):
        with T.block("B"):
            vi = T.axis.spatial(18, i)
            B[vi] = A[vi] * T.float32(2)
    for i, k in T.grid(16, 3):
        with T.block("C"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                C[vi] = T.float32(0)
            C[vi] = C[vi] + B[vi + vk]
"""


TWO = """
@T.prim_func
def main(A: T.Buffer((10, 18), "float32"), C: T.Buffer((8, 16), "float32")):
    B = T.alloc_buffer((10, 18))
    for i, j in T.grid(10, 18):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for i, j, k in T.grid(8, 16, 3):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + B[vi + vk, vj] + B[vi, vj + vk]
"""


POOL = """
@T.prim_func
def main(A: T.Buffer((12, 12), "int8"), C: T.Buffer((8, 8), "int8")):
    B = T.alloc_buffer([10, 10], dtype="int8")
    for i0, i1 in T.grid(2, 2):
        for ax0, ax1, ax2, ax3 in T.grid(6, 6, 3, 3):
            with T.block("B"):
                ax0_1 = T.axis.spatial(10, i0 * 4 + ax0)
                ax1_1 = T.axis.spatial(10, i1 * 4 + ax1)
                rv0, rv1 = T.axis.remap("RR", [ax2, ax3])
                with T.init():
                    B[ax0_1, ax1_1] = T.int8(-128)
                B[ax0_1, ax1_1] = T.max(B[ax0_1, ax1_1], A[ax0_1 + rv0, ax1_1 + rv1])
        for ax0, ax1, ax2, ax3 in T.grid(4, 4, 3, 3):
            with T.block("C"):
                ax0_1 = T.axis.spatial(8, i0 * 4 + ax0)
                ax1_1 = T.axis.spatial(8, i1 * 4 + ax1)
                rv0, rv1 = T.axis.remap("RR", [ax2, ax3])
                with T.init():
                    C[ax0_1, ax1_1] = T.int8(-128)
                C[ax0_1, ax1_1] = T.max(C[ax0_1, ax1_1], B[ax0_1 + rv0, ax1_1 + rv1])
"""


def _one(sch):
    i, _ = sch.get_loops(sch.get_block("C"))
    io, _ = sch.split(i, [4, 4])
    sch.compute_at(sch.get_block("B"), io)
    sch.rolling_buffer(sch.get_block("B"), 0)


def _two(sch):
    _, j, _ = sch.get_loops(sch.get_block("C"))
    jo, _ = sch.split(j, [4, 4])
    sch.compute_at(sch.get_block("B"), jo)
    sch.rolling_buffer(sch.get_block("B"), 0)


def _pool(sch):
    sch.rolling_buffer(sch.get_block("B"), 0)


def _conv_rows(split):
    def fn(sch):
        loops = sch.get_loops(sch.get_block("B"))
        y = sch.split(loops[2], [None, 2])[0] if split else loops[2]
        sch.compute_at(sch.get_block("Apad"), y)
        sch.rolling_buffer(sch.get_block("Apad"), 0)

    return fn


def _one_then_unroll_and_split(sch):
    _one(sch)
    sch.unroll(sch.get_loops(sch.get_block("C"))[-1])
    sch.split(sch.get_loops(sch.get_block("B"))[-1], [None, 2])


SCHEDULES = {
    "conv1d_after_compute_at": (ONE, _one),
    "two_overlapping_dims": (TWO, _two),
    "pool_2d_example": (POOL, _pool),
    "conv_padding_per_row": (CONV, _conv_rows(False)),
    "conv_padding_per_two_rows": (CONV, _conv_rows(True)),
    "then_unroll_and_split": (ONE, _one_then_unroll_and_split),
}
