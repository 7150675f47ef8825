"""GPU benchmark: hand-scheduled tir_mlir kernels against torch (cuBLAS/cuDNN) and Triton.

    python benchmarks/bench_gpu.py            # on a GPU machine (torch, triton optional)
    python benchmarks/bench_gpu.py --dry      # anywhere: build every kernel to PTX (+ ptxas)
    python benchmarks/bench_gpu.py --only softmax,row_sum --arch sm_90

Kernels (each checked against torch before it is timed):
  matmul_f32   4096^3 fp32, SIMT: 128x128 block tiles, 8x8 per thread, shared k-tiles
  matmul_f16   4096^3 fp16 -> fp32, tensor cores (WMMA) with shared tiles
  matmul_bf16  4096^3 bf16 -> fp32, tensor cores (mma.sync m16n8k16), the same schedule
  softmax      4096x4096 fp32 rows, cross-thread max/sum reductions
  row_sum      4096x4096 fp32 -> 4096, cross-thread sum
  conv2d       NCHW fp32, 32x64x56x56, 64 3x3 filters (input pre-padded), one thread per output

Times are medians of CUDA-event timings (tir_mlir: time_evaluator on the torch tensors, passed
through DLPack without copies; torch and Triton: triton.testing.do_bench or torch events). The
table gives each time and the ratios tir_mlir / torch and tir_mlir / triton (below 1: faster).
Without a GPU it prints why and exits 0 (use --dry to check the kernels build).
"""

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "examples"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import tir_mlir  # noqa: E402
import gpu_schedules  # noqa: E402
import gpu_tensorcore  # noqa: E402
from programs import matmul_tvmscript  # noqa: E402

N = 4096
CONV = dict(n=32, c=64, h=56, w=56, k=64)


def matmul_f32(n=N):
    return tir_mlir.parse(matmul_tvmscript(n))


def softmax(rows=N, cols=N):
    return tir_mlir.parse(
        (ROOT / "tests" / "data" / "gpu" / "softmax_te.tir")
        .read_text()
        .replace("(16, 256)", f"({rows}, {cols})")
        .replace("(16,)", f"({rows},)")
        .replace("T.grid(16, 256)", f"T.grid({rows}, {cols})")
    )


def row_sum(rows=N, cols=N):
    return tir_mlir.parse(f"""
@T.prim_func
def row_sum(A: T.Buffer(({rows}, {cols}), "float32"), B: T.Buffer(({rows},), "float32")):
    T.func_attr({{"global_symbol": "row_sum", "tir.noalias": True}})
    for i, k in T.grid({rows}, {cols}):
        with T.block("B"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                B[vi] = T.float32(0)
            B[vi] = B[vi] + A[vi, vk]
""")


def conv2d(n, c, h, w, k):
    """3x3, stride 1, on an input padded beforehand: X is n x c x (h+2) x (w+2)."""
    return tir_mlir.parse(f"""
@T.prim_func
def conv2d(X: T.Buffer(({n}, {c}, {h + 2}, {w + 2}), "float32"),
           W: T.Buffer(({k}, {c}, 3, 3), "float32"), Y: T.Buffer(({n}, {k}, {h}, {w}), "float32")):
    T.func_attr({{"global_symbol": "conv2d", "tir.noalias": True}})
    for vn, vk, vh, vw, vc, vr, vs in T.grid({n}, {k}, {h}, {w}, {c}, 3, 3):
        with T.block("Y"):
            bn, bk, bh, bw, bc, br, bs = T.axis.remap("SSSSRRR", [vn, vk, vh, vw, vc, vr, vs])
            with T.init():
                Y[bn, bk, bh, bw] = T.float32(0)
            Y[bn, bk, bh, bw] = Y[bn, bk, bh, bw] + X[bn, bc, bh + br, bw + bs] * W[bk, bc, br, bs]
""")


def matmul_f32_schedule(sch):
    """examples/gpu_schedules.py's tiled matmul at 8x8 per thread, its register tile unrolled
    (an 8x8 accumulator indexed by loop variables would live in local memory)."""
    gpu_schedules.tiled_matmul(sch, threads=16, per_thread=8, k_tile=16)
    *_, ki, ii, jj = sch.get_loops(sch.get_block("C"))
    sch.unroll(ki)
    sch.unroll(ii)
    sch.unroll(jj)
    for loop in sch.get_loops(sch.get_block("C_local"))[-2:]:
        sch.unroll(loop)
    return sch


