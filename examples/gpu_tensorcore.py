"""A hand-scheduled fp16 matmul on tensor cores (WMMA 16x16x16, fp32 accumulation) with shared
tiles; docs/gpu.md walks through it. `kind="mma"` uses mma.sync (m16n8k16) instead, also for
bf16 operands.

    python examples/gpu_tensorcore.py                 # PTX for sm_80 and sm_90 (ptxas checks it)
    python examples/gpu_tensorcore.py --run [N]       # run an N^3 matmul on the GPU (N=1024)
    python examples/gpu_tensorcore.py --mma --bf16    # mma.sync, bf16 operands
"""

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

import tir_mlir

PROGRAM = """
@T.prim_func
def matmul_SHORT(A: T.Buffer((N, N), "DTYPE"), B: T.Buffer((N, N), "DTYPE"),
                 C: T.Buffer((N, N), "float32")):
    T.func_attr({"global_symbol": "matmul_SHORT", "tir.noalias": True})
    for i, j, k in T.grid(N, N, N):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + T.Cast("float32", A[vi, vk]) * T.Cast("float32", B[vk, vj])
"""


SHORT = {"float16": "f16", "bfloat16": "bf16"}


def matmul(n: int, dtype="float16", transpose_b=False):
    """C = A @ B for n x n A, B of `dtype` (n a multiple of 64), fp32 C: `matmul_f16`...;
    `transpose_b`: B is stored n x k, C = A @ B^T (`matmul_f16_nt`)."""
    text = PROGRAM.replace("SHORT", SHORT[dtype] + ("_nt" if transpose_b else ""))
    if transpose_b:
        text = text.replace("B[vk, vj]", "B[vj, vk]")
    return tir_mlir.parse(text.replace("DTYPE", dtype).replace("N", str(n)))


def matmul_f16(n: int):
    return matmul(n, "float16")


def intrinsics(kind="wmma", dtype="float16", transpose_b=False) -> dict:
    """The tensor intrinsics of each step: TVM's WMMA ones (fp16), or the mma.sync ones."""
    s = SHORT[dtype]
    if kind == "wmma":
        if dtype != "float16":
            raise ValueError("the WMMA intrinsics take fp16 operands; use kind='mma' for bf16")
        t = "_trans" if transpose_b else ""
        return {
            "fill": "wmma_fill_16x16x16_f32",
            "sync": f"wmma_sync_16x16x16_f16f16f32{t}",
            "load_a": "wmma_load_16x16x16_f16_a_shared",
            "load_b": f"wmma_load_16x16x16_f16_b{t}_shared",
            "store": "wmma_store_16x16x16_f32_global",
        }
    if transpose_b:
        raise ValueError("the mma_* intrinsics take B stored k x n (no _trans variants yet)")
    return {
        "fill": "mma_fill_16x16_f32",
        "sync": f"mma_sync_16x16x16_{s}{s}f32",
        "load_a": f"mma_load_16x16_{s}_a_shared",
        "load_b": f"mma_load_16x16_{s}_b_shared",
        "store": "mma_store_16x16_f32_global",
    }


