"""Programs of the failure classes found by running TVM's own schedule tests through
benchmarks/tvm_schedule_tests.py (used by tests/test_tvm_adapter_classes*.py)."""

# GPU builtins on buffer pointers; T.reads/T.writes the writer widened
OPAQUE = """
@T.prim_func
def main(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8, 8), "float32")):
    for i, j in T.grid(8, 8):
        with T.block("A"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads()
            T.writes(A[0:8, 0:8])
            A[vi, vj] = T.float32(1.0)
    for i, j in T.grid(8, 8):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads()
            T.writes(B[0:8, 0:8])
            T.tvm_fill_fragment(B.data, 8, 8, 8, 0, vi * 8 + vj)
"""

# a padding producer under non-dividing tiles (decompose_padding keeps the tile's T.where)
PADDED_POOL = """
@T.prim_func
def main(x: T.Buffer((30,), "int32"), y: T.Buffer((30,), "int32")):
    pad = T.alloc_buffer((36,), "int32")
    for i in range(36):
        with T.block("pad"):
            vi = T.axis.spatial(36, i)
            pad[vi] = T.if_then_else(3 <= vi and vi < 33, x[vi - 3], 0)
    for i, r in T.grid(30, 7):
        with T.block("pool"):
            vi, vr = T.axis.remap("SR", [i, r])
            with T.init():
                y[vi] = 0
            y[vi] = y[vi] + pad[vi + vr]
"""

# a buffer written and read through T.match_buffer views
MATCHED = """
@T.prim_func
def main(A: T.Buffer((16, 4), "float32"), C: T.Buffer((16, 4), "float32")):
    B = T.alloc_buffer((16, 4))
    for i in range(16):
        with T.block("B"):
            vi = T.axis.spatial(16, i)
            Bv = T.match_buffer(B[vi, 0:4], (4,), offset_factor=1)
            for j in range(4):
                Bv[j] = A[vi, j] * T.float32(3)
    for i, j in T.grid(16, 4):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            Bw = T.match_buffer(B[vi, vj], (), offset_factor=1)
            C[vi, vj] = Bw[()] - T.float32(1)
"""

# a reduction block nested in a spatial block
NESTED = """
@T.prim_func
def main(A: T.Buffer((4, 8, 8), "float32"), B: T.Buffer((4, 8), "float32")):
    for i in range(4):
        with T.block("outer"):
            vi = T.axis.spatial(4, i)
            for k, l in T.grid(8, 8):
                with T.block("inner"):
                    vk, vl = T.axis.remap("SR", [k, l])
                    with T.init():
                        B[vi, vk] = T.float32(0)
                    B[vi, vk] = B[vi, vk] + A[vi, vk, vl]
"""

# a reduction bound through a non-quasi-affine binding
NOT_QUASI_AFFINE = """
@T.prim_func
def main(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16,), "float32")):
    for i, k in T.grid(16, 4):
        with T.block("B"):
            vi = T.axis.spatial(16, i)
            vk = T.axis.reduce(16, k * k // 2)
            with T.init():
                B[vi] = T.float32(0)
            B[vi] = B[vi] + A[vi, vk]
"""

# a row sum whose reduction is split (rfactor of either part), with unit loops (one bound)
ROWSUM_SPLIT = """
@T.prim_func
def main(A: T.Buffer((8, 32), "float32"), B: T.Buffer((8,), "float32")):
    for u, i, w, k0, k1 in T.grid(1, 8, 1, 4, 8):
        with T.block("B"):
            vi = T.axis.spatial(8, u * 8 + i)
            vk = T.axis.reduce(32, k0 * 8 + k1)
            with T.init():
                B[vi] = T.float32(0)
            B[vi] = B[vi] + A[vi, vk]
"""

