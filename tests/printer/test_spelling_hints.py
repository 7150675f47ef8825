"""The printer's spelling hints (dialect/spelling.py) live beside the IR, not in it: the program
prints as written, the MLIR carries no hint, copies and the schedule's snapshots keep them, and
MLIR read back from text prints the canonical forms."""

import gc
import pickle

import pytest

import tir_mlir
from tir_mlir.dialect import spelling
from tir_mlir.errors import ScheduleError
from tir_mlir.module import IRModule, module_from_mlir

SRC = """
@T.prim_func
def f(A: T.Buffer((16,), "float32"), B: T.Buffer((24,), "float32")):
    for i in range(16):
        with T.block("B"):
            vi = T.axis.spatial(24, 8 + i)
            T.where(i >= 2)
            B[vi] = A[vi - 8] * T.float32(2)
"""
AS_WRITTEN = ("vi = T.axis.spatial(24, 8 + i)", "T.where(i >= 2)")
CANONICAL = ("vi = T.axis.spatial(24, i + 8)", "T.where(2 <= i)")


def _has(text, lines):
    return all(line in text for line in lines)


def test_printed_as_written_and_no_hint_in_the_ir():
    mod = tir_mlir.parse(SRC)
    assert _has(mod.script(), AS_WRITTEN)
    text = mod.mlir()
    for hint in ("where_ops", "const_first", "start_first", "spelling"):
        assert hint not in text


def test_mlir_read_back_prints_the_canonical_forms():
    again = module_from_mlir(tir_mlir.parse(SRC).mlir())
    assert _has(again.script(), CANONICAL)


def test_copies_and_moved_functions_keep_the_spelling():
    mod = tir_mlir.parse(SRC)
    assert _has(mod.copy().script(), AS_WRITTEN)
    moved = IRModule({"main": mod["f"]})
    assert _has(moved.script(), AS_WRITTEN)


def test_a_refused_primitive_restores_the_spelling_with_the_module():
    sch = tir_mlir.Schedule(tir_mlir.parse(SRC))
    before = sch.mod.script()
    (i,) = sch.get_loops(sch.get_block("B"))
    with pytest.raises(ScheduleError):
        sch.split(i, factors=[3, 3])  # 9 != 16: refused after the snapshot
    assert sch.mod.script() == before
    sch.parallel(i)
    assert _has(sch.mod.script(), AS_WRITTEN)
    assert _has(sch.copy().mod.script(), AS_WRITTEN)


def test_a_changed_expression_is_printed_canonically():
    """A hint is keyed by the expression: once a rewrite changes it, the printer's default
    form applies (as TVM prints what its simplifier built)."""
    sch = tir_mlir.Schedule(tir_mlir.parse(SRC))
    (i,) = sch.get_loops(sch.get_block("B"))
    sch.split(i, factors=[4, 4])
    text = sch.mod.script()
    assert "8 + i" not in text and "i >= 2" not in text


def test_tables_go_with_their_modules():
    gc.collect()
    before = len(spelling._TABLES)
    for _ in range(20):
        tir_mlir.parse(SRC).copy().script()
    gc.collect()
    assert len(spelling._TABLES) == before


def test_a_pickled_module_keeps_the_spelling():
    """Modules cross process boundaries pickled (workers, the tuner's runners)."""
    mod = pickle.loads(pickle.dumps(tir_mlir.parse(SRC)))
    assert _has(mod.script(), AS_WRITTEN)
