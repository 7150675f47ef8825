"""Workloads of realistic size with the schedules a TVM user writes every day (TVM 0.21 API only,
so the same function schedules a `tvm.tir.Schedule` and a `tir_mlir.Schedule`).

CASES: name -> (TVMScript text, schedule function). Every program's function is named `main`.
Used by bench_vs_tvm.py next to the classic schedules of the TVM-differential test suite.
"""


def _prim(params, body, allocs=""):
    return f"""
@T.prim_func
def main({params}):
    T.func_attr({{"global_symbol": "main", "tir.noalias": True}})
{allocs}{body}"""


def matmul(n, m=None, k=None):
    m, k = m or n, k or n
    return _prim(
        f'A: T.Buffer(({n}, {k}), "float32"), B: T.Buffer(({k}, {m}), "float32"), '
        f'C: T.Buffer(({n}, {m}), "float32")',
        f"""    for i, j, k in T.grid({n}, {m}, {k}):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
""",
    )


BATCH_MATMUL = _prim(
    'A: T.Buffer((16, 128, 128), "float32"), B: T.Buffer((16, 128, 128), "float32"), '
    'C: T.Buffer((16, 128, 128), "float32")',
    """    for b, i, j, k in T.grid(16, 128, 128, 128):
        with T.block("C"):
            vb, vi, vj, vk = T.axis.remap("SSSR", [b, i, j, k])
            with T.init():
                C[vb, vi, vj] = T.float32(0)
            C[vb, vi, vj] = C[vb, vi, vj] + A[vb, vi, vk] * B[vb, vk, vj]
""",
)

CONV1D = _prim(  # NCW, input pre-padded: 1x64x1026 -> 1x64x1024, kernel 3
    'A: T.Buffer((1, 64, 1026), "float32"), W: T.Buffer((64, 64, 3), "float32"), '
    'B: T.Buffer((1, 64, 1024), "float32")',
    """    for n, f, x, rc, rx in T.grid(1, 64, 1024, 64, 3):
        with T.block("B"):
            vn, vf, vx, vrc, vrx = T.axis.remap("SSSRR", [n, f, x, rc, rx])
            with T.init():
                B[vn, vf, vx] = T.float32(0)
            B[vn, vf, vx] = B[vn, vf, vx] + A[vn, vrc, vx + vrx] * W[vf, vrc, vrx]
""",
)

CONV2D = _prim(  # NCHW with a padding block: 1x64x56x56, 64 3x3 filters, pad 1
    'A: T.Buffer((1, 64, 56, 56), "float32"), W: T.Buffer((64, 64, 3, 3), "float32"), '
    'B: T.Buffer((1, 64, 56, 56), "float32")',
    """    for n, c, h, w in T.grid(1, 64, 58, 58):
        with T.block("pad"):
            vn, vc, vh, vw = T.axis.remap("SSSS", [n, c, h, w])
            P[vn, vc, vh, vw] = T.if_then_else(1 <= vh and vh < 57 and 1 <= vw and vw < 57, A[vn, vc, vh - 1, vw - 1], T.float32(0))
    for n, f, y, x, rc, ry, rx in T.grid(1, 64, 56, 56, 64, 3, 3):
        with T.block("B"):
            vn, vf, vy, vx, vrc, vry, vrx = T.axis.remap("SSSSRRR", [n, f, y, x, rc, ry, rx])
            with T.init():
                B[vn, vf, vy, vx] = T.float32(0)
            B[vn, vf, vy, vx] = B[vn, vf, vy, vx] + P[vn, vrc, vy + vry, vx + vrx] * W[vf, vrc, vry, vrx]
""",
    "    P = T.alloc_buffer((1, 64, 58, 58))\n",
)

DEPTHWISE = _prim(  # NCHW depthwise 3x3, input pre-padded: 1x128x58x58 -> 1x128x56x56
    'A: T.Buffer((1, 128, 58, 58), "float32"), W: T.Buffer((128, 3, 3), "float32"), '
    'B: T.Buffer((1, 128, 56, 56), "float32")',
    """    for n, c, y, x, ry, rx in T.grid(1, 128, 56, 56, 3, 3):
        with T.block("B"):
            vn, vc, vy, vx, vry, vrx = T.axis.remap("SSSSRR", [n, c, y, x, ry, rx])
            with T.init():
                B[vn, vc, vy, vx] = T.float32(0)
            B[vn, vc, vy, vx] = B[vn, vc, vy, vx] + A[vn, vc, vy + vry, vx + vrx] * W[vc, vry, vrx]
""",
)

