"""Stage `prefetch-panels`: a loop that copies a panel (pack-panels' copy of a `k` tile of B)
and then computes on it prefetches the next iteration's panel during the compute loop, a share
of its lines per iteration, into L1 when both panels fit it and into L2 otherwise. Numbers
against numpy, the prefetches checked on the scf stage."""

import re

import tir_mlir
from tir_mlir import Schedule
from tir_mlir.passes.lowering.cpu_model import cpu_model
from tir_mlir.passes.lowering.pipeline import emit_text

from panel_matmuls import check_matmul, panels, tiled_matmul
from workloads import matmul


def _prefetches(scf: str) -> list:
    """The localities of the prefetches of B (the second argument)."""
    return re.findall(r"memref\.prefetch %arg1\[[^]]*\], read, locality<(\d)>", scf)


def _l1_bytes():
    m = cpu_model("llvm")
    return m.l1d_sets * m.l1d_ways * m.line_bytes


def test_the_next_panel_is_prefetched_over_the_compute_loop():
    """A 64 x 32 panel (8 KiB, 128 lines of 64 bytes): 16 iterations of i1 prefetch 8 lines
    each, into L1 (both panels fit it)."""
    sch = tiled_matmul(512, 512)
    scf = emit_text(sch.mod.module, "scf")
    assert panels(scf) == ["64x32"]
    panel = 64 * 32 * 4
    lines = panel // cpu_model("llvm").line_bytes
    assert _prefetches(scf) == ["3" if 2 * panel <= _l1_bytes() else "2"] * (lines // 16)
    check_matmul(sch, 512, 512)


def test_a_panel_the_l1_cannot_hold_twice_goes_to_l2():
    """A 64 x 256 panel (64 KiB): prefetched into L1 it would evict the panel being read."""
    sch = tiled_matmul(512, 512, width=256)
    scf = emit_text(sch.mod.module, "scf")
    panel = 64 * 256 * 4
    assert 2 * panel > _l1_bytes()
    assert set(_prefetches(scf)) == {"2"}
    check_matmul(sch, 512, 512)


def test_loops_without_a_panel_copy_prefetch_nothing():
    """B rows 2000 bytes apart spread over the L1 sets: pack-panels copies nothing."""
    sch = Schedule(tir_mlir.parse(matmul(500, m=500, k=500)))
    c = sch.get_block("C")
    i, j, k = sch.get_loops(c)
    k0, k1 = sch.split(k, factors=[None, 100])
    sch.reorder(k0, i, k1, j)
    scf = emit_text(sch.mod.module, "scf")
    assert "memref.alloca" not in scf and _prefetches(scf) == []


def _cached(n, rows):
    """A schedule's own copy of B's 64 x 32 k tile (cache_read at k0), read by `rows` rows."""
    sch = Schedule(tir_mlir.parse(matmul(n, m=n, k=n)))
    c = sch.get_block("C")
    i, j, k = sch.get_loops(c)
    i0, i1 = sch.split(i, factors=[None, rows])
    j0, j1 = sch.split(j, factors=[None, 32])
    k0, k1 = sch.split(k, factors=[None, 64])
    sch.reorder(i0, j0, k0, i1, k1, j1)
    sch.compute_at(sch.cache_read(c, 1, "global"), k0)
    sch.vectorize(sch.get_loops(sch.get_block("B_global"))[-1])
    sch.vectorize(j1)
    sch.decompose_reduction(c, k0)
    return sch


def test_a_copy_read_too_few_times_is_left_alone():
    """Each element of the copy read by 32 rows is prefetched; by 8 rows (fewer than
    pack-panels' MIN_REUSE uses), the copy is a small part of the work and stays as it is."""
    many, few = (emit_text(_cached(256, rows).mod.module, "scf") for rows in (32, 8))
    for scf in (many, few):  # both copy the tile
        assert panels(scf) == ["64x32"]
    assert _prefetches(many) and _prefetches(few) == []
    check_matmul(_cached(256, 32), 256, 256)
