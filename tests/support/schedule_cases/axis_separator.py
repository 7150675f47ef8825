"""Programs and schedules of axis_separator (tests/schedule/test_schedule_axis_separator.py runs them; the trace
tests replay them)."""

from shared_programs import MM_RELU_16


KEYWORDS = """
@T.prim_func
def main(A: T.Buffer((8, 8), "float32", offset_factor=16), b: T.handle, C: T.Buffer((8, 4, 2), "float32", axis_separators=[1])):
    B = T.match_buffer(b, (8, 8), "int8", offset_factor=1, axis_separators=[1])
    D = T.alloc_buffer((8, 8), axis_separators=[1])
    E = T.alloc_buffer((8, 8))
    for i, j in T.grid(8, 8):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            D[vi, vj] = A[vi, vj] * T.float32(2.0)
            E[vi, vj] = T.Cast("float32", B[vi, vj]) * T.float32(2.0)
            C[vi, vj // 2, vj % 2] = D[vi, vj] + E[vi, vj]
"""


PLAIN = KEYWORDS.replace(", axis_separators=[1]", "")


def sep(block, buffer, seps):
    return lambda sch: sch.set_axis_separator(sch.get_block(block), buffer, seps)


def _then_cache_and_compute_at(sch):
    y = sch.get_block("Y")
    sch.set_axis_separator(y, ("write", 0), [1])
    copy = sch.cache_write(y, 0, "local")
    sch.reverse_compute_at(copy, sch.get_loops(y)[0])


SCHEDULES = {
    "alloc_write": (PLAIN, sep("B", ("write", 0), [1])),
    "param_read_by_name": (PLAIN, sep("B", "A", [1])),
    "match_buffer_read": (PLAIN, sep("B", ("read", 1), [1])),
    "rank3_two_separators": (PLAIN, sep("B", ("write", 2), [1, 2])),
    "removed_with_none": (KEYWORDS, sep("B", ("write", 0), None)),
    "removed_with_empty": (KEYWORDS, sep("B", "C", [])),
    "survives_cache_write_and_reverse_compute_at": (MM_RELU_16, _then_cache_and_compute_at),
}