ADD = _prim(
    'A: T.Buffer((1024, 1024), "float32"), B: T.Buffer((1024, 1024), "float32"), '
    'C: T.Buffer((1024, 1024), "float32")',
    """    for i, j in T.grid(1024, 1024):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = A[vi, vj] + B[vi, vj]
""",
)

SOFTMAX = _prim(
    'A: T.Buffer((256, 1024), "float32"), B: T.Buffer((256, 1024), "float32")',
    """    for i, k in T.grid(256, 1024):
        with T.block("maxelem"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                maxelem[vi] = T.float32(-3.4028234663852886e38)
            maxelem[vi] = T.max(maxelem[vi], A[vi, vk])
    for i, j in T.grid(256, 1024):
        with T.block("exp"):
            vi, vj = T.axis.remap("SS", [i, j])
            expv[vi, vj] = T.exp(A[vi, vj] - maxelem[vi])
    for i, k in T.grid(256, 1024):
        with T.block("expsum"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                expsum[vi] = T.float32(0)
            expsum[vi] = expsum[vi] + expv[vi, vk]
    for i, j in T.grid(256, 1024):
        with T.block("norm"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = expv[vi, vj] / expsum[vi]
""",
    "    maxelem = T.alloc_buffer((256,))\n    expv = T.alloc_buffer((256, 1024))\n"
    "    expsum = T.alloc_buffer((256,))\n",
)


# --- matmul schedules -----------------------------------------------------------------------


def mm_reduction_outside(sch):
    """k outside a 4x64 tile, init left inside the vectorized loop (no decompose)."""
    b = sch.get_block("C")
    i, j, k = sch.get_loops(b)
    i0, i1 = sch.split(i, factors=[None, 4])
    j0, j1 = sch.split(j, factors=[None, 64])
    sch.reorder(i0, j0, k, i1, j1)
    _, j1i = sch.split(j1, factors=[None, 16])
    sch.vectorize(j1i)
    sch.parallel(i0)


def mm_reduction_outside_decomposed(sch):
    mm_reduction_outside(sch)
    b = sch.get_block("C")
    sch.decompose_reduction(b, sch.get_loops(b)[2])


def mm_tile_unroll(sch):
    """8x16 register tile: unroll i1, vectorize j1, k outside, decomposed init."""
    b = sch.get_block("C")
    i, j, k = sch.get_loops(b)
    i0, i1 = sch.split(i, factors=[None, 8])
    j0, j1 = sch.split(j, factors=[None, 16])
    sch.reorder(i0, j0, k, i1, j1)
    sch.unroll(i1)
    sch.vectorize(j1)
    sch.parallel(i0)
    sch.decompose_reduction(b, k)


def mm_cache_write_tile(sch):
    """cache_write "local" + reverse_compute_at of a 4x64 tile (benchmarks/schedules)."""
    from schedules.matmul_1024 import schedule as tile

    tile(sch)


def mm_hand(sch):
    """../shared/bench/hand_mm.py's schedule (a copy: benchmarks/schedules/hand_mm.py)."""
    from schedules.hand_mm import schedule

    schedule(sch)


def mm_parallel_vectorize(sch):
    """The first schedule of every tutorial: parallel rows, k then vectorized j."""
    b = sch.get_block("C")
    i, j, k = sch.get_loops(b)
    sch.reorder(i, k, j)
    _, j1 = sch.split(j, factors=[None, 16])
    sch.vectorize(j1)
    sch.parallel(i)


def mm_strided_vectorize(sch):
    """Vectorizing a strided loop (i innermost): LLVM must not pick gathers."""
    b = sch.get_block("C")
    i, j, k = sch.get_loops(b)
    i0, i1 = sch.split(i, factors=[None, 8])
    sch.reorder(j, i0, k, i1)
    sch.vectorize(i1)
    sch.parallel(j)


