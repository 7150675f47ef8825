"""Stages `storage-align` and `storage-pad`: `buffer_dim_align` (sch.storage_align) gives the
allocation TVM's padded strides in the lowered IR, those of the compacted tile where
compact-buffers shrinks the buffer (TVM's order), and results do not change."""

import itertools
import re

import numpy as np
import pytest

import tir_mlir
from schedule_check import check_numerics, parse
from shared_programs import MATMUL_16 as MM
from workloads import matmul
from tir_mlir import Schedule
from tir_mlir.errors import BuildError
from tir_mlir.passes.lowering.pipeline import emit_text
from tir_mlir.passes.lowering.storage_align import aligned_strides, pad_runs


def _cached_mm(scope, axis, factor, offset, at=True):
    """MM with A staged through a `scope` cache (computed at i when `at`: one row of A per
    iteration, a 1 x 16 tile), its axis aligned."""
    sch = Schedule(parse(MM))
    c = sch.get_block("C")
    a = sch.cache_read(c, 0, scope)
    sch.storage_align(a, 0, axis, factor, offset)
    if at:
        sch.compute_at(a, sch.get_loops(c)[0])
    return sch


def test_padded_stride_in_lowered_ir_and_same_results():
    sch = _cached_mm("shared", 0, 16, 1, at=False)
    text = emit_text(sch.mod.module, "scf")
    assert "memref.alloca() : memref<272xf32>" in text  # 17 * 16 elements
    assert re.search(
        r"memref.reinterpret_cast %alloca to offset: \[0\], sizes: \[16, 16\], "
        r"strides: \[17, 1\] : memref<272xf32> to "
        r"memref<16x16xf32, strided<\[17, 1\]>>",
        text,
    )
    accesses = re.findall(r"memref\.(?:load|store) .*%reinterpret_cast\[.*", text)
    # rows of 16: loaded in exact pieces, so their padding is not zeroed (see below)
    assert len(accesses) >= 2 and not re.search(r"memref\.(?:load|store) .*%alloca\[", text)
    assert all(a.endswith("memref<16x16xf32, strided<[17, 1]>>") for a in accesses)
    check_numerics(parse(MM), sch.mod, "main")
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((16, 16), "float32"), rng.standard_normal((16, 16), "float32")
    c = np.zeros((16, 16), "float32")
    tir_mlir.build(sch.mod)["main"](a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)


def test_inner_axis_alignment_spreads_elements():
    """Aligning the last axis (factor 16, offset 3) gives it stride 3, like TVM."""
    sch = _cached_mm("local", 1, 16, 3, at=False)
    text = emit_text(sch.mod.module, "scf")
    assert "memref<768xf32> to memref<16x16xf32, strided<[48, 3]>>" in text
    check_numerics(parse(MM), sch.mod, "main")


def test_compacted_tile_takes_the_alignment():
    """compact-buffers shrinks A's cache to the row one iteration of i reads; the alignment
    pads that tile (TVM's CompactBufferAllocation: strides of the compacted region)."""
    sch = _cached_mm("global", 1, 16, 3)
    text = emit_text(sch.mod.module, "scf")
    assert "memref<48xf32> to memref<1x16xf32, strided<[48, 3]>>" in text
    assert "memref<16x16xf32, strided" not in text
    check_numerics(parse(MM), sch.mod, "main")


def test_column_tile_stays_in_registers():
    """A column tile (16 rows x 1, one column per iteration) aligned on its rows already has
    the requested stride (1 % 16 == 1): no padding, a 16-element stack tile LLVM keeps in
    registers, where padding the whole buffer first left a copy of all of A in memory."""
    src = """
@T.prim_func
def main(A: T.Buffer((64, 256), "float32"), B: T.Buffer((64, 256), "float32")):
    for i0, j in T.grid(4, 256):
        for i1 in T.vectorized(16):
            with T.block("B"):
                vi = T.axis.spatial(64, i0 * 16 + i1)
                vj = T.axis.spatial(256, j)
                B[vi, vj] = A[vi, vj] * T.sigmoid(A[vi, vj])
"""
    sch = Schedule(parse(src))
    b = sch.get_block("B")
    a = sch.cache_read(b, 0, "global")
    sch.compute_at(a, sch.get_loops(b)[1])
    sch.storage_align(a, 0, 0, 16, 1)
    text = emit_text(sch.mod.module, "scf")
    assert "memref.alloca() : memref<16xf32>" in text  # 16 x 1, its unit dimension dropped
    assert "reinterpret_cast" not in text and "memref<64x256xf32, strided" not in text
    check_numerics(parse(src), sch.mod, "main")


