"""The transpose tiles of the `transpose-gathers` and `transpose-scatters` tests: `transpose_add`
(`C[i, j] = A[j, i] + B[i, j]`) at N, its rows split in three and its columns in two, built for
a named CPU (Sapphire Rapids, so the checks do not depend on the host) and checked against
numpy."""

import numpy as np

import tir_mlir
from tir_mlir import Schedule
from schedule_everyday import transpose_add

SPR = "llvm -mcpu=sapphirerapids"
N = 64


def split_transpose_add(rows: int, columns: int) -> tuple:
    """(the schedule, (i0, i1, i2), (j0, j1)): i split [., 2, rows], j split [., columns]."""
    sch = Schedule(tir_mlir.parse(transpose_add(N)))
    i, j = sch.get_loops(sch.get_block("C"))
    return sch, sch.split(i, factors=[None, 2, rows]), sch.split(j, factors=[None, columns])


def check_numbers(sch: Schedule):
    """Build for SPR and compare C with numpy's A.T + B."""
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal((N, N), "float32") for _ in range(2))
    c = np.full((N, N), 7.0, "float32")
    tir_mlir.build(sch.mod, target=SPR)["main"](a, b, c)
    np.testing.assert_allclose(c, a.T + b, rtol=1e-6)
