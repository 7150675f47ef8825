"""Stage `pack-panels`: a vectorized matmul tile whose B panel (rows a multiple of the L1 way
apart) would not stay in L1 reads a contiguous copy made once per `k` tile (a copy within the
L2's share); tiles that reuse the panel little, B rows the L1 sets spread, and scalar tiles
keep reading B. Numbers against numpy, the copy checked on the scf stage."""

import pytest

import tir_mlir
from tir_mlir import Schedule
from tir_mlir.analysis.op_index import strip_handles
from tir_mlir.passes.lowering.cpu_model import cpu_model
from tir_mlir.passes.lowering.pack_panels import PackPanels
from tir_mlir.passes.lowering.pipeline import emit_text

from panel_matmuls import check_matmul, panels, tiled_matmul
from workloads import matmul


def test_strided_panel_is_copied_once_per_k_tile():
    """B rows 2 KiB apart: a k tile's 64 rows fall in 2 L1 sets (64 sets, 64-byte lines)."""
    sch = tiled_matmul(512, 512)
    scf = emit_text(sch.mod.module, "scf")
    assert panels(scf) == ["64x32"]
    # the copy is vector loads of B's rows, the tile reads the copy
    assert "vector.load %arg1" in scf and "vector.store" in scf
    check_matmul(sch, 512, 512)


def test_a_panel_wider_than_l1_is_copied_too():
    """A 64 x 256 panel (64 KiB) fits no L1 of this machine but its L2: the copy's rows follow
    one another, so a tile's 64 x 32 sweep of it spreads over the L1 sets."""
    sch = tiled_matmul(512, 512, rows=4, kc=64, width=256)
    assert panels(emit_text(sch.mod.module, "scf")) == ["64x256"]
    check_matmul(sch, 512, 512)


@pytest.mark.parametrize(
    "m, i1_outside, why",
    [
        (500, False, "rows 2000 bytes apart spread over the L1 sets"),
        (512, True, "only the 4 rows of the register tile under k0: 4 uses of each copy"),
    ],
)
def test_panels_the_caches_keep_or_barely_reuse_are_read_in_place(m, i1_outside, why):
    sch = tiled_matmul(512, m, width=4 if m % 32 else 32, i1_outside=i1_outside)
    assert panels(emit_text(sch.mod.module, "scf")) == [], why
    check_matmul(sch, 512, m)


def test_scalar_tiles_are_left_alone():
    sch = tiled_matmul(512, 512, vectorize=False)
    assert panels(emit_text(sch.mod.module, "scf")) == []


@pytest.mark.parametrize(
    "cpu, kc, width, copied",
    [
        # 32 KiB: within every L2 (it was left in place where it exceeded 2/3 of L1)
        ("sapphirerapids", 128, 64, True),
        ("znver4", 128, 64, True),
        # 1 MiB: within 2/3 of a 2 MiB L2, not of a 1 MiB one
        ("sapphirerapids", 512, 512, True),
        ("znver5", 512, 512, False),
        ("skylake-avx512", 512, 512, False),
    ],
)
def test_panel_budget_is_the_named_cpus_l2(cpu, kc, width, copied):
    module = tiled_matmul(1024, 1024, kc=kc, width=width).mod.copy().module
    strip_handles(module.operation)
    PackPanels(cpu_model(f"llvm -mcpu={cpu}"))(module)
    assert ("B_global" in str(module)) == copied


@pytest.mark.parametrize("rows, copied", [(4, True), (32, False)])
def test_a_copy_in_l2_needs_sweeps(rows, copied):
    """A 64 x 256 panel (64 KiB, beyond L1) is read from L2 once per sweep of the loops outside
    `k1`: 16 sweeps of a 4-row tile pay for the copy, 2 sweeps of a 32-row tile do not."""
    module = tiled_matmul(1024, 1024, rows=rows, kc=64, width=256).mod.copy().module
    strip_handles(module.operation)
    PackPanels(cpu_model("llvm -mcpu=sapphirerapids"))(module)
    assert ("B_global" in str(module)) == copied


def test_a_wide_row_under_the_innermost_k_loop_is_left_alone():
    """k outside a 16384-float (64 KiB) vectorized row: one row under the k loop, no panel."""
    sch = Schedule(tir_mlir.parse(matmul(8, m=16384, k=64)))
    c = sch.get_block("C")
    i, j, k = sch.get_loops(c)
    sch.reorder(i, k, j)
    sch.vectorize(j)
    module = sch.mod.copy().module
    strip_handles(module.operation)
    PackPanels(cpu_model("llvm -mcpu=sapphirerapids"))(module)
    assert "B_global" not in str(module)
