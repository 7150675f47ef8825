"""rfactor, decompose_reduction, blockize: printed result (TVM 0.21's), numerics, trace replay,
TVM differential, errors; and a GPU-style reduction schedule on matmul, conv2d and softmax."""

from pathlib import Path

from schedule_check import check_all as check_sched, check_error, parse
from shared_programs import MATMUL_16 as MM
from schedule_check import check_all_regions_reinferred as check_all
from tir_mlir import Schedule

PROGRAMS = Path(__file__).parent.parent / "data" / "programs"
ROWMAX = """
@T.prim_func
def main(A: T.Buffer((8, 32), "float32"), B: T.Buffer((8,), "float32")):
    for i, k in T.grid(8, 32):
        with T.block("B"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                B[vi] = T.float32(-3.4028234663852886e38)
            B[vi] = T.max(B[vi], A[vi, vk])
"""


def _body(text):
    return "\n".join(l for l in text.splitlines() if "T.reads" not in l and "T.writes" not in l)


def _rf(s):
    i, j, k = s.get_loops(s.get_block("C"))
    _, k1 = s.split(k, [None, 4])
    s.rfactor(k1, 0)


def test_rfactor_prints_like_tvm():
    sch = check_all(MM, _rf, "main")
    assert _body(sch.mod.script()).endswith("""
    C_rf = T.alloc_buffer((4, 16, 16))
    for i, j, k_0, k_1 in T.grid(16, 16, 4, 4):
        with T.block("C_rf"):
            vk_1, vi, vj, vk_0 = T.axis.remap("SSSR", [k_1, i, j, k_0])
            with T.init():
                C_rf[vk_1, vi, vj] = T.float32(0.0)
            C_rf[vk_1, vi, vj] = C_rf[vk_1, vi, vj] + A[vi, vk_0 * 4 + vk_1] * B[vk_0 * 4 + vk_1, vj]
    for i, j, k_1 in T.grid(16, 16, 4):
        with T.block("C"):
            vk_1, vi, vj = T.axis.remap("RSS", [k_1, i, j])
            with T.init():
                C[vi, vj] = T.float32(0.0)
            C[vi, vj] = C[vi, vj] + C_rf[vk_1, vi, vj]""")
    assert "sch.rfactor(loop=l5, factor_axis=0)" in str(sch.trace)


def test_rfactor_max_and_factor_axis():
    def sched(s):
        i, k = s.get_loops(s.get_block("B"))
        _, k1 = s.split(k, [None, 8])
        s.rfactor(k1, 1)

    sch = check_all(ROWMAX, sched, "main")
    assert "B_rf = T.alloc_buffer((8, 8))" in sch.mod.script()
    assert "B[vi] = T.max(B[vi], B_rf[vi, vk_1])" in sch.mod.script()


def test_decompose_reduction_prints_like_tvm():
    sch = check_all(
        MM,
        lambda s: s.decompose_reduction(s.get_block("C"), s.get_loops(s.get_block("C"))[1]),
        "main",
    )
    assert _body(sch.mod.script()).endswith("""
    for i in range(16):
        for j_init in range(16):
            with T.block("C_init"):
                vi, vj = T.axis.remap("SS", [i, j_init])
                C[vi, vj] = T.float32(0.0)
        for j, k in T.grid(16, 16):
            with T.block("C_update"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]""")


def test_blockize_prints_like_tvm():
    def sched(s):
        i, j, k = s.get_loops(s.get_block("C"))
        j0, j1 = s.split(j, [None, 4])
        s.reorder(j0, k, j1)
        s.blockize(j1)

    sch = check_all(MM, sched, "main")
    text = _body(sch.mod.script())
    assert (
        """
        with T.block("C_o"):
            vi_o, vj_o, vk_o = T.axis.remap("SSR", [i, j_0, k])
            with T.init():
                for j_1 in range(4):
                    with T.block("C_init"):
                        vj_i_init = T.axis.spatial(4, j_1)
                        C[vi_o, vj_o * 4 + vj_i_init] = T.float32(0.0)
            for j_1 in range(4):
                with T.block("C"):
                    vj_i = T.axis.spatial(4, j_1)
                    C[vi_o, vj_o * 4 + vj_i] = C[vi_o, vj_o * 4 + vj_i] + A[vi_o, vk_o] * B[vk_o, vj_o * 4 + vj_i]"""
        in text
    )


