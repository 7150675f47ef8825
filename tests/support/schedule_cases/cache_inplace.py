"""Programs and schedules of cache_inplace (tests/schedule/test_schedule_cache_inplace.py runs them; the trace
tests replay them)."""

from shared_programs import MATMUL_16 as MATMUL


INPLACE = """
@T.prim_func
def main(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    for i in range(16):
        with T.block("X"):
            vi = T.axis.spatial(16, i)
            A[vi] = A[vi] * T.float32(2) + B[vi]
    for i in range(16):
        with T.block("Y"):
            vi = T.axis.spatial(16, i)
            B[vi] = A[vi] + T.float32(1)
"""


def _blockized(sch):
    """The block at the function root, as TVM expects (its region is then constant)."""
    outer = sch.blockize(sch.get_loops(sch.get_block("X"))[0])
    sch.cache_inplace(outer, 0, "local")


def _update_blockized(sch):
    c = sch.get_block("C")
    sch.decompose_reduction(c, sch.get_loops(c)[0])
    outer = sch.blockize(sch.get_loops(c)[0])
    sch.cache_inplace(outer, 0, "shared")


# TVM's output is well formed only for a block at the function root: these agree with it
AGREES = {
    "blockized": (INPLACE, _blockized),
    "update_blockized": (MATMUL, _update_blockized),
}
