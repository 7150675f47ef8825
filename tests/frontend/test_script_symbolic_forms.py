"""`f.script()` of symbolic functions whose programs use the vars in non-affine ways
(`T.ceildiv(n, 4)`, `n // 4`, `n % 4`, `n * m`, `T.max(n, 5)`), and of schedules that split a
symbolic extent: printed as TVM 0.21 prints them (exact text, and TVM reads the text back as
the function it built), the printed text runs with the function's numbers. The forms are
held by the IR itself (docs/symbolic.md): affine maps over symbols, or `arith` ops at the
top level of the function for what is not affine."""

from pathlib import Path

import numpy as np
import pytest
from python_sources import load_python_source

import tir_mlir

DATA = Path(__file__).parent.parent / "data" / "frontend" / "python"
FORMS = ["tiles", "grid", "pool", "chunks", "trunc", "kinds", "mean", "mean_sq"]


@pytest.fixture(scope="module")
def ours(tmp_path_factory):
    return load_python_source(
        DATA / "symbolic_forms.py",
        tmp_path_factory.mktemp("ours"),
        "from tir_mlir.script import tir as T",
        "ours",
    )


@pytest.fixture(scope="module")
def theirs(tmp_path_factory):
    return load_python_source(
        DATA / "symbolic_forms.py",
        tmp_path_factory.mktemp("tvm"),
        "from tvm.script import tir as T",
        "tvm",
    )


@pytest.fixture(scope="module")
def symbolic(tmp_path_factory):
    return load_python_source(
        DATA / "symbolic.py",
        tmp_path_factory.mktemp("sym"),
        "from tir_mlir.script import tir as T",
        "ours_forms",
    )


def test_forms_print_as_tvm_writes_them(ours):
    """TVM's builder keeps `T.ceildiv(a, b)` as `(a + b - 1) // b`, simplified only in the
    extent of a `range` loop (not in T.grid, shapes, indices)."""
    tiles, grid = ours.tiles.script(), ours.grid.script()
    assert "B = T.match_buffer(b, ((n + 4 - 1) // 4 * 4,))" in tiles
    assert "for i, j in T.grid((n + 3) // 4, 4):" in tiles
    assert "B = T.match_buffer(b, ((n + 2 + 4 - 1) // 4, 8))" in grid
    assert "for i, j in T.grid((n + 2 + 4 - 1) // 4, 8):" in grid
    assert "A[T.min(vi * 4, n - 1), vj]" in grid
    pool = ours.pool.script()
    assert "vi = T.axis.spatial(n // 4, i)" in pool and "A[vi * 4 + n % 4]" in pool
    assert "for i, j in T.grid((n * m + chunk - 1) // chunk, chunk):" in ours.chunks.script()
    trunc = ours.trunc.script()
    assert "B = T.match_buffer(b, (T.Div(n, 3), T.max(n, 5)))" in trunc
    assert "A[T.truncmod(n, 3) + vi]" in trunc
    kinds = ours.kinds.script()  # every loop kind's extent is simplified
    assert "for i in T.parallel((n + 3) // 4):" in kinds and "range((n + 7) // 8)" in kinds
    assert "for k in T.unroll((n + 1) // 2):" in kinds


@pytest.mark.tvm
@pytest.mark.parametrize("name", FORMS)
def test_forms_printed_exactly_as_tvm(ours, theirs, name):
    import tvm

    text = getattr(ours, name).script()
    assert text == getattr(theirs, name).script()
    tvm.ir.assert_structural_equal(tvm.script.from_source(text), getattr(theirs, name))


def test_printed_text_runs_with_the_functions_numbers(ours):
    """The printed `tiles` read back is a symbolic function that computes A * 2 at any n."""
    lib = tir_mlir.build(tir_mlir.parse(ours.tiles.script(), "tiles.py"))
    for n in (1, 7, 33):
        a = np.arange(n, dtype="float32")
        b = np.full(-(-n // 4) * 4, -1, "float32")
        lib["tiles"](a, b)
        np.testing.assert_array_equal(b[:n], a * 2)
        assert (b[n:] == -1).all()


def test_a_float_cast_of_a_var_is_printed_as_a_cast(ours):
    assert 'B[vi] = A[vi] / T.Cast("float32", n)' in ours.mean.script()


def test_a_float_cast_of_a_non_affine_form_is_printed_from_its_ops(ours):
    assert 'T.Cast("float32", n * n)' in ours.mean_sq.script()


SPLITS = [
    ("add", False, [None, 4], "T.grid((n + 3) // 4, 4, 16)"),
    ("add", False, [None, 16], "T.grid((n + 15) // 16, 16, 16)"),
    ("add", True, [None, 3, 4], "T.grid((n * 16 + 11) // 12, 3, 4)"),
    ("add", True, [None, 7], "T.grid((n * 16 + 6) // 7, 7)"),
    ("row_sum", False, [None, 4], "T.grid((n + T.int64(3)) // T.int64(4), T.int64(4), m)"),
]


def _split(name, fuse, factors):
    def schedule(sch):
        loops = sch.get_loops(sch.get_block("C" if name == "add" else "B"))
        sch.split(sch.fuse(*loops) if fuse else loops[0], factors)
        return sch

    return schedule


@pytest.mark.parametrize("name,fuse,factors,grid", SPLITS)
def test_split_of_a_symbolic_extent_printed(symbolic, name, fuse, factors, grid):
    text = _split(name, fuse, factors)(tir_mlir.Schedule(getattr(symbolic, name))).mod.script()
    assert f"in {grid}:" in text and "T.where(" in text


@pytest.mark.tvm
@pytest.mark.parametrize("name,fuse,factors,grid", SPLITS)
def test_split_of_a_symbolic_extent_printed_as_tvm(symbolic, tmp_path, name, fuse, factors, grid):
    import tvm

    schedule = _split(name, fuse, factors)
    text = schedule(tir_mlir.Schedule(getattr(symbolic, name))).mod.script()
    theirs = load_python_source(
        DATA / "symbolic.py", tmp_path, "from tvm.script import tir as T", "tvm_forms"
    )
    want = schedule(tvm.tir.Schedule(getattr(theirs, name))).mod["main"]
    tvm.ir.assert_structural_equal(
        tvm.script.from_source(text).with_attr("global_symbol", name), want
    )
