"""reverse_compute_inline into an overcomputing producer: the guard TVM writes, a quotient
bound tightened by the remainder bound beside it (`i // 128 < 127 and i % 128 < 127` is
`i < 16255 and i % 128 < 127`: the same set), numbers as the unscheduled program's."""

from schedule_check import check_all

FUSED_PRODUCER = """
@T.prim_func
def main(A: T.Buffer((128, 128), "float32"), C: T.Buffer((127, 127), "float32")):
    B = T.alloc_buffer((128, 128))
    for i in range(16384):
        with T.block("B"):
            vi = T.axis.spatial(128, i // 128)
            vj = T.axis.spatial(128, i % 128)
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for i, j in T.grid(127, 127):
        with T.block("C"):
            cvi, cvj = T.axis.remap("SS", [i, j])
            C[cvi, cvj] = B[cvi, cvj] + T.float32(1)
"""


def _inline(sch):
    sch.reverse_compute_inline(sch.get_block("C"))


def test_quotient_bound_tightened_by_the_remainder_bound():
    sch = check_all(FUSED_PRODUCER, _inline, "main", tvm_diff=False)
    assert "T.where(i < 16255 and i % 128 < 127)" in sch.mod.script()


def test_a_quotient_bound_alone_is_a_bound_on_the_fused_index():
    """Without a remainder bound the quotient bound alone is one on i (TVM: `i < 16256`)."""
    src = FUSED_PRODUCER.replace("C: T.Buffer((127, 127)", "C: T.Buffer((127, 128)").replace(
        "T.grid(127, 127)", "T.grid(127, 128)"
    )
    sch = check_all(src, _inline, "main", tvm_diff=False)
    assert "T.where(i < 16256)" in sch.mod.script()
