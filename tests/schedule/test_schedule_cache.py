"""cache_read / cache_write / set_scope: printed result (TVM 0.21's), numerics, trace replay,
TVM differential, errors (message + module unchanged), and GPU-style staging on CPU."""

from schedule_check import check_all, check_error, parse, without_regions as _body
from schedule_check import check_all_regions_reinferred as check
from shared_programs import MATMUL_16 as MM, MM_RELU_16 as MM_RELU
from tir_mlir import Schedule


def test_cache_read_prints_like_tvm():
    sch = check(MM, lambda s: s.cache_read(s.get_block("C"), 0, "local"), "main")
    assert _body(sch.mod.script()).endswith("""
    A_local = T.alloc_buffer((16, 16), scope="local")
    for ax0, ax1 in T.grid(16, 16):
        with T.block("A_local"):
            v0, v1 = T.axis.remap("SS", [ax0, ax1])
            A_local[v0, v1] = A[v0, v1]
    for i, j, k in T.grid(16, 16, 16):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0.0)
            C[vi, vj] = C[vi, vj] + A_local[vi, vk] * B[vk, vj]""")
    assert 'sch.cache_read(block=b0, read_buffer_index=0, storage_scope="local"' in str(sch.trace)


def test_cache_write_prints_like_tvm():
    sch = check(MM, lambda s: s.cache_write(s.get_block("C"), 0, "local"), "main")
    assert _body(sch.mod.script()).endswith("""
    C_local = T.alloc_buffer((16, 16), scope="local")
    for i, j, k in T.grid(16, 16, 16):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C_local[vi, vj] = T.float32(0.0)
            C_local[vi, vj] = C_local[vi, vj] + A[vi, vk] * B[vk, vj]
    for ax0, ax1 in T.grid(16, 16):
        with T.block("C_local"):
            v0, v1 = T.axis.remap("SS", [ax0, ax1])
            C[v0, v1] = C_local[v0, v1]""")


def test_cache_read_of_intermediate_and_consumer_blocks():
    sch = check(
        MM_RELU,
        lambda s: s.cache_read(s.get_block("C"), 0, "shared", consumer_blocks=[s.get_block("C")]),
        "main",
    )
    assert "T.max(Y_shared[vi, vj]" in sch.mod.script()
    sch = check(
        MM_RELU,
        lambda s: s.cache_write(s.get_block("Y"), 0, "local", consumer_blocks=[s.get_block("C")]),
        "main",
    )
    assert "T.max(Y_local[vi, vj]" in sch.mod.script()


def test_set_scope():
    sch = check(MM_RELU, lambda s: s.set_scope(s.get_block("Y"), 0, "shared"), "main")
    # TVM renames the buffer `{name}_{scope}`
    assert 'Y_shared = T.alloc_buffer((16, 16), scope="shared")' in sch.mod.script()


def test_errors():
    sch = Schedule(parse(MM))
    c = sch.get_block("C")
    check_error(
        sch,
        lambda s: s.cache_read(c, 2, "local"),
        r"cache_read: block 'C' has 2 read buffer\(s\) \(A, B\); index 2 is out of range",
    )
    check_error(
        sch,
        lambda s: s.cache_write(c, 1, "local"),
        r"cache_write: block 'C' has 1 write buffer\(s\) \(C\); index 1",
    )
    check_error(
        sch,
        lambda s: s.set_scope(c, 0, "shared"),
        "set_scope: buffer 'C' written by block 'C' is a function parameter",
    )


def test_consumer_not_reading_is_ignored():
    """TVM ignores a given consumer that does not read the buffer: the copy is then dead."""
    sch = Schedule(parse(MM_RELU))
    y, c = sch.get_block("Y"), sch.get_block("C")
    sch.cache_read(y, 0, "local", consumer_blocks=[c])
    text = sch.mod.script()
    assert "A_local[v0, v1] = A[v0, v1]" in text and "A_local[vi" not in text


def test_gpu_style_staging_on_cpu_matmul():
    """cache_read into local + compute_at, cache_write + reverse_compute_at."""

    def sched(s):
        c = s.get_block("C")
        i, j, k = s.get_loops(c)
        a_local = s.cache_read(c, 0, "local")
        c_local = s.cache_write(c, 0, "local")
        s.compute_at(a_local, k)
        s.reverse_compute_at(c_local, i)

    sch = check(MM, sched, "main")
    assert 'scope="local"' in sch.mod.script()


