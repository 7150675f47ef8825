"""The five kinds of everyday schedule issue 28 found 1.9-3.5x slower than TVM, written as a TVM
user writes them (TVM 0.21 API only: the same function schedules both sides), plus the issue's
`hand_mm`. Run by bench_vs_tvm.py (`--filter issue28/`), which times each side in its own
processes, TVM at the faster of its generic and host builds.

CASES: name -> (TVMScript text, schedule function). The programs are schedule_everyday's
workloads (tests/support/, on sys.path when bench_vs_tvm imports this).
"""

from schedule_everyday import bias_activation, conv2d_nchw, matmul, matmul_bias_relu
from vs_tvm_cases import mm_hand, mm_reduction_outside_decomposed


def gelu_bias_vectorized(sch):
    """Kind 1: an elementwise bias inlined into GELU (erf), rows parallel, 16-wide vectors."""
    sch.compute_inline(sch.get_block("bias"))
    i, j = sch.get_loops(sch.get_block("act"))
    _, j1 = sch.split(j, factors=[None, 16])
    sch.vectorize(j1)
    sch.parallel(i)


def conv2d_window_unrolled(sch):
    """Kind 2: conv2d NCHW with the 3x3 window unrolled and a 4-wide vector over the width."""
    b = sch.get_block("B")
    n, f, y, x, c, ry, rx = sch.get_loops(b)
    x0, x1 = sch.split(x, factors=[None, 4])
    sch.reorder(n, f, y, x0, c, ry, rx, x1)
    sch.unroll(ry)
    sch.unroll(rx)
    sch.vectorize(x1)
    sch.parallel(f)


def matmul_tile_no_vectorize(sch):
    """Kind 4: an 8x32x8 tile and no vectorize annotation (TVM leaves it to LLVM)."""
    b = sch.get_block("C")
    i, j, k = sch.get_loops(b)
    i0, i1 = sch.split(i, factors=[None, 8])
    j0, j1 = sch.split(j, factors=[None, 32])
    k0, k1 = sch.split(k, factors=[None, 8])
    sch.reorder(i0, j0, k0, i1, k1, j1)
    sch.parallel(i0)


def reduction_per_element(sch):
    """Kind 5: the matmul computed at each element of its bias + relu consumer."""
    i, j = sch.get_loops(sch.get_block("D"))
    sch.parallel(i)
    sch.compute_at(sch.get_block("C"), j)


CASES = {
    "issue28/gelu_erf_bias_vectorized": (
        bias_activation(512, 1024, "gelu_erf"),
        gelu_bias_vectorized,
    ),
    "issue28/conv2d_window_unrolled": (conv2d_nchw(64, 64, 56), conv2d_window_unrolled),
    "issue28/matmul512_reduction_outside_decomposed": (
        matmul(512, 512, 512),
        mm_reduction_outside_decomposed,  # kind 3: k outside a vectorized tile, decomposed
    ),
    "issue28/matmul512_tile_no_vectorize": (matmul(512, 512, 512), matmul_tile_no_vectorize),
    "issue28/matmul256_bias_relu_per_element": (
        matmul_bias_relu(256, 256, 256),
        reduction_per_element,
    ),
    "issue28/hand_mm1024": (matmul(1024, 1024, 1024), mm_hand),
}
