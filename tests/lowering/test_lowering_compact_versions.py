"""compact-buffers after version-guards: the copies of a loop that versioning a `T.where` made
(one in each version) count as one loop when finding a buffer's LCA, so a tile under a versioned
loop compacts as it would unversioned."""

import re

import numpy as np
from mlir import ir

import tir_mlir
from tir_mlir import Schedule
from tir_mlir.context import get_context
from tir_mlir.passes.lowering.compact_buffers import CompactBuffers
from tir_mlir.passes.lowering.pipeline import emit_text
from workloads import matmul

# A padded 3x3 convolution, 8 channels in and out.
CONV = """
@T.prim_func
def main(A: T.Buffer((1, 8, 6, 6), "float32"), W: T.Buffer((8, 8, 3, 3), "float32"), B: T.Buffer((1, 8, 6, 6), "float32")):
    T.func_attr({"global_symbol": "main", "tir.noalias": True})
    P = T.alloc_buffer((1, 8, 8, 8))
    for i0, i1, i2, i3 in T.grid(1, 8, 8, 8):
        with T.block("pad"):
            v0, v1, v2, v3 = T.axis.remap("SSSS", [i0, i1, i2, i3])
            P[v0, v1, v2, v3] = T.if_then_else(1 <= v2 and v2 < 7 and 1 <= v3 and v3 < 7, A[v0, v1, v2 - 1, v3 - 1], T.float32(0))
    for i0, i1, i2, i3, i4, i5, i6 in T.grid(1, 8, 6, 6, 8, 3, 3):
        with T.block("B"):
            v0, v1, v2, v3, v4, v5, v6 = T.axis.remap("SSSSRRR", [i0, i1, i2, i3, i4, i5, i6])
            with T.init():
                B[v0, v1, v2, v3] = T.float32(0)
            B[v0, v1, v2, v3] = B[v0, v1, v2, v3] + P[v0, v4, v2 + v5, v3 + v6] * W[v1, v4, v5, v6]
"""


def _allocs(scf: str) -> list:
    return re.findall(r"memref.alloca?\(\) : memref<[^>]*>", scf)


def _conv_window_tiles() -> Schedule:
    """The random benchmark's worst case in small: the input channels split by 3 (8 is not a
    multiple: a `T.where` that version-guards versions, at the parallel loop, the row loop
    and the channel loop), a cache_read of A under the window and a cache_write per pixel."""
    sch = Schedule(tir_mlir.parse(CONV))
    conv = sch.get_block("B")
    sch.compute_inline(sch.get_block("pad"))
    n, co, y, x, ci, ry, rx = sch.get_loops(conv)
    co0, co1 = sch.split(co, factors=[None, 4])
    ci0, ci1 = sch.split(ci, factors=[None, 3])
    sch.reorder(n, co0, y, x, ci0, ry, rx, ci1, co1)
    fused = sch.fuse(n, co0, y)
    sch.compute_at(sch.cache_read(conv, 0, "global"), ry)
    sch.reverse_compute_at(sch.cache_write(conv, 0, "local"), x)
    sch.parallel(fused)
    sch.vectorize(co1)
    sch.unroll(ci1)
    return sch


def _conv_reference(a, w):
    p = np.pad(a, ((0, 0), (0, 0), (1, 1), (1, 1)))
    out = np.zeros((1, 8, 6, 6), "float32")
    for ry in range(3):
        for rx in range(3):
            out[0] += np.einsum("oc,chw->ohw", w[:, :, ry, rx], p[0, :, ry : ry + 6, rx : rx + 6])
    return out


def test_tiles_under_versioned_loops_compact_as_unversioned():
    """The accumulator is 4 outputs (one per lane of co1), the cached window 3 channels x 3
    columns; before, the copies lifted their LCA to the parallel loop: 4 x 6 and 8 x 6 x 6."""
    sch = _conv_window_tiles()
    scf = emit_text(sch.mod.module, "scf")
    assert sorted(_allocs(scf)) == [
        "memref.alloca() : memref<3x3xf32>",
        "memref.alloca() : memref<4xf32>",
    ]
    assert "loop_copy" not in scf  # (the copy ids are compact-buffers' only)
    rng = np.random.default_rng(0)
    a = rng.standard_normal((1, 8, 6, 6)).astype("float32")
    w = rng.standard_normal((8, 8, 3, 3)).astype("float32")
    for debug in (True, False):
        b = np.zeros((1, 8, 6, 6), "float32")
        tir_mlir.build(sch.mod, debug=debug)["main"](a, w, b)
        np.testing.assert_allclose(b, _conv_reference(a, w), rtol=1e-4, atol=1e-4)