def test_cache_read_of_a_buffer_computed_in_the_consumers_loop():
    """After compute_at the writer of Y runs inside C's loop: the copy goes inside that loop,
    right after the writer, over what it writes per iteration (TVM's place; a copy after the
    loop would be read before it is written)."""

    def sched(s):
        c = s.get_block("C")
        s.compute_at(s.get_block("Y"), s.get_loops(c)[0])
        s.cache_read(c, 0, "local")

    sch = check(MM_RELU, sched, "main")
    text = sch.mod.script()
    assert text.index('T.block("Y_local")') < text.index('T.block("C")')


def test_cache_blocks_named_by_block_name_are_found():
    """cache_read/cache_write given block names (TVM's string form) leave an index that finds
    the new cache blocks by name (a stale index once missed them: 'Cannot find B_local')."""
    sch = Schedule(parse(MM_RELU))
    a = sch.cache_read("Y", "A", "global")
    y = sch.cache_write("C", "C", "local")
    assert sch.get(sch.get_block("A_global")) == sch.get(a)
    assert sch.get(sch.get_block("C_local")) == sch.get(y)


def test_a_cache_read_and_a_cache_write_of_one_buffer_name_their_blocks_apart():
    """A cache_read and a cache_write of one buffer in one scope would both name their copy
    block `maxelem_local` (TVM does); the second is `maxelem_local_1`, so that the printed
    program parses back (found by the random-schedule round trip, seed 10467)."""
    import tir_mlir
    from schedule_random import program

    def schedule(sch):
        sch.cache_read(sch.get_block("exp"), 1, "local")
        sch.cache_write(sch.get_block("maxelem"), 0, "local")

    sch = check_all(program("softmax"), schedule, "softmax", tvm_diff=False)
    text = sch.mod.script()
    assert 'T.block("maxelem_local")' in text and 'T.block("maxelem_local_1")' in text
    assert tir_mlir.parse(text).script() == text


# TVM's nested_buffer_access: A's index is a load of B
NESTED = """
@T.prim_func
def main(A: T.Buffer((T.int64(7), T.int64(512)), "float32"), B: T.Buffer((T.int64(1),), "int32"), C: T.Buffer((T.int64(1), T.int64(512)), "float32")):
    for ax0, ax1 in T.grid(T.int64(1), T.int64(512)):
        with T.block("C"):
            v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax1])
            C[v_ax0, v_ax1] = A[B[v_ax0], v_ax1]
"""


def test_cache_read_of_a_load_inside_an_index():
    """TVM orders reads as it visits them, an access before the loads in its indices:
    `A[B[i], j]` reads A (index 0), then B (index 1), so cache_read(C, 1) caches B (TVM's
    expected text), where program order (B's load first) would cache A."""
    import numpy as np
    from schedule_check import check_replay, run

    sch = Schedule(parse(NESTED))
    sch.cache_read("C", 1, "global")
    assert """
    B_global = T.alloc_buffer((T.int64(1),), "int32")
    for ax0 in range(T.int64(1)):
        with T.block("B_global"):
            v0 = T.axis.spatial(T.int64(1), ax0)
            T.reads(B[v0])
            T.writes(B_global[v0])
            B_global[v0] = B[v0]
    for ax0, ax1 in T.grid(T.int64(1), T.int64(512)):
        with T.block("C"):
            v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax1])
            T.reads(A[B_global[v_ax0], v_ax1], B_global[v_ax0])
            T.writes(C[v_ax0, v_ax1])
            C[v_ax0, v_ax1] = A[B_global[v_ax0], v_ax1]""" in sch.mod.script()
    check_replay(sch, parse(NESTED))
    a = np.random.default_rng(0).standard_normal((7, 512)).astype("float32")
    args = [a, np.array([5], "int32"), np.zeros((1, 512), "float32")]
    np.testing.assert_array_equal(run(sch.mod, "main", args)[2], a[5:6])


UINT8_MAX = """
@T.prim_func
def main(X: T.Buffer((8,), "uint8"), Y: T.Buffer((8,), "uint8")):
    Z = T.alloc_buffer((8,), "uint8")
    for i in range(8):
        with T.block("Z"):
            vi = T.axis.spatial(8, i)
            Z[vi] = T.max(X[vi], T.uint8(3))
    for i in range(8):
        with T.block("Y"):
            vi = T.axis.spatial(8, i)
            Y[vi] = T.max(Z[vi], T.uint8(200))
"""


def test_caches_of_unsigned_buffers_stay_unsigned():
    """A cache of a uint8 parameter or buffer is uint8 (an int8 cache compared 252 as -4)."""

    def caches(s):
        s.cache_read(s.get_block("Z"), 0, "global")
        s.cache_read(s.get_block("Y"), 0, "local")
        s.cache_write(s.get_block("Y"), 0, "local")

    sch = check(UINT8_MAX, caches, "main")
    text = sch.mod.script()
    assert text.count('T.alloc_buffer((8,), "uint8"') == 4 and "T.Cast" not in text
