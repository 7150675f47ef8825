"""rfactor of TVM's other reduction forms: a loop no iter var uses, an update through a let, a
block sharing its outermost loop with later blocks (TVM's loop properties decide), and where the
loop handles go (the write-back's loops, as in TVM)."""
from schedule_check import check_all, check_error, parse
from shared_programs import MATMUL_16 as MM
from tir_mlir import Schedule


def _body(text):
    return "\n".join(l for l in text.splitlines() if "T.reads" not in l and "T.writes" not in l)


def test_rfactor_of_a_loop_no_iter_var_uses():
    """The unit loop becomes the rf block's new spatial iter (rf buffer of extent 1)."""
    def sched(s):
        s.rfactor(s.add_unit_loop(s.get_block("C")), 0)
    sch = check_all(MM, sched, "main")
    text = _body(sch.mod.script())
    assert "C_rf = T.alloc_buffer((1, 16, 16))" in text
    assert 'vu, vi, vj, vk = T.axis.remap("SSSR", [u, i, j, k])' in text
    assert 'vu, vi, vj = T.axis.remap("RSS", [u, i, j])' in text


SQUARE_SUM_SQRT = '''
@T.prim_func
def main(A: T.Buffer((4, 8, 8), "float32"), D: T.Buffer((4,), "float32")):
    C = T.alloc_buffer((4,))
    for i0, f_outer, f_inner in T.grid(4, 64, 1):
        with T.block("C"):
            b = T.axis.spatial(4, i0)
            i = T.axis.reduce(8, f_outer // 8)
            j = T.axis.reduce(8, f_outer % 8)
            with T.init():
                C[b] = T.float32(0.0)
            C[b] = C[b] + A[b, i, j] * A[b, i, j]
    for i0 in range(4):
        with T.block("D"):
            b = T.axis.spatial(4, i0)
            D[b] = T.sqrt(C[b])
'''


def test_rfactor_of_a_fused_reduction_with_a_unit_inner_loop():
    """TVM's square_sum_square_root: the unit loop f_inner touches no iter var."""
    def sched(s):
        s.rfactor(s.get_loops(s.get_block("C"))[2], 0)
    sch = check_all(SQUARE_SUM_SQRT, sched, "main")
    assert '''    C_rf = T.alloc_buffer((1, 4))
    for i0, f_outer, f_inner in T.grid(4, 64, 1):
        with T.block("C_rf"):
            vf_inner, b = T.axis.remap("SS", [f_inner, i0])
            i = T.axis.reduce(8, f_outer // 8)
            j = T.axis.reduce(8, f_outer % 8)
            with T.init():
                C_rf[vf_inner, b] = T.float32(0.0)
            C_rf[vf_inner, b] = C_rf[vf_inner, b] + A[b, i, j] * A[b, i, j]
    for i0, f_inner in T.grid(4, 1):
        with T.block("C"):
            vf_inner, b = T.axis.remap("RS", [f_inner, i0])''' in _body(sch.mod.script())


LET_UPDATE = '''
@T.prim_func
def main(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32"),
         C: T.Buffer((16, 16), "float32")):
    for i, j, k_0, k_1 in T.grid(16, 16, 4, 4):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            vk = T.axis.reduce(16, k_0 * 4 + k_1)
            with T.init():
                C[vi, vj] = T.float32(0.0)
            v_C: T.float32 = C[vi, vj] + A[vi, vk] * B[vk, vj]
            C[vi, vj] = v_C
'''


def test_rfactor_inlines_a_let_update():
    """TVM rebuilds both updates from the reducer: the let is gone (as without it)."""
    def sched(s):
        s.rfactor(s.get_loops(s.get_block("C"))[3], 0)
    sch = check_all(LET_UPDATE, sched, "main")
    text = _body(sch.mod.script())
    assert "v_C" not in text
    assert ("C_rf[vk_1, vi, vj] = C_rf[vk_1, vi, vj] + A[vi, vk_0 * 4 + vk_1] * "
            "B[vk_0 * 4 + vk_1, vj]") in text
    assert "C[vi, vj] = C[vi, vj] + C_rf[vk_1, vi, vj]" in text


