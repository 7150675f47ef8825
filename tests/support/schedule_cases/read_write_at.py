"""Programs and schedules of read_write_at (tests/schedule/test_schedule_read_write_at.py runs them; the trace
tests replay them)."""

from shared_programs import CONV2D_PAD_C4_6X6 as CONV, MATMUL_16 as MATMUL, MM_RELU_16 as MM_RELU


def _tiled(sch):
    c = sch.get_block("C")
    i, j, k = sch.get_loops(c)
    i0, i1 = sch.split(i, [None, 4])
    k0, k1 = sch.split(k, [None, 4])
    sch.reorder(i0, j, k0, i1, k1)
    return c, i0, j, k0


def _read_tile(sch):
    c, _, _, k0 = _tiled(sch)
    sch.read_at(k0, c, 0, "shared")


def _read_both(sch):
    c, i0, j, k0 = _tiled(sch)
    sch.read_at(k0, c, 1, "shared")
    sch.read_at(i0, c, 0, "local")


def _write_tile(sch):
    c, _, j, _ = _tiled(sch)
    sch.write_at(j, c, 0, "local")


def _write_outer(sch):
    c, i0, _, _ = _tiled(sch)
    sch.write_at(i0, c, 0, "local")


def _write_then_read(sch):
    y = sch.get_block("Y")
    sch.write_at(sch.get_loops(y)[0], y, 0, "local")
    c = sch.get_block("C")
    sch.read_at(sch.get_loops(c)[1], c, 0, "local")


def _conv_read(sch):
    b = sch.get_block("B")
    sch.read_at(sch.get_loops(b)[2], b, 1, "shared")


SCHEDULES = {
    "read_tile": (MATMUL, _read_tile),
    "read_both": (MATMUL, _read_both),
    "read_whole": (
        MATMUL,
        lambda sch: sch.read_at(
            sch.get_loops(sch.get_block("C"))[0], sch.get_block("C"), 1, "shared"
        ),
    ),
    "write_tile": (MATMUL, _write_tile),
    "write_outer": (MATMUL, _write_outer),
    "write_then_read": (MM_RELU, _write_then_read),
    "conv_read_weights": (CONV, _conv_read),
}