def test_already_aligned_layout_is_left_alone():
    text = emit_text(_cached_mm("shared", 0, 8, 0, at=False).mod.module, "scf")
    assert "reinterpret_cast" not in text and "memref<16x16xf32>" in text


@pytest.mark.parametrize(
    "shape, aligns, want",
    [
        ((16, 16), {0: (16, 1)}, [17, 1]),
        ((16, 16), {0: (32, 4)}, [36, 1]),
        ((16, 16), {1: (16, 0)}, [256, 16]),
        ((16, 16), {1: (16, 3)}, [48, 3]),
        ((16, 16), {0: (8, 0)}, [16, 1]),
        ((4, 3, 5), {0: (16, 3), 1: (8, 1)}, [35, 9, 1]),
        ((16, 16), {0: (16, 17)}, [17, 1]),  # offset >= factor pads like offset % factor
    ],
)
def test_strides_follow_tvm(shape, aligns, want):
    """Values printed by TVM 0.21's CompactBufferAllocation for these requests."""
    assert aligned_strides(list(shape), aligns) == want


@pytest.mark.tvm
@pytest.mark.parametrize("at", [False, True])
def test_strides_match_tvm_differential(at):
    import tvm

    for axis, factor, offset in [(0, 16, 1), (1, 16, 3), (0, 32, 4)]:
        theirs = tvm.tir.Schedule(tvm.script.from_source(MM))
        a = theirs.cache_read(theirs.get_block("C"), 0, "global")
        theirs.storage_align(a, 0, axis, factor, offset)
        if at:
            theirs.compute_at(a, theirs.get_loops(theirs.get_block("C"))[0])
        t = tvm.tir.transform
        mod = t.CompactBufferAllocation()(
            t.ConvertBlocksToOpaque()(
                t.PlanAndUpdateBufferAllocationLocation()(t.LowerInitBlock()(theirs.mod))
            )
        )
        found = re.search(
            r"A_global = T.alloc_buffer\(\((\d+), (\d+)\), strides=\((\d+), (\d+)\)",
            mod.script(),
        )
        assert found is not None
        rows, cols, s0, s1 = found.groups()
        ours = emit_text(_cached_mm("global", axis, factor, offset, at).mod.module, "scf")
        if rows == "1" and axis == 0:  # a one-row tile: the stride of its rows addresses nothing
            assert "memref.alloca() : memref<16xf32>" in ours and "strided" not in ours
            continue
        assert f"memref<{rows}x{cols}xf32, strided<[{s0}, {s1}]>>" in ours


def test_several_axes_and_bool_buffer():
    src = """
@T.prim_func
def main(A: T.Buffer((4, 3, 5), "float32"), B: T.Buffer((4, 3, 5), "float32")):
    M = T.alloc_buffer((4, 3, 5), "bool")
    for i, j, k in T.grid(4, 3, 5):
        with T.block("M"):
            vi, vj, vk = T.axis.remap("SSS", [i, j, k])
            M[vi, vj, vk] = A[vi, vj, vk] > T.float32(0)
    for i, j, k in T.grid(4, 3, 5):
        with T.block("B"):
            vi, vj, vk = T.axis.remap("SSS", [i, j, k])
            B[vi, vj, vk] = T.Select(M[vi, vj, vk], A[vi, vj, vk], T.float32(-1))
"""
    sch = Schedule(parse(src))
    m = sch.get_block("M")
    sch.storage_align(m, 0, 1, 8, 1)
    sch.storage_align(m, 0, 0, 16, 3)
    text = emit_text(sch.mod.module, "scf")
    assert "memref<140xi8> to memref<4x3x5xi8, strided<[35, 9, 1]>>" in text
    check_numerics(parse(src), sch.mod, "main")


def test_hand_written_request_on_a_parameter_is_a_build_error():
    src = """
@T.prim_func
def main(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8, 8), "float32")):
    for i, j in T.grid(8, 8):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.block_attr({"buffer_dim_align": [[0, 0, 16, 1]]})
            B[vi, vj] = A[vi, vj]
"""
    with pytest.raises(
        BuildError, match="buffer 'B' is a function parameter, not an allocation"
    ) as e:
        emit_text(parse(src).module, "scf")
    assert e.value.loc is not None and e.value.loc.line == 5


_SILU_TILES = """
@T.prim_func
def main(A: T.Buffer((8, 48), "float32"), B: T.Buffer((8, 48), "float32")):
    for i0, j0, i1, j1 in T.grid(4, 4, 2, 12):
        with T.block("B"):
            vi = T.axis.spatial(8, i0 * 2 + i1)
            vj = T.axis.spatial(48, j0 * 12 + j1)
            B[vi, vj] = A[vi, vj] * T.sigmoid(A[vi, vj])
"""