def test_blockize_unit_outer_iters():
    sch = check_all(MM, lambda s: s.blockize(s.get_loops(s.get_block("C"))[1]), "main")
    assert "vj_o = T.axis.spatial(1, 0)" in sch.mod.script()
    assert "vk_o = T.axis.reduce(1, 0)" in sch.mod.script()


def test_errors():
    sch = Schedule(parse(MM))
    c = sch.get_block("C")
    i, j, k = sch.get_loops(c)
    check_error(
        sch,
        lambda s: s.rfactor(i, 0),
        "rfactor: The loop to be applied rfactor is 'i', which is required not to be "
        "touched by any data parallel block iter",
    )
    check_error(sch, lambda s: s.rfactor(k, 3), "factor_axis 3 is out of range")
    j0, j1 = sch.split(j, [None, 4])
    sch.reorder(j1, j0)
    check_error(
        sch, lambda s: s.blockize(j0), "blockize: the binding of 'vj' in block 'C' is not separable"
    )
    sch = Schedule(parse(ROWMAX.replace("T.float32(-3.4028234663852886e38)", "T.float32(0)")))
    b = sch.get_block("B")
    _, k = sch.get_loops(b)
    check_error(sch, lambda s: s.rfactor(k, 0), "the init value is not the identity of max")
    sch = Schedule(parse(MM))
    c = sch.get_block("C")
    i, j, k = sch.get_loops(c)
    k0, k1 = sch.split(k, [None, 4])
    check_error(
        sch,
        lambda s: s.decompose_reduction(c, k1),
        "loop 'k_0' above loop 'k_1' is bound to a reduction iter var",
    )
    sch.decompose_reduction(c, k0)
    check_error(
        sch,
        lambda s: s.decompose_reduction(c, i),
        "decompose_reduction: block 'C_update' has no init",
    )


def test_gpu_style_reduction_matmul():
    """rfactor of the k loop + decompose_reduction of both blocks."""

    def sched(s):
        c = s.get_block("C")
        i, j, k = s.get_loops(c)
        _, k1 = s.split(k, [None, 4])
        rf = s.rfactor(k1, 0)
        s.decompose_reduction(rf, s.get_loops(rf)[2])
        s.decompose_reduction(c, s.get_loops(c)[2])

    check_all(MM, sched, "main")


def test_gpu_style_softmax_row_reduction():
    def sched(s):
        for name in ("maxelem", "expsum"):
            b = s.get_block(name)
            i, k = s.get_loops(b)
            _, k1 = s.split(k, [None, 32])
            rf = s.rfactor(k1, 0)
            s.decompose_reduction(rf, s.get_loops(rf)[1])

    check_all((PROGRAMS / "softmax.tir").read_text(), sched, "softmax")


def test_gpu_style_conv2d():
    """cache_write + reverse_compute_at, cache_read + compute_at, decompose_reduction."""

    def sched(s):
        b = s.get_block("B")
        loops = s.get_loops(b)
        local = s.cache_write(b, 0, "local")
        s.reverse_compute_at(local, loops[1])
        w_local = s.cache_read(b, 1, "local")
        s.compute_at(w_local, loops[4])
        s.decompose_reduction(b, loops[4])

    check_all((PROGRAMS / "conv2d_pad.tir").read_text(), sched, "conv2d")


def test_rfactor_keeps_the_predicate():
    """A T.where on the reduced block guards the rf block and (over the kept loops) the
    write-back, which TVM 0.21 drops there (its write-back then reads past the rf buffer)."""
    src = """
@T.prim_func
def main(A: T.Buffer((10, 8), "float32"), B: T.Buffer((10,), "float32")):
    for i, k in T.grid(10, 8):
        with T.block("B"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                B[vi] = T.float32(0)
            B[vi] = B[vi] + A[vi, vk]
"""

    def sched(s):
        i, k = s.get_loops(s.get_block("B"))
        s.split(i, factors=[None, 4])
        s.rfactor(k, 0)

    text = check_sched(src, sched, "main", tvm_diff=False).mod.script()
    assert text.count("T.where(i_0 * 4 + i_1 < 10)") == 2


