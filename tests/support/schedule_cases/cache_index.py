"""Programs and schedules of cache_index (tests/schedule/test_schedule_cache_index.py runs them; the trace
tests replay them)."""

from shared_programs import CONV2D_PAD_C4_6X6 as CONV


RESHAPE = """
@T.prim_func
def main(A: T.Buffer((8, 8), "float32"), B: T.Buffer((64,), "float32")):
    for i in range(64):
        with T.block("B"):
            vi = T.axis.spatial(64, i)
            B[vi] = A[vi // 8, vi % 8] + T.float32(1)
"""


SHARED = """
@T.prim_func
def main(A: T.Buffer((8, 8), "float32"), B: T.Buffer((16, 4), "float32")):
    for i, j in T.grid(16, 4):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[(vi * 4 + vj) // 8, (vi * 4 + vj) % 8] + A[vi // 2, 0]
"""


PAIR = """
@T.prim_func
def main(A: T.Buffer((64,), "float32"), B: T.Buffer((32,), "float32")):
    for i in range(32):
        with T.block("B"):
            vi = T.axis.spatial(32, i)
            B[vi] = A[vi * 2] + A[vi * 2 + 1]
"""


def index(name, thresh=0, scope="global"):
    return lambda sch: sch.cache_index(sch.get_block(name), scope, thresh)


# TVM 0.21 fails when one expression is cached (a SeqStmt of length 1): these cache several
AGREES = {
    "reshape": (RESHAPE, index("B")),
    "reshape_thresh_1": (RESHAPE, index("B", 1)),
    "shared": (SHARED, index("B")),
    "pair_biggest_first": (PAIR, index("B")),
    "conv": (CONV, index("B")),
    "conv_shared_scope": (CONV, index("B", 0, "shared")),
    "padding_condition": (CONV, index("Apad")),  # a bool buffer for the T.if_then_else test
}
