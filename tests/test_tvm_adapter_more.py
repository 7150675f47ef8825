"""TVM-differential tests for the failure classes found by running the rest of TVM's own
schedule test files (cache_read_write, read_write_at, utilities, ...) through
benchmarks/tvm_schedule_tests.py, each on a program of the same kind written here."""
import pytest

pytest.importorskip("tvm")

from schedule_differential import assert_agrees  # noqa: E402

# a 64x64 tile per thread block, 4x4 per thread, k in steps of 4
GPU_MM = '''
@T.prim_func
def main(A: T.Buffer((128, 64), "float32"), B: T.Buffer((64, 128), "float32"),
         C: T.Buffer((128, 128), "float32")):
    for bx in T.thread_binding(2, thread="blockIdx.x"):
        for by in T.thread_binding(2, thread="blockIdx.y"):
            for ty in T.thread_binding(4, thread="threadIdx.y"):
                for tx in T.thread_binding(4, thread="threadIdx.x"):
                    for k0 in range(16):
                        for k1, i, j in T.grid(4, 16, 16):
                            with T.block("C"):
                                vi = T.axis.spatial(128, bx * 64 + ty * 16 + i)
                                vj = T.axis.spatial(128, by * 64 + tx * 16 + j)
                                vk = T.axis.reduce(64, k0 * 4 + k1)
                                with T.init():
                                    C[vi, vj] = T.float32(0)
                                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
'''


def _loops(s, name):
    return s.get_loops(s.get_block(name))


# --- read_at / write_at relax the region over the threads sharing the cache's scope ---------


@pytest.mark.parametrize("scope", ["shared", "local"])
@pytest.mark.parametrize("index", [1, 2])
def test_read_at_under_threads(scope, index):
    def fn(s):
        c = s.get_block("C")
        s.read_at(_loops(s, "C")[4], c, index, scope)
    assert_agrees(GPU_MM, fn, printer=True, numerics=False)


@pytest.mark.parametrize("scope", ["shared", "local"])
def test_write_at_under_threads(scope):
    def fn(s):
        c = s.get_block("C")
        s.write_at(_loops(s, "C")[3], c, 0, scope)
    assert_agrees(GPU_MM, fn, printer=True, numerics=False)


# --- error_render_level: "fast" gives TVM's short message, "none" none -------------------------
ONE_BLOCK = '''
@T.prim_func
def main(A: T.Buffer((8,), "float32")):
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            A[vi] = T.float32(0)
'''


@pytest.mark.parametrize("level", ["detail", "fast", "none"])
def test_error_render_level_of_a_missing_block(level):
    import tvm
    import tir_mlir
    theirs = tvm.tir.Schedule(tvm.script.from_source(ONE_BLOCK), error_render_level=level)
    ours = tir_mlir.Schedule(tir_mlir.parse(ONE_BLOCK), error_render_level=level)
    with pytest.raises(tvm.tir.ScheduleError) as t:
        theirs.get_block("missing")
    with pytest.raises(tir_mlir.ScheduleError) as o:
        ours.get_block("missing")
    if level == "detail":      # TVM adds the function's text; the reason is the same
        assert "Cannot find a block with the name: missing" in str(t.value)
        assert "Cannot find a block with the name: missing" in str(o.value)
    else:
        assert str(o.value) == str(t.value)
