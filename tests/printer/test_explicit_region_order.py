"""T.reads / T.writes written in another order than inference finds print in the writer's
order, as TVM keeps the written lists (and rfactor's argmax keeps them, as TVM does)."""

import pytest

import tir_mlir

SRC = """
@T.prim_func
def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32"),
         C: T.Buffer((8,), "float32"), D: T.Buffer((8,), "float32")):
    for i in range(8):
        with T.block("blk"):
            vi = T.axis.spatial(8, i)
            T.reads(READS)
            T.writes(WRITES)
            C[vi] = A[vi] + B[vi]
            D[vi] = A[vi] * B[vi]
"""


def _src(reads, writes):
    return SRC.replace("READS", reads).replace("WRITES", writes)


@pytest.mark.parametrize(
    "reads, writes", [("B[vi], A[vi]", "D[vi], C[vi]"), ("A[vi], B[vi]", "C[vi], D[vi]")]
)
def test_written_order_is_printed(reads, writes):
    text = tir_mlir.parse(_src(reads, writes)).script()
    assert f"T.reads({reads})" in text and f"T.writes({writes})" in text
    assert tir_mlir.parse(text).script() == text


def test_inferred_order_without_written_lists():
    src = (
        _src("", "").replace("            T.reads()\n", "").replace("            T.writes()\n", "")
    )
    text = tir_mlir.parse(src).script()
    assert "T.reads(A[vi], B[vi])" in text and "T.writes(C[vi], D[vi])" in text


@pytest.mark.tvm
def test_written_order_matches_tvm():
    import tvm

    src = _src("B[vi], A[vi]", "D[vi], C[vi]")
    ours = tvm.script.from_source(tir_mlir.parse(src).script())
    tvm.ir.assert_structural_equal(ours, tvm.script.from_source(src))
