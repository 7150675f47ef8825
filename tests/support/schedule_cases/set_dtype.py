"""Programs and schedules of set_dtype (tests/schedule/test_schedule_set_dtype.py runs them; the trace
tests replay them)."""

SRC = """
@T.prim_func
def main(A: T.Buffer((8, 8), "float32"), C: T.Buffer((8, 8), "float32")):
    B = T.alloc_buffer((8, 8))
    for i, j in T.grid(8, 8):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for i, j in T.grid(8, 8):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] + T.float32(1)
"""


def set_dtype(dtype):
    return lambda sch: sch.unsafe_set_dtype(sch.get_block("B"), 0, dtype)