# rfactor refusals: init and update at different indices; an init binding a let; a loop bound
# to both a spatial and a reduction iter; a reduction over part of a buffer read in full later
RFACTOR_REFUSED = {
    "init_index": """
@T.prim_func
def main(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8, 8), "float32")):
    for i, j, k in T.grid(8, 8, 8):
        with T.block("B"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                B[vi, vj] = T.float32(0)
            B[vj, vi] = B[vj, vi] + A[vi, vk]
""",
    "init_let": """
@T.prim_func
def main(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8,), "float32")):
    for i, k in T.grid(8, 8):
        with T.block("B"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                zero: T.float32 = T.float32(0)
                B[vi] = zero
            B[vi] = B[vi] + A[vi, vk]
""",
    "shared_loop": """
@T.prim_func
def main(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8,), "float32")):
    for io, f, ki in T.grid(2, 16, 2):
        with T.block("B"):
            vi = T.axis.spatial(8, io * 4 + f // 4)
            vk = T.axis.reduce(8, f % 4 * 2 + ki)
            with T.init():
                B[vi] = T.float32(0)
            B[vi] = B[vi] + A[vi, vk]
""",
    "not_covered": """
@T.prim_func
def main(A: T.Buffer((16, 16), "float32"), D: T.Buffer((16,), "float32")):
    C = T.alloc_buffer((16,))
    for i, k in T.grid(8, 16):
        with T.block("C"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                C[vi] = T.float32(0)
            C[vi] = C[vi] + A[vi, vk]
    for i in range(16):
        with T.block("D"):
            vi = T.axis.spatial(16, i)
            D[vi] = C[vi]
""",
}

# a reduction consuming, row block by row block, what a tiled producer writes
TILED_THEN_REDUCED = """
@T.prim_func
def main(A: T.Buffer((16, 4), "float32"), B: T.Buffer((4,), "float32")):
    P = T.alloc_buffer((16, 4))
    for io, ii, j in T.grid(4, 4, 4):
        with T.block("P"):
            vi = T.axis.spatial(16, io * 4 + ii)
            vj = T.axis.spatial(4, j)
            P[vi, vj] = A[vi, vj] * T.float32(2)
    for j, k in T.grid(4, 16):
        with T.block("B"):
            vj, vk = T.axis.remap("SR", [j, k])
            with T.init():
                B[vj] = T.float32(0)
            B[vj] = B[vj] + P[vk, vj]
"""

# a repeat: each 8-element tile of the output reads one element of the producer
TILED_REPEAT = """
@T.prim_func
def main(x: T.Buffer((4,), "float32"), y: T.Buffer((64,), "float32")):
    t = T.alloc_buffer((4,))
    for i in range(4):
        with T.block("t"):
            vi = T.axis.spatial(4, i)
            t[vi] = x[vi] + T.float32(1)
    for io, ii in T.grid(8, 8):
        with T.block("y"):
            vi = T.axis.spatial(64, io * 8 + ii)
            y[vi] = t[vi // 16]
"""

# reindex of a read whose index drops an iter var once ranges fold it (c // 8 is 0 for c < 8)
FOLDED_READ = """
@T.prim_func
def main(A: T.Buffer((4, 3), "float32"), W: T.Buffer((8, 3), "float32"), C: T.Buffer((4, 8), "float32")):
    for i, c, r in T.grid(4, 8, 3):
        with T.block("C"):
            vi, vc, vr = T.axis.remap("SSR", [i, c, r])
            T.reads(C[vi, vc], A[vi, vc // 8 * 3 + vr], W[vc, vr])
            T.writes(C[vi, vc])
            with T.init():
                C[vi, vc] = T.float32(0)
            C[vi, vc] = C[vi, vc] + A[vi, vc // 8 * 3 + vr] * W[vc, vr]
"""

# a producer and consumer over a buffer with a unit leading dimension (B[0, vi, vj])
UNIT_DIM = """
@T.prim_func
def main(A: T.Buffer((1, 16, 16), "float32"), C: T.Buffer((1, 16, 16), "float32")):
    B = T.alloc_buffer((1, 16, 16))
    for io, jo, ii, ji in T.grid(4, 4, 4, 4):
        with T.block("B"):
            vi = T.axis.spatial(16, io * 4 + ii)
            vj = T.axis.spatial(16, jo * 4 + ji)
            B[0, vi, vj] = A[0, vi, vj] * T.float32(2)
    for i, j in T.grid(16, 16):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[0, vi, vj] = B[0, vi, vj] + T.float32(1)
"""

# a binding written constant first (`8 + i`), as TVM keeps it
CONST_FIRST = """
@T.prim_func
def main(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    for i in range(8):
        with T.block("hi"):
            vi = T.axis.spatial(16, 8 + i)
            B[vi] = A[vi - 8]
    for i in range(8):
        with T.block("lo"):
            vi = T.axis.spatial(16, i)
            B[vi] = A[vi + 8]
"""
