"""Hand schedules for the CUDA target (docs/gpu.md walks through them; the tests run them).

python examples/gpu_schedules.py            # PTX sizes, and a run when a GPU is present
"""

import sys
from pathlib import Path

import numpy as np

import tir_mlir

DATA = Path(__file__).resolve().parent.parent / "tests" / "data" / "gpu"


def tiled_matmul(sch, threads=16, per_thread=4, k_tile=16):
    """SIMT matmul: each block computes a (threads * per_thread)^2 tile of C, each thread a
    per_thread^2 sub-tile accumulated in registers (`local`); every k-tile of A and B is
    staged in `shared` memory, loaded by all threads of the block together."""
    c = sch.get_block("C")
    i, j, k = sch.get_loops(c)
    bi, ti, ii = sch.split(i, [None, threads, per_thread])
    bj, tj, jj = sch.split(j, [None, threads, per_thread])
    ko, ki = sch.split(k, [None, k_tile])
    sch.reorder(bi, bj, ti, tj, ko, ki, ii, jj)
    sch.bind(bi, "blockIdx.y")
    sch.bind(bj, "blockIdx.x")
    sch.bind(ti, "threadIdx.y")
    sch.bind(tj, "threadIdx.x")
    sch.reverse_compute_at(sch.cache_write(c, 0, "local"), tj)  # C tile in registers
    for operand in (0, 1):  # A, B k-tiles in shared
        cache = sch.cache_read(c, operand, "shared")
        sch.compute_at(cache, ko)  # covers the whole block's tile (shared scope)
        fused = sch.fuse(*sch.get_loops(cache)[-2:])
        _, ty, tx = sch.split(fused, [None, threads, threads])  # cooperative fetch
        sch.bind(ty, "threadIdx.y")
        sch.bind(tx, "threadIdx.x")
    return sch


def softmax(sch, threads=64):
    """Row softmax, one block per row: the max and the sum of exponentials are cross-thread
    reductions (the inner part of each split reduction loop bound to threadIdx.x), their
    results kept in shared memory for the normalisation."""
    i, j = sch.get_loops(sch.get_block("norm"))
    _, ji = sch.split(j, [None, threads])
    sch.bind(i, "blockIdx.x")
    sch.bind(ji, "threadIdx.x")
    sch.compute_inline(sch.get_block("exp"))
    for name in ("expsum", "maxelem"):
        block = sch.get_block(name)
        sch.compute_at(block, i)
        sch.set_scope(block, 0, "shared")
        _, ki = sch.split(sch.get_loops(block)[-1], [None, threads])
        sch.bind(ki, "threadIdx.x")
    return sch


def main():
    from tir_mlir.passes.lowering.pipeline import emit_text

    mm = tiled_matmul(tir_mlir.Schedule(tir_mlir.load(DATA / "matmul.tir")))
    sm = softmax(tir_mlir.Schedule(tir_mlir.load(DATA / "softmax_te.tir")))
    for name, sch in (("matmul", mm), ("softmax", sm)):
        ptx = emit_text(sch.mod.module, "ptx", "cuda")
        print(
            f"{name}: {len(ptx.splitlines())} lines of PTX, "
            f"{ptx.count('bar.sync')} bar.sync, {ptx.count('shfl.sync')} shfl.sync"
        )
    if "--run" not in sys.argv:
        return
    rng = np.random.default_rng(0)
    a, b = rng.random((256, 256), np.float32), rng.random((256, 256), np.float32)
    c = np.zeros((256, 256), np.float32)
    tir_mlir.build(mm.mod, target="cuda")["matmul"](a, b, c)
    print("matmul max error", np.abs(c - a @ b).max())


if __name__ == "__main__":
    main()
