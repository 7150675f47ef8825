"""The register-tiled matmuls of the pack-panels and prefetch-panels tests: a schedule whose
`k` tile of B the tile reads many times (the panel those stages copy and prefetch), its
numbers against numpy, and the panel copies found on the scf stage."""

import re

import numpy as np

import tir_mlir
from tir_mlir import Schedule

from workloads import matmul


def tiled_matmul(n, m, rows=4, kc=64, width=32, vectorize=True, i1_outside=False) -> Schedule:
    """i0, j0, k0, i1, k1, i2, j1 (TVM's SSRSRS order; i1 before k0 with `i1_outside`) with
    `rows` x `width` register tiles over `kc` steps of k; i1 spans the rest of a 64-row
    block. A: n x n, B: n x m."""
    sch = Schedule(tir_mlir.parse(matmul(n, m=m, k=n)))
    c = sch.get_block("C")
    i, j, k = sch.get_loops(c)
    i0, i1, i2 = sch.split(i, factors=[None, 64 // rows, rows])
    j0, j1 = sch.split(j, factors=[None, width])
    k0, k1 = sch.split(k, factors=[None, kc])
    sch.reorder(i0, j0, *((i1, k0) if i1_outside else (k0, i1)), k1, i2, j1)
    sch.parallel(i0)
    sch.unroll(i2)
    if vectorize:
        sch.vectorize(j1)
    sch.decompose_reduction(c, k0)
    return sch


def check_matmul(sch: Schedule, n, m):
    """Build and run `sch` (A: n x n, B: n x m) and compare C with numpy's A @ B."""
    rng = np.random.default_rng(0)
    a, b = (rng.uniform(-1, 1, s).astype("float32") for s in ((n, n), (n, m)))
    c = np.zeros((n, m), "float32")
    tir_mlir.build(sch.mod)["main"](a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)


def panels(scf: str) -> list:
    """The shapes of the f32 `memref.alloca`s of the scf text (the panel copies)."""
    return re.findall(r"memref\.alloca\(\) : memref<(\d+x\d+)xf32>", scf)