def row_sum_schedule(sch, threads=256):
    i, k = sch.get_loops(sch.get_block("B"))
    _, ki = sch.split(k, [None, threads])
    sch.bind(i, "blockIdx.x")
    sch.bind(ki, "threadIdx.x")  # a cross-thread reduction (warp shuffles + shared)
    return sch


def conv2d_schedule(sch, threads=256):
    y = sch.get_block("Y")
    n, k, h, w, c, r, s = sch.get_loops(y)
    fused = sch.fuse(n, k, h, w)
    bx, tx = sch.split(fused, [None, threads])
    sch.bind(bx, "blockIdx.x")
    sch.bind(tx, "threadIdx.x")
    sch.reverse_compute_at(sch.cache_write(y, 0, "local"), tx)  # accumulate in a register
    sch.unroll(r)
    sch.unroll(s)
    return sch


def kernels():
    """name -> (function name, scheduled IRModule, flops or bytes, unit)."""
    S, c = tir_mlir.Schedule, CONV
    conv_flops = 2 * c["n"] * c["k"] * c["h"] * c["w"] * c["c"] * 9
    return {
        "matmul_f32": ("matmul", matmul_f32_schedule(S(matmul_f32())).mod, 2 * N**3, "TFLOP/s"),
        "matmul_f16": (
            "matmul_f16",
            gpu_tensorcore.wmma_matmul(
                S(gpu_tensorcore.matmul_f16(N)), warps=(2, 2), frags=(4, 4), k_frags=2
            ).mod,
            2 * N**3,
            "TFLOP/s",
        ),
        "matmul_bf16": (
            "matmul_bf16",
            gpu_tensorcore.wmma_matmul(
                S(gpu_tensorcore.matmul(N, "bfloat16")),
                warps=(2, 2),
                frags=(4, 4),
                k_frags=2,
                kind="mma",
                dtype="bfloat16",
            ).mod,
            2 * N**3,
            "TFLOP/s",
        ),
        "softmax": (
            "softmax",
            gpu_schedules.softmax(S(softmax()), threads=256).mod,
            2 * 4 * N * N,
            "GB/s",
        ),
        "row_sum": ("row_sum", row_sum_schedule(S(row_sum())).mod, 4 * N * N, "GB/s"),
        "conv2d": ("conv2d", conv2d_schedule(S(conv2d(**c))).mod, conv_flops, "TFLOP/s"),
    }


# --- references ------------------------------------------------------------------------------


def torch_inputs(name, torch):
    g = torch.Generator(device="cuda").manual_seed(0)

    def rand(*shape, dtype=torch.float32):
        return torch.randn(*shape, generator=g, device="cuda", dtype=torch.float32).to(dtype)

    if name == "matmul_f32":
        return [rand(N, N), rand(N, N), torch.zeros(N, N, device="cuda")]
    if name in ("matmul_f16", "matmul_bf16"):
        t = torch.float16 if name == "matmul_f16" else torch.bfloat16
        return [rand(N, N, dtype=t), rand(N, N, dtype=t), torch.zeros(N, N, device="cuda")]
    if name == "softmax":
        return [rand(N, N), torch.zeros(N, N, device="cuda")]
    if name == "row_sum":
        return [rand(N, N), torch.zeros(N, device="cuda")]
    c = CONV
    x = torch.nn.functional.pad(rand(c["n"], c["c"], c["h"], c["w"]), (1, 1, 1, 1))
    return [
        x,
        rand(c["k"], c["c"], 3, 3),
        torch.zeros(c["n"], c["k"], c["h"], c["w"], device="cuda"),
    ]


def torch_op(name, torch):
    """A function of the inputs computing the output with torch (cuBLAS/cuDNN)."""
    F = torch.nn.functional
    return {
        "matmul_f32": lambda a, b: a @ b,
        "matmul_f16": lambda a, b: (a @ b).float(),  # fp16 tensor cores, fp32 accumulation
        "matmul_bf16": lambda a, b: (a @ b).float(),
        "softmax": lambda a: torch.softmax(a, dim=1),
        "row_sum": lambda a: a.sum(dim=1),
        "conv2d": lambda x, w: F.conv2d(x, w),
    }[name]


