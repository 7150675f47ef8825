"""Triton kernels of the ops in bench_gpu.py (straightforward ones, as a Triton user writes them:
tiled tl.dot matmuls, one program per row for softmax and row sums, a direct convolution).
`time_op(name, args, torch)` times one on the bench's torch tensors (seconds), or returns None
when Triton is not installed. The fp32 matmul asks tl.dot for IEEE fp32 (not TF32), as the
SIMT tir_mlir kernel and torch's default compute.
"""

try:
    import triton
    import triton.language as tl
    import triton.testing
except ImportError:
    triton = None


if triton is not None:

    @triton.jit
    def _matmul(
        a_ptr,
        b_ptr,
        c_ptr,
        M,
        N,
        K,
        BLOCK_M: tl.constexpr,
        BLOCK_N: tl.constexpr,
        BLOCK_K: tl.constexpr,
        PRECISION: tl.constexpr,
    ):
        rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
        rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
        rk = tl.arange(0, BLOCK_K)
        a = a_ptr + rm[:, None] * K + rk[None, :]
        b = b_ptr + rk[:, None] * N + rn[None, :]
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for _ in range(0, K, BLOCK_K):  # the sizes are multiples of the blocks
            acc += tl.dot(tl.load(a), tl.load(b), input_precision=PRECISION)
            a += BLOCK_K
            b += BLOCK_K * N
        tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc)

    @triton.jit
    def _softmax(x_ptr, y_ptr, N, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        cols = tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * N + cols, mask=cols < N, other=-float("inf"))
        e = tl.exp(x - tl.max(x, axis=0))
        tl.store(y_ptr + row * N + cols, e / tl.sum(e, axis=0), mask=cols < N)

    @triton.jit
    def _row_sum(x_ptr, y_ptr, N, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        cols = tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * N + cols, mask=cols < N, other=0.0)
        tl.store(y_ptr + row, tl.sum(x, axis=0))

    @triton.jit
    def _conv2d(x_ptr, w_ptr, y_ptr, C, H, W, K, BLOCK: tl.constexpr):
        nk = tl.program_id(0)  # (image, filter)
        n, k = nk // K, nk % K
        p = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
        mask = p < H * W
        h, w = p // W, p % W
        acc = tl.zeros((BLOCK,), dtype=tl.float32)
        for c in range(0, C):
            for r in tl.static_range(3):
                for s in tl.static_range(3):
                    x = tl.load(
                        x_ptr + ((n * C + c) * (H + 2) + h + r) * (W + 2) + w + s,
                        mask=mask,
                        other=0.0,
                    )
                    acc += x * tl.load(w_ptr + ((k * C + c) * 3 + r) * 3 + s)
        tl.store(y_ptr + nk * H * W + p, acc, mask=mask)


def launcher(name, args, torch):
    """A no-argument function running the Triton kernel of `name` on the bench's inputs."""
    ins, out = args[:-1], torch.empty_like(args[-1])
    if name.startswith("matmul"):
        a, b = ins
        m, k = a.shape
        n = b.shape[1]
        f32 = name == "matmul_f32"
        bm, bn, bk = (64, 64, 16) if f32 else (128, 128, 32)
        grid = (m // bm, n // bn)
        return lambda: _matmul[grid](
            a,
            b,
            out,
            m,
            n,
            k,
            BLOCK_M=bm,
            BLOCK_N=bn,
            BLOCK_K=bk,
            PRECISION="ieee" if f32 else "tf32",
            num_warps=4 if f32 else 8,
        )
    if name in ("softmax", "row_sum"):
        x = ins[0]
        rows, n = x.shape
        kernel = _softmax if name == "softmax" else _row_sum
        return lambda: kernel[(rows,)](x, out, n, BLOCK=triton.next_power_of_2(n), num_warps=8)
    x, wt = ins
    n_img, c, hp, wp = x.shape
    k = wt.shape[0]
    h, w = hp - 2, wp - 2
    grid = (n_img * k, triton.cdiv(h * w, 256))
    return lambda: _conv2d[grid](x, wt, out, c, h, w, k, BLOCK=256, num_warps=4)


def time_op(name, args, torch):
    if triton is None:
        return None
    return triton.testing.do_bench(launcher(name, args, torch), warmup=10, rep=100) / 1e3
