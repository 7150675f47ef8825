"""Small scheduled programs for the hand-off tests: each uses parallel, vectorize, a
cache_write tile and compute_at (or reverse_compute_at), the schedule forms whose semantics
the emitted stages must keep."""

import tir_mlir

MM_RELU = """
@T.prim_func
def mm_relu(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32"),
            C: T.Buffer((64, 64), "float32")):
    T.func_attr({"tir.noalias": True})
    Y = T.alloc_buffer((64, 64), "float32")
    for i, j, k in T.grid(64, 64, 64):
        with T.block("Y"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                Y[vi, vj] = T.float32(0)
            Y[vi, vj] = Y[vi, vj] + A[vi, vk] * B[vk, vj]
    for i, j in T.grid(64, 64):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = T.max(Y[vi, vj], T.float32(0))
"""

CONV2D = """
@T.prim_func
def conv2d(A: T.Buffer((1, 8, 10, 10), "float32"), W: T.Buffer((16, 8, 3, 3), "float32"),
           B: T.Buffer((1, 16, 8, 8), "float32")):
    T.func_attr({"tir.noalias": True})
    for n, f, y, x, c, ky, kx in T.grid(1, 16, 8, 8, 8, 3, 3):
        with T.block("B"):
            vn, vf, vy, vx, vc, vky, vkx = T.axis.remap("SSSSRRR", [n, f, y, x, c, ky, kx])
            with T.init():
                B[vn, vf, vy, vx] = T.float32(0)
            B[vn, vf, vy, vx] = (B[vn, vf, vy, vx]
                                 + A[vn, vc, vy + vky, vx + vkx] * W[vf, vc, vky, vkx])
"""

SOFTMAX = """
@T.prim_func
def softmax(A: T.Buffer((16, 64), "float32"), B: T.Buffer((16, 64), "float32")):
    T.func_attr({"tir.noalias": True})
    M = T.alloc_buffer((16,), "float32")
    E = T.alloc_buffer((16, 64), "float32")
    S = T.alloc_buffer((16,), "float32")
    for i, j in T.grid(16, 64):
        with T.block("M"):
            vi, vj = T.axis.remap("SR", [i, j])
            with T.init():
                M[vi] = T.float32(-3.4028234663852886e38)
            M[vi] = T.max(M[vi], A[vi, vj])
    for i, j in T.grid(16, 64):
        with T.block("E"):
            vi, vj = T.axis.remap("SS", [i, j])
            E[vi, vj] = T.exp(A[vi, vj] - M[vi])
    for i, j in T.grid(16, 64):
        with T.block("S"):
            vi, vj = T.axis.remap("SR", [i, j])
            with T.init():
                S[vi] = T.float32(0)
            S[vi] = S[vi] + E[vi, vj]
    for i, j in T.grid(16, 64):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = E[vi, vj] / S[vi]
"""


def mm_relu():
    """Y computed in a local cache_write tile per (parallel i_0, j_0) tile of 8x16, its inner
    j vectorized; the write-back and the ReLU moved under j_0 and vectorized."""
    sch = tir_mlir.Schedule(tir_mlir.parse(MM_RELU))
    y = sch.get_block("Y")
    write_back = sch.cache_write(y, 0, "local")
    i, j, k = sch.get_loops(y)
    i0, i1 = sch.split(i, factors=[None, 8])
    j0, j1 = sch.split(j, factors=[None, 16])
    sch.reorder(i0, j0, k, i1, j1)
    sch.vectorize(j1)
    sch.parallel(i0)
    for block in (write_back, sch.get_block("C")):
        sch.reverse_compute_at(block, j0)
        sch.vectorize(sch.get_loops(block)[-1])
    return sch.mod


def conv2d():
    """Output tiles of 4 filters x 8 columns computed in a local cache_write tile, filter
    tiles parallel, columns vectorized; the write-back under the row loop."""
    sch = tir_mlir.Schedule(tir_mlir.parse(CONV2D))
    b = sch.get_block("B")
    write_back = sch.cache_write(b, 0, "local")
    n, f, y, x, c, ky, kx = sch.get_loops(b)
    f0, f1 = sch.split(f, factors=[None, 4])
    sch.reorder(n, f0, y, c, ky, kx, f1, x)
    sch.vectorize(x)
    sch.parallel(f0)
    sch.reverse_compute_at(write_back, y)
    sch.vectorize(sch.get_loops(write_back)[-1])
    return sch.mod


def softmax():
    """Rows in parallel; the max, exp and sum computed at the row (compute_at), the output
    row through a local cache_write buffer; the exp, division and write-back vectorized."""
    sch = tir_mlir.Schedule(tir_mlir.parse(SOFTMAX))
    out = sch.get_block("B")
    write_back = sch.cache_write(out, 0, "local")
    i = sch.get_loops(out)[0]
    sch.parallel(i)
    for name in ("S", "E", "M"):
        sch.compute_at(sch.get_block(name), i)
    sch.reverse_compute_at(write_back, i)
    for block in (sch.get_block("E"), out, write_back):
        sch.vectorize(sch.get_loops(block)[-1])
    return sch.mod


WORKLOADS = {"mm_relu": mm_relu, "conv2d": conv2d, "softmax": softmax}