ROWSUM_20 = """
@T.prim_func
def main(A: T.Buffer((20, 20), "float32"), B: T.Buffer((20,), "float32")):
    for x, k in T.grid(20, 20):
        with T.block("B"):
            vx, vk = T.axis.remap("SR", [x, k])
            with T.init():
                B[vx] = T.float32(0)
            B[vx] = B[vx] + A[vx, vk]
"""


def test_decompose_reduction_keeps_the_predicate_on_the_init():
    """A non-dividing split guards the init too: without the T.where the init would write
    B[20..31] (found by benchmarks/bench_vs_tvm.py: a conv2d with a 56-wide row split by 16)."""

    def sched(s):
        b = s.get_block("B")
        x, k = s.get_loops(b)
        x0, x1 = s.split(x, factors=[None, 16])
        s.reorder(x0, k, x1)
        s.decompose_reduction(b, k)

    sch = check_all(ROWSUM_20, sched, "main")
    assert """            with T.block("B_init"):
                vx = T.axis.spatial(20, x_0 * 16 + x_1_init)
                T.where(x_0 * 16 + x_1_init < 20)""" in sch.mod.script()


def test_decompose_reduction_drops_a_predicate_on_reduction_loops():
    def sched(s):
        b = s.get_block("B")
        x, k = s.get_loops(b)
        k0, k1 = s.split(k, factors=[None, 8])
        s.decompose_reduction(b, k0)

    sch = check_all(ROWSUM_20, sched, "main")
    assert "T.where(k_0 * 8 + k_1 < 20)" in sch.mod.script()
    assert sch.mod.script().count("T.where") == 1


def test_rfactor_refuses_a_loop_mixing_spatial_and_reduction_iters():
    """TVM's rule (fuzzer seed 279: a fuse of j and k, then rfactor of another loop)."""
    sch = Schedule(parse(MM))
    c = sch.get_block("C")
    i, j, k = sch.get_loops(c)
    k0, k1 = sch.split(k, [None, 4])
    sch.fuse(j, k0)
    check_error(
        sch,
        lambda s: s.rfactor(k1, 0),
        "the loop 'j_k_0_fused' is touched by both some data parallel block iters",
    )


REPEATED = """@T.prim_func
def main(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32"),
         D: T.Buffer((16, 16), "float32")):
    S = T.alloc_buffer((16,))
    for i, k in T.grid(16, 16):
        with T.block("S"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                S[vi] = T.float32(0)
            S[vi] = S[vi] + A[vi, vk]
    for i, j, k in T.grid(16, 16, 16):
        with T.block("D"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                D[vi, vj] = T.float32(0)
            D[vi, vj] = D[vi, vj] + S[vi] * B[vk, vj]
"""


def _repeated_producer(sch):
    sch.compute_at(sch.get_block("S"), sch.get_loops(sch.get_block("D"))[2])


def test_decompose_reduction_refuses_a_loop_that_only_repeats_the_block():
    """compute_at under D's reduction loop `k` recomputes S for every k: decomposing S at `k`
    (or above it, at `j`) would leave one init for 16 repetitions of the sum."""
    sch = Schedule(parse(REPEATED))
    _repeated_producer(sch)
    block = sch.get_block("S")
    i, j, k, ax0 = sch.get_loops(block)
    for loop in (j, k):
        check_error(
            sch,
            lambda s, lp=loop: s.decompose_reduction(block, lp),
            "repeats block 'S' without changing its iter vars",
        )
    check_sched(
        REPEATED,
        lambda s: (
            _repeated_producer(s),
            s.decompose_reduction(s.get_block("S"), s.get_loops(s.get_block("S"))[3]),
        ),
        "main",
        tvm_diff=False,
    )


def test_rewrite_reduction_block_takes_the_blocks_own_reduction_loop():
    """The postprocessor skips a reduction loop of another block enclosing this one."""
    from schedule_check import check_numerics
    from tir_mlir.meta_schedule.postproc import RewriteReductionBlock

    mod = parse(REPEATED)
    sch = Schedule(mod)
    _repeated_producer(sch)
    assert RewriteReductionBlock().apply(sch)
    assert "S_init" in sch.mod.script() and "D_init" in sch.mod.script()
    check_numerics(mod, sch.mod, "main")
