"""Programs and schedules of decompose_padding (tests/schedule/test_schedule_decompose_padding.py runs them; the trace
tests replay them)."""

from shared_programs import CONV2D_PAD_C4_6X6 as CONV


PAD = """
@T.prim_func
def main(A: T.Buffer((6, 6), "float32"), B: T.Buffer((8, 8), "float32")):
    Apad = T.alloc_buffer((8, 8))
    for h, w in T.grid(8, 8):
        with T.block("Apad"):
            vh, vw = T.axis.remap("SS", [h, w])
            Apad[vh, vw] = T.if_then_else(COND, A[T.max(vh - 1, 0) % 6, T.max(vw - 1, 0) % 6], PAD)
    for h, w in T.grid(8, 8):
        with T.block("B"):
            vh, vw = T.axis.remap("SS", [h, w])
            B[vh, vw] = Apad[vh, vw]
"""


def pad(cond, value="T.float32(0)"):
    return PAD.replace("COND", cond).replace("PAD", value)


def at(k):
    def fn(sch):
        b = sch.get_block("Apad")
        return sch.decompose_padding(b, sch.get_loops(b)[k])

    return fn


def _after_compute_at(sch):
    b = sch.get_block("Apad")
    sch.compute_at(b, sch.get_loops(sch.get_block("B"))[2])
    sch.decompose_padding(b, sch.get_loops(b)[3])


SCHEDULES = {
    "conv_outer": (CONV, at(0)),
    "conv_inner": (CONV, at(2)),  # n (extent 1, outside) is bound as 0, like TVM
    "conv_compute_at": (CONV, _after_compute_at),  # T.where for vh, a shrunk loop for vw
    "coefficient_2": (pad("2 <= vh * 2 and vh < 7"), at(0)),
    "reversed_comparisons": (pad("7 > vh and vh >= 1 and vw <= 6"), at(1)),
}