def test_copies_of_a_parallel_loop_get_a_tile_each():
    """Rows split by 5 (16 is not a multiple) outside a parallel column loop: versioning the
    row loop copies the parallel loop, and each copy allocates its own 5-row column tile."""
    sch = Schedule(tir_mlir.parse(matmul(16, k=8)))
    mm = sch.get_block("C")
    i, j, k = sch.get_loops(mm)
    i0, i1 = sch.split(i, factors=[None, 5])
    sch.reorder(i0, j, i1, k)
    sch.parallel(j)
    sch.reverse_compute_at(sch.cache_write(mm, 0, "local"), j)
    scf = emit_text(sch.mod.module, "scf")
    marks = re.findall(r"scf\.parallel|memref\.alloca?\(\) : memref<[^>]*>", scf)
    assert marks == ["scf.parallel", "memref.alloca() : memref<5xf32>"] * 2
    rng = np.random.default_rng(1)
    a = rng.standard_normal((16, 8)).astype("float32")
    b = rng.standard_normal((8, 16)).astype("float32")
    for debug in (True, False):
        c = np.zeros((16, 16), "float32")
        tir_mlir.build(sch.mod, debug=debug)["main"](a, b, c)
        np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-5)


# A buffer written and read row by row under a versioned loop %p: in each version, a loop %i
# (copy id 0) and, in SIBLINGS, a second loop %i of the same id after the first (as unrolling
# a loop around it leaves copies side by side in one version).
VERSIONED_ROWS = """
#set = affine_set<(d0) : (d0 - 4 >= 0)>
func.func @f(%a: memref<8x4xf32>, %b: memref<8x4xf32>) {
  %m = memref.alloc() : memref<8x4xf32>
  affine.for %p = 0 to 8 {
    affine.if #set(%p) {
      affine.for %i = 0 to 8 {
        BODY
      } {tir_mlir.loop_copy = 0 : i64}
    } else {
      affine.for %i = 0 to 8 {
        BODY
      } {tir_mlir.loop_copy = 0 : i64}
    } {tir_mlir.versioned}
  }
  memref.dealloc %m : memref<8x4xf32>
  return
}
"""
ROW_COPY = """
        affine.for %j = 0 to 4 {
          %x = memref.load %a[%i, %j] : memref<8x4xf32>
          memref.store %x, %m[%i, %j] : memref<8x4xf32>
        }
        affine.for %j = 0 to 4 {
          %y = memref.load %m[%i, %j] : memref<8x4xf32>
          memref.store %y, %b[%i, %j] : memref<8x4xf32>
        }"""
SPLIT_ROWS = ROW_COPY.replace(
    "        }\n        affine.for %j = 0 to 4 {\n          %y",
    "        }\n      } {tir_mlir.loop_copy = 0 : i64}\n      affine.for %i = 0 to 8 {\n"
    "        affine.for %j = 0 to 4 {\n          %y",
)


def _compacted(body: str) -> str:
    with get_context(), ir.Location.unknown():
        module = ir.Module.parse(VERSIONED_ROWS.replace("BODY", body))
        CompactBuffers()(module)
        return str(module)


def test_copies_in_the_two_versions_are_one_loop():
    text = _compacted(ROW_COPY)
    assert "memref.alloca() : memref<1x4xf32>" in text
    assert "loop_copy" not in text


def test_copies_side_by_side_in_one_version_are_two_loops():
    """The rows written in one loop and read in the next: one row per iteration would give
    the second loop only the last row, so the buffer stays whole."""
    text = _compacted(SPLIT_ROWS)
    assert "memref.alloc() : memref<8x4xf32>" in text
    assert "alloca" not in text