def time_torch(fn, torch, reps=20):
    try:
        import triton.testing

        return triton.testing.do_bench(fn, warmup=10, rep=100) / 1e3
    except ImportError:
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        fn()
        times = []
        for _ in range(5):
            start.record()
            for _ in range(reps):
                fn()
            end.record()
            torch.cuda.synchronize()
            times.append(start.elapsed_time(end) / reps / 1e3)
        return float(np.median(times))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dry", action="store_true", help="build every kernel to PTX, no GPU")
    ap.add_argument("--arch", help="GPU architecture (default: the GPU's; sm_80 for --dry)")
    ap.add_argument("--only", help="comma-separated kernel names")
    ns = ap.parse_args()
    from tir_mlir.runtime import cuda

    if not ns.dry and not cuda.gpu_available():
        print(
            "bench_gpu: no NVIDIA GPU here (libcuda.so.1 missing or no device); "
            "run with --dry to build the kernels to PTX"
        )
        return 0
    chosen = kernels()
    if ns.only:
        chosen = {k: v for k, v in chosen.items() if k in ns.only.split(",")}
    arch = ns.arch or ("sm_80" if ns.dry else cuda.device_arch())
    target = f"cuda -arch={arch}"
    if ns.dry:
        return dry(chosen, target, arch)
    return run(chosen, target)


def dry(chosen, target, arch):
    from tir_mlir.passes.lowering.pipeline import emit_text

    ptxas = shutil.which("ptxas")
    failed = 0
    for name, (_, mod, _, _) in chosen.items():
        ptx = emit_text(mod.module, "ptx", target)
        line = f"{name:11s} {len(ptx.splitlines()):6d} lines of PTX"
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
            if p.returncode:
                failed += 1
                line += "  ptxas FAILED:\n" + p.stderr
            else:
                used = [ln.split(": ", 1)[1] for ln in p.stderr.splitlines() if "Used" in ln]
                line += "  ptxas: " + "; ".join(used)
        print(line)
    return 1 if failed else 0


def run(chosen, target):
    try:
        import torch
    except ImportError:
        print("bench_gpu: torch is needed for the inputs and the reference times")
        return 0
    import triton_kernels

    rows = []
    for name, (fname, mod, work, unit) in chosen.items():
        lib = tir_mlir.build(mod, target=target)
        args = torch_inputs(name, torch)
        lib[fname](*args)  # DLPack: in place, no copies
        torch.cuda.synchronize()
        ref = torch_op(name, torch)(*args[:-1])
        tol = {"matmul_f16": 2e-2, "matmul_bf16": 5e-2}.get(name, 1e-3)
        ok = torch.allclose(args[-1], ref, rtol=tol, atol=tol)
        ours = lib.time_evaluator(fname, number=10, repeat=5)(*args).median
        theirs = time_torch(lambda: torch_op(name, torch)(*args[:-1]), torch)
        try:
            tri = triton_kernels.time_op(name, args, torch)
        except Exception as e:  # noqa: BLE001 - a Triton version that rejects the kernel
            print(
                f"bench_gpu: the Triton {name} kernel failed ({type(e).__name__}: "
                f"{str(e)[:200]}); no Triton time for it",
                file=sys.stderr,
            )
            tri = None
        rate = work / ours / (1e12 if unit == "TFLOP/s" else 1e9)
        rows.append((name, ok, ours, theirs, tri, rate, unit))
    print(
        f"{'kernel':11s} {'check':5s} {'tir_mlir':>10s} {'torch':>10s} {'triton':>10s} "
        f"{'/torch':>7s} {'/triton':>7s}  rate"
    )
    for name, ok, ours, theirs, tri, rate, unit in rows:
        tri_s = f"{tri * 1e3:8.3f}ms" if tri else f"{'-':>10s}"
        ratio_tri = f"{ours / tri:7.2f}" if tri else f"{'-':>7s}"
        print(
            f"{name:11s} {'ok' if ok else 'BAD':5s} {ours * 1e3:8.3f}ms {theirs * 1e3:8.3f}ms "
            f"{tri_s} {ours / theirs:7.2f} {ratio_tri}  {rate:.1f} {unit}"
        )
    return 0 if all(r[1] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
