"""The TE primitives TensorIR dropped, in TensorIR form (prefetch, set_store_predicate), and
the mapping table of docs/te_primitives.md covering every example in tests/data/te/."""

import re
from pathlib import Path

import numpy as np

import tir_mlir
from schedule_check import check_all, check_error, check_replay, parse
from shared_programs import ROWSUM_16X64 as ROWSUM
from tir_mlir import Schedule

ROOT = Path(__file__).parent.parent.parent


def test_prefetch_annotates_the_loop():
    sch = check_all(
        ROWSUM,
        lambda s: s.prefetch(s.get_block("B"), 0, s.get_loops(s.get_block("B"))[1], 1),
        "main",
        tvm_diff=False,
    )
    assert 'for k in T.serial(64, annotations={"prefetch": [["A", 1]]}):' in sch.mod.script()


SCALE = """
@T.prim_func
def main(A: T.Buffer((16, 4), "float32"), B: T.Buffer((16, 4), "float32")):
    for i, j in T.grid(16, 4):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
"""


def test_set_store_predicate():
    """Only rows vi < 8 are stored: the others keep what the caller passed."""
    sch = Schedule(parse(SCALE))
    sch.set_store_predicate(sch.get_block("B"), lambda vi, vj: (vi < 8) & (vj >= 1))
    check_replay(sch, parse(SCALE))
    assert "T.where(i < 8 and 1 <= j)" in sch.mod.script()
    assert 'predicate="lambda vi, vj: (((vi * -1) + 7) >= 0) & ((vj + -1) >= 0)"' in str(sch.trace)
    a = np.random.default_rng(0).standard_normal((16, 4), "float32")
    out = np.full((16, 4), 7.0, "float32")
    tir_mlir.build(sch.mod)["main"](a, out)
    want = np.full((16, 4), 7.0, "float32")
    want[:8, 1:] = a[:8, 1:] * 2
    np.testing.assert_allclose(out, want)


def test_errors():
    sch = Schedule(parse(ROWSUM))
    b = sch.get_block("B")
    i, k = sch.get_loops(b)
    check_error(sch, lambda s: s.prefetch(b, 1, k, 1), "prefetch: block 'B' has 1 read")
    check_error(sch, lambda s: s.prefetch(b, 0, k, 0), "offset must be >= 1")
    check_error(
        sch, lambda s: s.set_store_predicate(b, lambda vi, vk: vi + 1), "comparisons joined with &"
    )


def test_every_te_example_has_a_counterpart():
    table = (ROOT / "docs" / "te_primitives.md").read_text()
    for f in sorted((ROOT / "tests" / "data" / "te").glob("*.py")):
        prim = re.sub(r"^\d+_", "", f.stem)
        assert re.search(rf"^\| `{prim}`", table, re.M), f"{prim} missing from the table"