def wmma_matmul(
    sch,
    warps=(2, 2),
    frags=(2, 2),
    k_frags=2,
    kind="wmma",
    dtype="float16",
    lanes=32,
    transpose_b=False,
):
    """Thread block: warps[0] x warps[1] warps; each warp computes frags[0] x frags[1] 16x16
    tiles of C in accumulator fragments. Per k-tile of 16 * k_frags, the block stages its rows
    of A and columns of B in shared memory (a cooperative fetch by all its threads), each warp
    loads its operand fragments from there and multiplies them on the tensor cores. `lanes`:
    the threads along x (a warp's 32, which the tensor-core ops need)."""
    names = intrinsics(kind, dtype, transpose_b)
    c = sch.get_block("C")
    acc = sch.cache_write(c, 0, "wmma.accumulator")
    shared = [sch.cache_read(c, n, "shared") for n in (0, 1)]
    frag = [sch.cache_read(c, n, s) for n, s in ((0, "wmma.matrix_a"), (1, "wmma.matrix_b"))]
    i, j, k = sch.get_loops(c)
    i0, i1, i2, it = sch.split(i, [None, warps[0], frags[0], 16])
    j0, j1, j2, jt = sch.split(j, [None, warps[1], frags[1], 16])
    k0, k1, kt = sch.split(k, [None, k_frags, 16])
    sch.reorder(i0, j0, i1, j1, k0, k1, i2, j2, it, jt, kt)
    sch.bind(i0, "blockIdx.y")
    sch.bind(j0, "blockIdx.x")
    sch.bind(i1, "threadIdx.y")  # the warps; threadIdx.x (32 lanes) comes from the
    sch.bind(j1, "threadIdx.z")  # fetch below, and every lane runs each wmma op
    sch.reverse_compute_at(acc, j1)  # each warp stores its own C tiles
    for s, f in zip(shared, frag):
        sch.compute_at(f, k1)
        sch.compute_at(s, k0)  # shared: the whole block's tile (all warps)
        fused = sch.fuse(*sch.get_loops(s)[-2:])
        _, tz, ty, tx = sch.split(fused, [None, warps[1], warps[0], lanes])
        sch.bind(tz, "threadIdx.z")
        sch.bind(ty, "threadIdx.y")
        sch.bind(tx, "threadIdx.x")
    sch.unroll(i2)  # a warp's tiles: registers need constant indices
    sch.unroll(j2)
    mma = sch.blockize(it)  # the 16x16x16 multiply-accumulate of one tile
    init = sch.decompose_reduction(mma, k0)
    sch.tensorize(init, names["fill"])
    sch.tensorize(mma, names["sync"])
    tensorize_tiles(sch, frag[0], names["load_a"])
    tensorize_tiles(sch, frag[1], names["load_b"])
    tensorize_tiles(sch, acc, names["store"])
    return sch


def tensorize_tiles(sch, block, intrin):
    """Split a copy block's two loops into 16x16 tiles (unrolled) and map each tile onto
    `intrin`."""
    r, c = sch.get_loops(block)[-2:]
    r0, r1 = sch.split(r, [None, 16])
    c0, c1 = sch.split(c, [None, 16])
    sch.reorder(r0, c0, r1, c1)
    sch.unroll(r0)
    sch.unroll(c0)
    sch.tensorize(r1, intrin)


def main():
    from tir_mlir.passes.lowering.pipeline import emit_text

    args = [a for a in sys.argv[1:] if not a.startswith("-")]
    n = int(args[0]) if args else 1024
    kind, dtype = (
        ("mma" if "--mma" in sys.argv else "wmma"),
        ("bfloat16" if "--bf16" in sys.argv else "float16"),
    )
    sch = wmma_matmul(tir_mlir.Schedule(matmul(n, dtype)), kind=kind, dtype=dtype)
    fname = f"matmul_{SHORT[dtype]}"
    ptxas = shutil.which("ptxas")
    for arch in ("sm_80", "sm_90"):
        ptx = emit_text(sch.mod.module, "ptx", f"cuda -arch={arch}")
        line = (
            f"{arch}: {ptx.count('mma.sync')} mma.sync, "
            f"{ptx.count('wmma.load')} wmma.load, {ptx.count('bar.sync')} bar.sync"
        )
        if ptxas:
            with tempfile.TemporaryDirectory() as d:
                (Path(d) / "k.ptx").write_text(ptx)
                p = subprocess.run(
                    [
                        ptxas,
                        f"-arch={arch}",
                        "-v",
                        str(Path(d) / "k.ptx"),
                        "-o",
                        str(Path(d) / "k.cubin"),
                    ],
                    capture_output=True,
                    text=True,
                )
                line += "; ptxas: " + (
                    p.stderr.strip().splitlines()[-2].split(": ", 1)[1]
                    if p.returncode == 0
                    else "FAILED\n" + p.stderr
                )
        print(line)
    if "--run" not in sys.argv:
        return
    from tir_mlir.dtypes import numpy_dtype
    from tir_mlir.runtime.cuda import device_arch

    rng = np.random.default_rng(0)
    a = rng.standard_normal((n, n)).astype(numpy_dtype(dtype))
    b = rng.standard_normal((n, n)).astype(numpy_dtype(dtype))
    c = np.zeros((n, n), np.float32)
    lib = tir_mlir.build(sch.mod, target=f"cuda -arch={device_arch()}")
    lib[fname](a, b, c)
    ref = a.astype(np.float32) @ b.astype(np.float32)
    print("max abs error", float(np.abs(c - ref).max()))
    t = lib.time_evaluator(fname, number=20, repeat=3)(a, b, c).median
    print(f"{t * 1e3:.3f} ms, {2 * n**3 / t / 1e12:.1f} TFLOP/s")


if __name__ == "__main__":
    main()
