"""Programs and schedules of loop_partition (tests/schedule/test_schedule_loop_partition.py runs them; the trace
tests replay them)."""

EW = """
@T.prim_func
def main(A: T.Buffer((8, 10), "float32"), B: T.Buffer((8, 10), "float32")):
    for i, j in T.grid(8, 10):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
"""


def inner(factors, **kw):
    def fn(sch):
        i, j = sch.get_loops(sch.get_block("B"))
        return sch.loop_partition(j, factors, **kw)

    return fn


SCHEDULES = {
    "none_in_the_middle": (EW, inner([None, 3, 4])),
    "rest_gets_a_part": (EW, inner([4, 4])),
    "unit_part": (EW, inner([1, None], preserve_unit_iters=False)),
}