# --- other workloads -------------------------------------------------------------------------


def bmm_tile(sch):
    b = sch.get_block("C")
    bb, i, j, k = sch.get_loops(b)
    i0, i1 = sch.split(i, factors=[None, 4])
    j0, j1 = sch.split(j, factors=[None, 32])
    sch.reorder(bb, i0, j0, k, i1, j1)
    _, j1i = sch.split(j1, factors=[None, 16])
    sch.unroll(i1)
    sch.vectorize(j1i)
    sch.parallel(sch.fuse(bb, i0))
    sch.decompose_reduction(b, k)


def conv1d_tile(sch):
    b = sch.get_block("B")
    n, f, x, rc, rx = sch.get_loops(b)
    f0, f1 = sch.split(f, factors=[None, 4])
    x0, x1 = sch.split(x, factors=[None, 32])
    sch.reorder(n, f0, x0, rc, rx, f1, x1)
    _, x1i = sch.split(x1, factors=[None, 16])
    sch.unroll(f1)
    sch.vectorize(x1i)
    sch.parallel(f0)
    sch.decompose_reduction(b, rc)


def conv2d_cache_write(sch):
    """Output tile in a local buffer; padding computed at the row loop."""
    b = sch.get_block("B")
    n, f, y, x, rc, ry, rx = sch.get_loops(b)
    f0, f1 = sch.split(f, factors=[None, 4])
    x0, x1 = sch.split(x, factors=[None, 16])
    sch.reorder(n, f0, y, x0, rc, ry, rx, f1, x1)
    local = sch.cache_write(b, 0, "local")
    sch.reverse_compute_at(local, x0)
    sch.unroll(f1)
    sch.vectorize(x1)
    sch.parallel(f0)
    sch.decompose_reduction(b, rc)
    sch.compute_inline(sch.get_block("pad"))


def depthwise_tile(sch):
    b = sch.get_block("B")
    n, c, y, x, ry, rx = sch.get_loops(b)
    x0, x1 = sch.split(x, factors=[None, 8])
    sch.reorder(n, c, y, ry, rx, x0, x1)
    sch.vectorize(x1)
    sch.parallel(c)
    sch.decompose_reduction(b, ry)


def add_parallel_vectorize(sch):
    b = sch.get_block("C")
    i, j = sch.get_loops(b)
    f = sch.fuse(i, j)
    f0, f1 = sch.split(f, factors=[None, 16])
    sch.vectorize(f1)
    sch.parallel(f0)


def softmax_fused_rows(sch):
    """Everything computed per row, rows in parallel, elementwise loops vectorized."""
    norm = sch.get_block("norm")
    i, j = sch.get_loops(norm)
    for name in ("expsum", "exp", "maxelem"):
        sch.compute_at(sch.get_block(name), i)
    sch.parallel(i)
    for name in ("exp", "norm"):
        j = sch.get_loops(sch.get_block(name))[-1]
        _, ji = sch.split(j, factors=[None, 16])
        sch.vectorize(ji)


CASES = {
    "mm512_reduction_outside": (matmul(512), mm_reduction_outside),
    "mm512_reduction_outside_decomposed": (matmul(512), mm_reduction_outside_decomposed),
    "mm512_tile_unroll": (matmul(512), mm_tile_unroll),
    "mm512_cache_write_tile": (matmul(512), mm_cache_write_tile),
    "mm512_parallel_vectorize": (matmul(512), mm_parallel_vectorize),
    "mm512_strided_vectorize": (matmul(512), mm_strided_vectorize),
    "mm1024_hand": (matmul(1024), mm_hand),
    "mm1024_cache_write_tile": (matmul(1024), mm_cache_write_tile),
    "mm1024_tile_unroll": (matmul(1024), mm_tile_unroll),
    "bmm16x128_tile": (BATCH_MATMUL, bmm_tile),
    "conv1d_tile": (CONV1D, conv1d_tile),
    "conv2d_cache_write": (CONV2D, conv2d_cache_write),
    "depthwise_tile": (DEPTHWISE, depthwise_tile),
    "add1M_parallel_vectorize": (ADD, add_parallel_vectorize),
    "softmax256x1024_fused_rows": (SOFTMAX, softmax_fused_rows),
}
