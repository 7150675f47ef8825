"""Programs and schedules of block_iters (tests/schedule/test_schedule_block_iters.py runs them; the trace
tests replay them)."""

from shared_programs import CONV2D_PAD_C4_6X6 as CONV, MATMUL_16 as MATMUL


def reorder_iters(name, order):
    return lambda sch: sch.reorder_block_iter_var(sch.get_block(name), order)


def _after_split(sch):
    b = sch.get_block("B")
    loops = sch.get_loops(b)
    sch.split(loops[4], [2, 2])
    sch.reorder_block_iter_var(b, [6, 5, 4, 3, 2, 1, 0])
    sch.reorder_block_iter_var(b, [1, 0, 2, 3, 4, 5, 6])


def _twice_then_split(sch):
    b = sch.get_block("C")
    sch.reorder_block_iter_var(b, [2, 0, 1])
    i, j, k = sch.get_loops(b)
    sch.split(j, [None, 4])


REORDERS = {
    "matmul": (MATMUL, reorder_iters("C", [2, 0, 1])),
    "identity": (MATMUL, reorder_iters("C", [0, 1, 2])),
    "conv_after_split": (CONV, _after_split),
    "then_split": (MATMUL, _twice_then_split),
    "padding_block": (CONV, reorder_iters("Apad", [3, 2, 1, 0])),
}


def layout(name, fn):
    return lambda sch: sch.transform_block_layout(sch.get_block(name), fn)


def _layout_then_split(sch):
    b = sch.get_block("C")
    sch.transform_block_layout(b, lambda i, j, k: (i * 16 + j, k))
    sch.split(sch.get_loops(b)[0], [None, 8])


LAYOUTS = {
    "permute": (MATMUL, layout("C", lambda i, j, k: (k, i, j))),
    "fuse_spatial": (MATMUL, layout("C", lambda i, j, k: (i * 16 + j, k))),
    "split_one": (MATMUL, layout("C", lambda i, j, k: (i // 4, i % 4, j, k))),
    "split_and_move": (MATMUL, layout("C", lambda i, j, k: (j // 4, i, k, j % 4))),
    "conv_fuse_reductions": (
        CONV,
        layout("B", lambda n, f, y, x, c, r, s: (n, f, y * 6 + x, c * 9 + r * 3 + s)),
    ),
    "padding_block": (CONV, layout("Apad", lambda n, c, h, w: (n, c * 64 + h * 8 + w))),
    "then_split": (MATMUL, _layout_then_split),
}
