"""Schedules of the symbolic programs in schedule_programs.py, written once for TVM 0.21's
tir.Schedule and tir-mlir's (the same calls): case name -> (program, schedule function)."""


def split_guard(sch):
    i, _ = sch.get_loops(sch.get_block("C"))
    sch.split(i, [None, 4])


def fuse_split_vectorize(sch):
    i, j = sch.get_loops(sch.get_block("C"))
    outer, inner = sch.split(sch.fuse(i, j), [None, 8])
    sch.parallel(outer)
    sch.vectorize(inner)


def unroll_inner(sch):
    i, j = sch.get_loops(sch.get_block("C"))
    sch.unroll(j)
    sch.parallel(i)


def split_reorder(sch):
    i, k = sch.get_loops(sch.get_block("B"))
    i0, i1 = sch.split(i, [None, 4])
    sch.parallel(i0)
    k0, _ = sch.split(k, [None, 8])
    sch.reorder(k0, i1)


def fuse_symbolic(sch):
    i, k = sch.get_loops(sch.get_block("B"))
    sch.fuse(i, k)


def decompose(sch):
    b = sch.get_block("B")
    _, k = sch.get_loops(b)
    k0, _ = sch.split(k, [None, 8])
    sch.decompose_reduction(b, k0)


def rfactor_inner(sch):
    _, k = sch.get_loops(sch.get_block("B"))
    _, k1 = sch.split(k, [None, 4])
    sch.rfactor(k1, 0)


def rfactor_outer(sch):
    _, k = sch.get_loops(sch.get_block("B"))
    k0, _ = sch.split(k, [None, 4])
    sch.rfactor(k0, 0)


def cache_read_at(sch):
    b = sch.get_block("C")
    i, _, _ = sch.get_loops(b)
    i0, _ = sch.split(i, [None, 8])
    a = sch.cache_read(b, 0, "global")
    sch.compute_at(a, i0)


def cache_write_at(sch):
    b = sch.get_block("C")
    i, _, _ = sch.get_loops(b)
    i0, _ = sch.split(i, [None, 8])
    c = sch.cache_write(b, 0, "global")
    sch.reverse_compute_at(c, i0)


def tiled_matmul(sch):
    b = sch.get_block("C")
    i, j, k = sch.get_loops(b)
    i0, i1 = sch.split(i, [None, 16])
    j0, j1 = sch.split(j, [None, 8])
    sch.reorder(i0, j0, k, i1, j1)
    sch.parallel(i0)
    sch.vectorize(j1)
    sch.decompose_reduction(b, k)


def compute_at_symbolic_inner(sch):
    i, _ = sch.get_loops(sch.get_block("C"))
    sch.compute_at(sch.get_block("B"), i)


def reverse_compute_at_symbolic(sch):
    i, _ = sch.get_loops(sch.get_block("B"))
    sch.reverse_compute_at(sch.get_block("C"), i)


def categorical_split(sch):
    i, _ = sch.get_loops(sch.get_block("C"))
    f = sch.sample_categorical([4, 8, 16], [0.25, 0.25, 0.5], decision=1)
    sch.split(i, [None, f])


def perfect_tile_symbolic(sch):
    i, _ = sch.get_loops(sch.get_block("C"))
    sch.split(i, sch.sample_perfect_tile(i, n=3))


def split_assumed(sch):
    i, = sch.get_loops(sch.get_block("C"))
    sch.split(i, [None, 4])


def split_assumed_unguarded(sch):
    i, = sch.get_loops(sch.get_block("C"))
    sch.split(i, [None, 4], disable_predication=True)


def transform_layout_intermediate(sch):
    sch.transform_layout(sch.get_block("B"), ("write", 0), lambda i, j: (j, i))


def cache_read_reversed(sch):
    b = sch.get_block("B")
    i, = sch.get_loops(b)
    i0, _ = sch.split(i, [None, 4])
    sch.compute_at(sch.cache_read(b, 0, "global"), i0)


def fuse_split3_reorder(sch):
    """A fused loop over n * m split in three, its parts reordered (what RewriteUnboundBlock
    and TVM's GPU schedules do before binding them): the bindings divide by the sizes."""
    rest, bx, tx = sch.split(sch.fuse(*sch.get_loops(sch.get_block("B"))), [None, 256, 1024])
    sch.reorder(bx, tx, rest)


def fuse_split3_reorder_small(sch):
    """The same with tiles the test sizes exceed, in another order."""
    rest, bx, tx = sch.split(sch.fuse(*sch.get_loops(sch.get_block("B"))), [None, 4, 8])
    sch.reorder(tx, rest, bx)


def read_at_symbolic(sch):
    c = sch.get_block("C")
    _, j, _ = sch.get_loops(c)
    sch.read_at(j, c, 0, "shared")


def write_at_symbolic(sch):
    c = sch.get_block("C")
    i, _, _ = sch.get_loops(c)
    sch.write_at(i, c, 0, "shared")


def write_at_reduction(sch):
    b = sch.get_block("B")
    i, _ = sch.get_loops(b)
    sch.write_at(i, b, 0, "local")


CASES = {
    "split_guard": ("add", split_guard),
    "fuse_split_vectorize": ("add", fuse_split_vectorize),
    "unroll_inner": ("add", unroll_inner),
    "split_reorder": ("row_sum", split_reorder),
    "fuse_symbolic": ("row_sum", fuse_symbolic),
    "decompose": ("row_sum", decompose),
    "rfactor_inner": ("row_sum", rfactor_inner),
    "rfactor_outer": ("row_sum", rfactor_outer),
    "cache_read_at": ("matmul", cache_read_at),
    "cache_write_at": ("matmul", cache_write_at),
    "tiled_matmul": ("matmul", tiled_matmul),
    "compute_at_symbolic_inner": ("scale_sum", compute_at_symbolic_inner),
    "reverse_compute_at_symbolic": ("scale_sum", reverse_compute_at_symbolic),
    "categorical_split": ("add", categorical_split),
    "perfect_tile_symbolic": ("add", perfect_tile_symbolic),
    "split_assumed": ("add_assumed", split_assumed),
    "split_assumed_unguarded": ("add_assumed", split_assumed_unguarded),
    "transform_layout_intermediate": ("scale_sum", transform_layout_intermediate),
    "cache_read_reversed": ("reverse", cache_read_reversed),
    "fuse_split3_reorder": ("scale_sum", fuse_split3_reorder),
    "fuse_split3_reorder_small": ("scale_sum", fuse_split3_reorder_small),
    "read_at_symbolic": ("matmul", read_at_symbolic),
    "write_at_symbolic": ("matmul", write_at_symbolic),
    "write_at_reduction": ("row_sum", write_at_reduction),
}
