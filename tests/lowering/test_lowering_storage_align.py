"""Stage `storage-align`: `buffer_dim_align` (sch.storage_align) gives the allocation TVM's
padded strides in the lowered IR, and results do not change."""

import re

import numpy as np
import pytest

import tir_mlir
from schedule_check import check_numerics, parse
from shared_programs import MATMUL_16 as MM
from tir_mlir import Schedule
from tir_mlir.errors import BuildError
from tir_mlir.passes.lowering.pipeline import emit_text
from tir_mlir.passes.lowering.storage_align import aligned_strides


def _cached_mm(scope, axis, factor, offset):
    """MM with A staged through a `scope` cache computed at i, its axis aligned."""
    sch = Schedule(parse(MM))
    c = sch.get_block("C")
    a = sch.cache_read(c, 0, scope)
    sch.storage_align(a, 0, axis, factor, offset)
    sch.compute_at(a, sch.get_loops(c)[0])
    return sch


def test_padded_stride_in_affine_ir_and_same_results():
    sch = _cached_mm("shared", 0, 16, 1)
    text = emit_text(sch.mod.module, "affine")
    assert "memref.alloca() : memref<272xf32>" in text  # 17 * 16 elements
    assert re.search(
        r"memref.reinterpret_cast %alloca to offset: \[0\], sizes: \[16, 16\], "
        r"strides: \[17, 1\] : memref<272xf32> to "
        r"memref<16x16xf32, strided<\[17, 1\]>>",
        text,
    )
    accesses = re.findall(r"memref\.(?:load|store) .*%reinterpret_cast\[.*", text)
    assert len(accesses) == 2
    assert all(a.endswith("memref<16x16xf32, strided<[17, 1]>>") for a in accesses)
    check_numerics(parse(MM), sch.mod, "main")
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((16, 16), "float32"), rng.standard_normal((16, 16), "float32")
    c = np.zeros((16, 16), "float32")
    tir_mlir.build(sch.mod)["main"](a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)


def test_inner_axis_alignment_spreads_elements():
    """Aligning the last axis (factor 16, offset 3) gives it stride 3, like TVM."""
    sch = _cached_mm("local", 1, 16, 3)
    text = emit_text(sch.mod.module, "affine")
    assert "memref<768xf32> to memref<16x16xf32, strided<[48, 3]>>" in text
    check_numerics(parse(MM), sch.mod, "main")


def test_already_aligned_layout_is_left_alone():
    text = emit_text(_cached_mm("shared", 0, 8, 0).mod.module, "affine")
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
def test_strides_match_tvm_differential():
    import tvm

    for axis, factor, offset in [(0, 16, 1), (1, 16, 3), (0, 32, 4)]:
        theirs = tvm.tir.Schedule(tvm.script.from_source(MM))
        a = theirs.cache_read(theirs.get_block("C"), 0, "global")
        theirs.storage_align(a, 0, axis, factor, offset)
        t = tvm.tir.transform
        mod = t.CompactBufferAllocation()(
            t.ConvertBlocksToOpaque()(
                t.PlanAndUpdateBufferAllocationLocation()(t.LowerInitBlock()(theirs.mod))
            )
        )
        tvm_strides = re.search(
            r"A_global = T.alloc_buffer\(\(16, 16\), strides=\((\d+), (\d+)\)", mod.script()
        ).groups()
        ours = _cached_mm("global", axis, factor, offset)
        want = f"strided<[{tvm_strides[0]}, {tvm_strides[1]}]>"
        assert want in emit_text(ours.mod.module, "affine")


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
        emit_text(parse(src).module, "affine")
    assert e.value.loc is not None and e.value.loc.line == 5