MULTI = '''
@T.prim_func
def main(A: T.Buffer((8, 8, 8), "float32"), F: T.Buffer((8, 8), "float32")):
    C = T.alloc_buffer((8, 8))
    D = T.alloc_buffer((8, 8))
    for i in range(8):
        for j1 in range(8):
            for k1o, k1i in T.grid(2, 4):
                with T.block("C"):
                    ci, cj = T.axis.remap("SS", [i, j1])
                    ck = T.axis.reduce(8, k1o * 4 + k1i)
                    with T.init():
                        C[ci, cj] = T.float32(0.0)
                    C[ci, cj] = C[ci, cj] + A[ci, cj, ck]
            for k2o, k2i in T.grid(2, 4):
                with T.block("D"):
                    di, dj = T.axis.remap("SS", [i, j1])
                    dk = T.axis.reduce(8, k2o * 4 + k2i)
                    with T.init():
                        D[di, dj] = T.float32(0.0)
                    D[di, dj] = D[di, dj] + (A[di, dj, dk] + C[di, dj])
        for j2 in range(8):
            with T.block("F"):
                fi, fj = T.axis.remap("SS", [i, j2])
                F[fi, fj] = D[fi, fj] * T.float32(2.0)
'''


def test_rfactor_of_a_block_sharing_its_outermost_loop():
    """The rf nest goes before the outermost loop; the write-back stays in place, its loop
    k1i (bound to the reduction) removed (TVM's multiple_reduction_blocks)."""
    def sched(s):
        s.rfactor(s.get_loops(s.get_block("C"))[2], 2)
    sch = check_all(MULTI, sched, "main")
    assert '''    C_rf = T.alloc_buffer((8, 8, 2))
    for i, j1, k1o, k1i in T.grid(8, 8, 2, 4):
        with T.block("C_rf"):
            vk1o, ci, cj, vk1i = T.axis.remap("SSSR", [k1o, i, j1, k1i])
            with T.init():
                C_rf[ci, cj, vk1o] = T.float32(0.0)
            C_rf[ci, cj, vk1o] = C_rf[ci, cj, vk1o] + A[ci, cj, vk1o * 4 + vk1i]
    for i in range(8):
        for j1 in range(8):
            for k1o in range(2):
                with T.block("C"):
                    vk1o, ci, cj = T.axis.remap("RSS", [k1o, i, j1])''' in _body(sch.mod.script())


def test_rfactor_refuses_a_block_not_first_under_its_outermost_loop():
    sch = Schedule(parse(MULTI))
    _, _, k2o, k2i = sch.get_loops(sch.get_block("D"))
    for loop in (k2o, k2i):
        check_error(sch, lambda s, loop=loop: s.rfactor(loop, 0),
                    "rfactor: The first child block of the outermost loop 'i' is not the "
                    "reduction block")


def test_rfactor_refuses_a_reduction_loop_with_other_blocks():
    """The outermost loop bound to a reduction iter (k_0) must hold the block alone."""
    src = '''
@T.prim_func
def main(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8,), "float32"),
         E: T.Buffer((8, 2), "float32")):
    for i, k_0 in T.grid(8, 2):
        for k_1 in range(4):
            with T.block("B"):
                vi = T.axis.spatial(8, i)
                vk = T.axis.reduce(8, k_0 * 4 + k_1)
                with T.init():
                    B[vi] = T.float32(0.0)
                B[vi] = B[vi] + A[vi, vk]
        with T.block("E"):
            vi, vk_0 = T.axis.remap("SS", [i, k_0])
            E[vi, vk_0] = A[vi, vk_0]
'''
    sch = Schedule(parse(src))
    k1 = sch.get_loops(sch.get_block("B"))[2]
    check_error(sch, lambda s: s.rfactor(k1, 0),
                "rfactor: The loop 'k_0' is required to have only one child block")


def test_rfactor_leaves_the_loop_handles_on_the_write_back():
    """As TVM: the old loops are the write-back's (k_0, bound to the reduction, is gone); the
    rf block's loops are new."""
    sch = Schedule(parse(MM))
    c = sch.get_block("C")
    i, j, k = sch.get_loops(c)
    k0, k1 = sch.split(k, [None, 4])
    rf = sch.rfactor(k1, 0)
    assert [sch.get(lp).op for lp in (i, j, k1)] == [sch.get(lp).op for lp in sch.get_loops(c)]
    assert not {sch.get(lp).op for lp in (i, j, k1)} & {sch.get(lp).op
                                                         for lp in sch.get_loops(rf)}
    check_error(sch, lambda s: s.parallel(k0), "no longer exists")
