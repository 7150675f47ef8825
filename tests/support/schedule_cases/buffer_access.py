"""Programs and schedules of buffer_access (tests/schedule/test_schedule_buffer_access.py runs them; the trace
tests replay them)."""

SRC = """
@T.prim_func
def main(A: T.Buffer((128, 128), "float32"), C: T.Buffer((128, 128), "float32")):
    B = T.alloc_buffer((128, 128))
    for i, j in T.grid(128, 128):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for i, j in T.grid(128, 128):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] + A[vi, vj]
"""


def ann(block, index, kind, fn):
    return lambda sch: sch.annotate_buffer_access(sch.get_block(block), index, kind, fn)


def hide(block, kind, indices):
    return lambda sch: sch.unsafe_hide_buffer_access(sch.get_block(block), kind, indices)


def _both_kinds(sch):
    b = sch.get_block("B")
    sch.annotate_buffer_access(b, 0, "read", lambda vi, vj: ((vi - 1, vi + 1), (vj - 1, vj + 1)))
    sch.annotate_buffer_access(b, 0, "write", lambda vi, vj: (vi, (vj, vj + 4)))


def _then_split(sch):
    c = sch.get_block("C")
    sch.annotate_buffer_access(c, 1, "read", lambda vi, vj: ((vi // 2, vi // 2 + 3), vj * 2 + 1))
    sch.split(sch.get_loops(c)[1], [None, 4])
    sch.unsafe_hide_buffer_access(c, "read", [0])


SCHEDULES = {
    "read_window": (SRC, ann("B", 0, "read", lambda vi, vj: ((vi - 1, vi + 1), (vj - 1, vj + 1)))),
    "read_and_write": (SRC, _both_kinds),
    "constant_range": (SRC, ann("C", 0, "read", lambda vi, vj: ((0, 128), vj))),
    "second_read_then_split_and_hide": (SRC, _then_split),
    "hide_read": (SRC, hide("C", "read", [0])),
    "hide_two_and_repeat": (SRC, hide("C", "read", [1, 0, 1])),
    "hide_write": (SRC, hide("B", "write", [0])),
    "hide_nothing": (SRC, hide("B", "read", [])),
}
