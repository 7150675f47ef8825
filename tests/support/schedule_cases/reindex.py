"""Programs and schedules of reindex (tests/schedule/test_schedule_reindex.py runs them; the trace
tests replay them)."""

from shared_programs import CONV2D_PAD_C4_6X6 as CONV, MATMUL_16 as MATMUL


TWO = """
@T.prim_func
def main(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
    D = T.alloc_buffer((16, 16))
    for i, j in T.grid(16, 16):
        with T.block("D"):
            vi, vj = T.axis.remap("SS", [i, j])
            D[vi, vj] = A[vi, vj] + A[vj, vi]
    for i, j in T.grid(16, 16):
        with T.block("E"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = D[vi, vj] + B[vi // 2, vj] + B[vi, 0]
"""


def reindex(name, buffer):
    return lambda sch: sch.reindex(sch.get_block(name), buffer)


def _after_split(sch):
    b = sch.get_block("C")
    i, j, k = sch.get_loops(b)
    sch.split(k, [None, 4])
    sch.reindex(b, ("write", 0))
    sch.reindex(b, ("read", 1))


SCHEDULES = {
    "matmul_write": (MATMUL, reindex("C", ("write", 0))),
    "matmul_read_transposed": (MATMUL, reindex("C", ("read", 1))),
    "matmul_by_name": (MATMUL, reindex("C", "A")),
    "matmul_after_split": (MATMUL, _after_split),
    "conv_read_im2col": (CONV, reindex("B", ("read", 0))),
    "conv_write": (CONV, reindex("B", ("write", 0))),
    "conv_weights": (CONV, reindex("B", ("read", 1))),
    "padding_block": (CONV, reindex("Apad", ("write", 0))),
    "elementwise_read": (TWO, reindex("E", ("read", 0))),
    "elementwise_write": (TWO, reindex("E", "C")),
}
