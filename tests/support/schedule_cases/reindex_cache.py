"""Programs and schedules of reindex_cache (tests/schedule/test_schedule_reindex_cache.py runs them; the trace
tests replay them)."""

from shared_programs import CONV2D_PAD_C4_6X6 as CONV, MATMUL_16 as MATMUL, MM_RELU_16 as MM_RELU


def read(name, i, scope, fn):
    return lambda sch: sch.reindex_cache_read(sch.get_block(name), i, scope, fn)


def write(name, i, scope, fn):
    return lambda sch: sch.reindex_cache_write(sch.get_block(name), i, scope, fn)


def _read_after_split(sch):
    c = sch.get_block("C")
    i, j = sch.get_loops(c)
    sch.split(i, [None, 4])
    sch.reindex_cache_read(c, 0, "local", lambda i, j: (j, i))


def _write_under_shared_loop(sch):
    """The writer and its reader share loop i: the copy back goes inside it."""
    y, c = sch.get_block("Y"), sch.get_block("C")
    sch.reverse_compute_at(c, sch.get_loops(y)[0])
    sch.reindex_cache_write(y, 0, "local", lambda i, j, k: (j, i))


def _read_then_write(sch):
    c = sch.get_block("C")
    sch.reindex_cache_read(c, 1, "shared", lambda i, j, k: (j, k))
    sch.reindex_cache_write(c, 0, "local", lambda i, j, k: (i // 4, j, i % 4))


def _beside_a_blockized_reduction(sch):
    """A blockized reduction reads its accumulator inside: still a stage pipeline."""
    sch.blockize(sch.get_loops(sch.get_block("Y"))[0])
    sch.reindex_cache_write(sch.get_block("C"), 0, "local", lambda i, j: (j, i))


SCHEDULES = {
    "read_identity": (MATMUL, read("C", 0, "shared", lambda i, j, k: (i, k))),
    "read_transposed": (MATMUL, read("C", 1, "shared", lambda i, j, k: (j, k))),
    "read_split_map": (MATMUL, read("C", 0, "shared", lambda i, j, k: (i // 4, k, i % 4))),
    "read_after_writer": (MM_RELU, read("C", 0, "local", lambda i, j: (i, j))),
    "read_after_split": (MM_RELU, _read_after_split),
    "read_conv_im2col": (
        CONV,
        read("B", 0, "shared", lambda n, f, y, x, rc, ry, rx: (n, rc, y, ry, x, rx)),
    ),
    "read_conv_weights": (
        CONV,
        read("B", 1, "local", lambda n, f, y, x, rc, ry, rx: (rc, ry, rx, f)),
    ),
    "write_identity": (MATMUL, write("C", 0, "local", lambda i, j, k: (i, j))),
    "write_transposed_with_reader": (MM_RELU, write("Y", 0, "local", lambda i, j, k: (j, i))),
    "write_under_shared_loop": (MM_RELU, _write_under_shared_loop),
    "write_elementwise": (MM_RELU, write("C", 0, "shared", lambda i, j: (j // 8, i, j % 8))),
    "read_then_write": (MATMUL, _read_then_write),
    "write_split_unit_iter": (
        CONV,
        write("B", 0, "local", lambda n, f, y, x, rc, ry, rx: (n // 4, f, y, x, n % 4)),
    ),
    "beside_a_blockized_reduction": (MM_RELU, _beside_a_blockized_reduction),
}