def _silu_tile(at: int):
    """_SILU_TILES with A staged through a local cache computed at its loop number `at` (1,
    j0: a 2 x 12 tile per column block; 2, i1: a 1 x 12 one per row of it), rows aligned to
    16 + 1."""
    sch = Schedule(parse(_SILU_TILES))
    b = sch.get_block("B")
    a = sch.cache_read(b, 0, "local")
    sch.compute_at(a, sch.get_loops(b)[at])
    sch.storage_align(a, 0, 0, 16, 1)
    return sch


def test_padding_between_rows_is_zeroed():
    """A 2 x 12 tile with rows 17 apart: LLVM vectorizes a row as 8 + 4 lanes and loads the
    4 as 8 (the allocation is dereferenceable there), so the pad's stack garbage went through
    the float math in lanes whose results are dropped; a denormal there costs an FP assist per
    instruction (0938 silu: 10x slower than without the alignment). The allocation now zeroes
    its padding, 5 elements after each row, once where it is allocated."""
    sch = _silu_tile(1)
    text = emit_text(sch.mod.module, "scf")
    assert "memref.alloca() : memref<34xf32>" in text
    assert "sizes: [2, 12], strides: [17, 1]" in text
    # between the allocation and the copy into it: the zeroing nest, rows x 5 from 12 on
    head = text[text.index("memref.reinterpret_cast") : text.index("memref.load %arg0")]
    loops = re.findall(r"scf\.for %\w+ = %\w+ to %(\w+) step", head)
    consts = dict(re.findall(r"%(\w+) = arith\.constant (\S+) :", head))
    assert [consts[n] for n in loops[:2]] == ["2", "5"]
    assert {"17", "12", "0.000000e+00"} <= set(consts.values())
    assert len(re.findall(r"memref\.store %\w+, %alloca\[%\w+\] : memref<34xf32>", head)) == 1
    check_numerics(parse(_SILU_TILES), sch.mod, "main")


def test_one_row_tile_keeps_its_layout():
    """Aligning the rows of a 1 x 12 tile pads nothing that is addressed (its one row has no
    next): the tile keeps its natural layout, where a 17-element allocation left 5 elements of
    garbage after the row and a strided view."""
    sch = _silu_tile(2)
    text = emit_text(sch.mod.module, "scf")
    assert "reinterpret_cast" not in text and "memref<17xf32>" not in text
    check_numerics(parse(_SILU_TILES), sch.mod, "main")


@pytest.mark.parametrize(
    "shape, aligns",
    [
        ((16, 16), {0: (16, 1)}),
        ((2, 12), {0: (16, 1)}),
        ((4, 3, 5), {0: (16, 3), 1: (8, 1)}),
        ((16, 16), {1: (16, 3)}),
        ((3, 1, 2), {0: (16, 1), 2: (4, 2)}),
    ],
)
def test_pad_runs_cover_the_padding_once(shape, aligns):
    strides = aligned_strides(list(shape), aligns)
    elements = {
        sum(s * i for s, i in zip(strides, idx))
        for idx in itertools.product(*(range(n) for n in shape))
    }
    pads = [
        sum(s * i for s, i in zip(strides, idx)) + start + t
        for axis, start, length in pad_runs(list(shape), strides)
        for idx in itertools.product(*(range(n) for n in shape[: axis + 1]))
        for t in range(length)
    ]
    assert len(set(pads)) == len(pads) and not elements & set(pads)
    assert elements | set(pads) == set(range(strides[0] * shape[0]))


def test_padded_accumulator_tile_is_carried_in_registers():
    """A cache_write tile padded by storage_align (8 rows of 4 lanes, row stride 17) is the one
    view of its allocation: scalar-replace carries its rows through k as it does an unpadded
    tile's, where it used to leave them as a load and a store per k step (0717 of seed
    1699409881, matmul512: 2.7x slower than without the alignment)."""
    mm = parse(matmul(64))
    sch = Schedule(mm)
    c = sch.get_block("C")
    i, j, k = sch.get_loops(c)
    i0, i1 = sch.split(i, factors=[None, 8])
    j0, j1 = sch.split(j, factors=[None, 4])
    sch.reorder(i0, j0, k, i1, j1)
    w = sch.cache_write(c, 0, "local")
    sch.reverse_compute_at(w, j0)
    sch.storage_align(c, 0, 0, 16, 1)
    sch.vectorize(j1)
    sch.decompose_reduction(c, k)
    text = emit_text(sch.mod.module, "scf")
    assert "strided<[17, 1]>" in text
    carried = re.search(r"scf\.for %\w+ = %\w+ to %c64\w* step %\w+ iter_args\(([^)]*)\)", text)
    assert carried and carried.group(1).count("=") == 8
    check_numerics(mm, sch.mod, "main")
