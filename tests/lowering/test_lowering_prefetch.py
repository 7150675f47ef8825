"""Stages `prefetch-targets` + `prefetch`: the loop annotation recorded by sch.prefetch becomes
`memref.prefetch` of the region read `offset` iterations ahead (TE's prefetch), down to
`prefetcht0` in the assembly; results do not change."""

import re

import numpy as np
import pytest

import tir_mlir
from schedule_check import check_numerics, parse
from shared_programs import MATMUL_16 as MM, ROWSUM_16X64 as ROWSUM
from tir_mlir import Schedule
from tir_mlir.errors import BuildError
from tir_mlir.passes.lowering.pipeline import emit_text

PREFETCH = re.compile(r"memref\.prefetch (%\w+)\[([^\]]*)\], read, locality<3>, data : (.*)")


def _prefetched(sch, reduce_loop, offset):
    b = sch.get_block("B")
    sch.prefetch(b, 0, sch.get_loops(b)[reduce_loop], offset)
    return sch


def test_rowsum_prefetches_next_element_of_the_row():
    sch = _prefetched(Schedule(parse(ROWSUM)), 1, 1)
    text = emit_text(sch.mod.module, "scf")
    # in the k loop: A[i, min(k + 1, 63)], clamped for the last iteration
    assert re.search(
        r"scf.for %arg3 = .*\n.*%c1_\d+ = arith.constant 1 : index\n"
        r".*%0 = arith.addi %arg3, %c1_\d+ : index\n.*%c63 = arith.constant 63"
        r".*\n.*%1 = arith.minsi %0, %c63 : index\n"
        r".*memref.prefetch %arg0\[%arg2, %1\], read, locality<3>, data",
        text,
    )
    # the init still runs once before the reduction loop (prefetch is added after peeling)
    assert re.search(r"memref.store %cst, %arg1\[%arg2\][^}]*scf.for %arg3", text)
    assert "tir_mlir.prefetch_buffer" not in text
    assert "prefetcht0" in emit_text(sch.mod.module, "asm")
    check_numerics(parse(ROWSUM), sch.mod, "main")
    a = np.random.default_rng(2).standard_normal((16, 64), "float32")
    out = np.zeros(16, "float32")
    tir_mlir.build(sch.mod)["main"](a, out)
    np.testing.assert_allclose(out, a.sum(1), rtol=1e-5, atol=1e-5)


def test_outer_loop_prefetches_each_cache_line_of_a_row():
    """Prefetch on i, 2 ahead: row i + 2 (64 floats) is 4 cache lines of 16."""
    sch = _prefetched(Schedule(parse(ROWSUM)), 0, 2)
    text = emit_text(sch.mod.module, "scf")
    m = re.search(
        r"scf.for %arg3 = %c0_\d+ to %c4 step %c1_\d+ \{[^}]*"
        r"%1 = arith.minsi %0, %c15 : index\n[^}]*%2 = arith.muli %arg3, %c16_\d+"
        r" : index\n.*memref.prefetch %arg0\[%1, %2\]",
        text,
    )
    assert m, text
    assert len(PREFETCH.findall(text)) == 1
    check_numerics(parse(ROWSUM), sch.mod, "main")


def test_cached_strided_buffer_and_parameter():
    """A_shared (an allocation, storage-aligned) on k, B on j two ahead: B[0:16, j + 2] is one
    line per row."""
    sch = Schedule(parse(MM))
    c = sch.get_block("C")
    a = sch.cache_read(c, 0, "shared")
    sch.storage_align(a, 0, 0, 16, 1)
    i, j, k = sch.get_loops(c)
    sch.compute_at(a, i)
    sch.prefetch(c, 0, k, 1)
    sch.prefetch(c, 1, j, 2)
    text = emit_text(sch.mod.module, "scf")
    found = PREFETCH.findall(text)
    assert found == [
        ("%arg1", "%arg5, %1", "memref<16x16xf32>"),
        ("%reinterpret_cast", "%arg3, %1", "memref<16x16xf32, strided<[17, 1]>>"),
    ]
    assert re.search(
        r"scf.for %arg5 = %c0_\d+ to %c16_\d+ step %c1_\d+ \{[^}]*"
        r"%1 = arith.minsi %0, %c15 : index\n.*memref.prefetch %arg1",
        text,
    )
    check_numerics(parse(MM), sch.mod, "main")


def test_data_dependent_index_prefetches_the_whole_dimension():
    src = """
@T.prim_func
def main(A: T.Buffer((256,), "float32"), idx: T.Buffer((8,), "int32"), B: T.Buffer((8,), "float32")):
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            B[vi] = A[idx[vi]]
"""
    sch = Schedule(parse(src))
    b = sch.get_block("B")
    sch.prefetch(b, 0, sch.get_loops(b)[0], 1)  # reads in TVM's order: A, then idx
    text = emit_text(sch.mod.module, "scf")
    assert re.search(
        r"scf.for %arg4 = %c0_\d+ to %c16 step .*\n.*\n"
        r".*(%\d+) = arith.muli %arg4, %c16_\d+ : index\n"
        r".*memref.prefetch %arg0\[\1\]",
        text,
    )
    a = np.arange(256, dtype="float32")
    idx = np.array([5, 250, 0, 17, 17, 100, 255, 3], "int32")
    out = np.zeros(8, "float32")
    tir_mlir.build(sch.mod)["main"](a, idx, out)
    np.testing.assert_array_equal(out, a[idx])


def test_bad_hand_written_annotation_is_a_build_error():
    src = """
@T.prim_func
def main(A: T.Buffer((16, 64), "float32"), B: T.Buffer((16,), "float32")):
    for i in range(16):
        for k in T.serial(64, annotations={"prefetch": [["A", 0]]}):
            with T.block("B"):
                vi, vk = T.axis.remap("SR", [i, k])
                B[vi] = B[vi] + A[vi, vk]
"""
    with pytest.raises(BuildError, match="prefetch: offset must be >= 1, got 0") as e:
        emit_text(parse(src).module, "scf")
    assert e.value.loc is not None and e.value.loc.line == 5
