"""Programs and schedules of merge (tests/schedule/test_schedule_merge.py runs them; the trace
tests replay them)."""

THREE = """
@T.prim_func
def main(A: T.Buffer((8, 8), "float32"), C: T.Buffer((8, 8), "float32"), D: T.Buffer((8, 8), "float32")):
    B = T.alloc_buffer((8, 8))
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
            D[vi, vj] = B[SHIFT, vj] + T.float32(1)
"""


CHAIN = THREE.replace("SHIFT", "vi")


def loops_of(sch, *names, level=0):
    return [sch.get_loops(sch.get_block(n))[level] for n in names]


def merge(*names, level=0):
    return lambda sch: sch.merge(*loops_of(sch, *names, level=level))


SCHEDULES = {
    "first_two": (CHAIN, merge("B", "C")),
    "last_two_reading_the_same_slice": (CHAIN, merge("C", "D")),
}
