"""Stage `strided-loads`: the vectors of a stride-2 window, vectorized along its output columns,
are read as contiguous row segments and one shuffle each, not one load and insert per lane."""

import re

import numpy as np

import tir_mlir
from tir_mlir import Schedule
from tir_mlir.passes.lowering.pipeline import emit_text
from schedule_everyday import maxpool


def _maxpool_columns():
    """2x2 max pool, stride 2 (issue 28's case 0121 on 8 channels of 32 x 32): 2 channels x 8
    output columns inside the window, which the lowering carries as vectors of 4 columns, each
    lane two input columns from the next."""
    sch = Schedule(tir_mlir.parse(maxpool(8, 32)))
    block = sch.get_block("B")
    n, c, y, x, ry, rx = sch.get_loops(block)
    c0, c1 = sch.split(c, factors=[None, 2])
    x0, x1 = sch.split(x, factors=[None, 8])
    sch.reorder(n, c0, y, x0, ry, rx, c1, x1)
    sch.parallel(sch.fuse(n, c0))
    sch.decompose_reduction(block, ry)
    return sch


def _check_numbers(sch):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((1, 8, 32, 32)).astype("float32")
    b = np.zeros((1, 8, 16, 16), "float32")
    tir_mlir.build(sch.mod)["main"](a, b)
    np.testing.assert_array_equal(b, a.reshape(1, 8, 16, 2, 16, 2).max(axis=(3, 5)))


def _no_shuffle_reads_memory(asm):
    shuffles = re.findall(r"vshufps\s+\$\d+, ([^,]+),", asm)
    return shuffles and not any("(" in s for s in shuffles)


def test_every_other_column_is_two_loads_and_a_shuffle():
    """The window's column loop outside its row loop (`rx`, `ry`): a build's other half is read
    under another `ry` loop, so each build stands alone, its span's two ends loaded."""
    sch = _maxpool_columns()
    loops = sch.get_loops(sch.get_block("B_update"))
    sch.reorder(loops[4], loops[3])  # rx, ry
    target = "llvm -mcpu=skylake-avx512"
    scf = emit_text(sch.mod.module, "scf", target)
    assert scf.count("vector.shuffle") == 4, scf  # 2 channels x 2 vectors of 4 columns
    assert scf.count("[0, 2, 5, 7]") == 4, scf
    assert "vector.from_elements" not in scf, scf
    asm = emit_text(sch.mod.module, "asm", target)
    assert not re.search(r"vinsertps|vpinsrd", asm), asm
    assert re.search(r"vshufps|vpermt2ps|vpermi2ps", asm), asm
    _check_numbers(sch)


def test_the_window_columns_share_their_row_loads():
    """The window's column loop `rx` (2 iterations, `A[.., 2 x + rx]`) around the builds: its
    two iterations read the even and the odd elements of one span, so each build is the span's
    two halves loaded whole and an even and an odd shuffle of them, one picked by `rx`; once
    LLVM unrolls `rx` both iterations share the loads (`vshufps` of two registers, no second
    pair of loads one element on, folded into the shuffle)."""
    sch = _maxpool_columns()
    target = "llvm -mcpu=skylake-avx512"
    scf = emit_text(sch.mod.module, "scf", target)
    # 2 channels x 2 vectors of 4 columns, each an even and an odd half
    assert scf.count("[0, 2, 4, 6]") == 4 and scf.count("[1, 3, 5, 7]") == 4, scf
    asm = emit_text(sch.mod.module, "asm", target)
    assert not re.search(r"vinsertps|vpinsrd", asm), asm
    assert _no_shuffle_reads_memory(asm), asm
    _check_numbers(sch)


def test_unrolled_window_columns_share_their_row_loads():
    """`rx` unrolled: its two builds, one block's, are the even and the odd half of one span."""
    sch = _maxpool_columns()
    sch.unroll(sch.get_loops(sch.get_block("B_update"))[4])  # rx
    target = "llvm -mcpu=skylake-avx512"
    scf = emit_text(sch.mod.module, "scf", target)
    assert scf.count("[0, 2, 4, 6]") == 4 and scf.count("[1, 3, 5, 7]") == 4, scf
    asm = emit_text(sch.mod.module, "asm", target)
    assert _no_shuffle_reads_memory(asm), asm
    _check_numbers(sch)
