"""rfactor of TVM's other reduction forms: a loop no iter var uses, an update through a let, a
block sharing its outermost loop with later blocks (TVM's loop properties decide), and where the
loop handles go (the write-back's loops, as in TVM)."""

from schedule_check import check_all, check_error, check_numerics, parse
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


SQUARE_SUM_SQRT = """
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
"""


def test_rfactor_of_a_fused_reduction_with_a_unit_inner_loop():
    """TVM's square_sum_square_root: the unit loop f_inner touches no iter var."""

    def sched(s):
        s.rfactor(s.get_loops(s.get_block("C"))[2], 0)

    sch = check_all(SQUARE_SUM_SQRT, sched, "main")
    assert """    C_rf = T.alloc_buffer((1, 4))
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
            vf_inner, b = T.axis.remap("RS", [f_inner, i0])""" in _body(sch.mod.script())


LET_UPDATE = """
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
"""


def test_rfactor_inlines_a_let_update():
    """TVM rebuilds both updates from the reducer: the let is gone (as without it)."""

    def sched(s):
        s.rfactor(s.get_loops(s.get_block("C"))[3], 0)

    sch = check_all(LET_UPDATE, sched, "main")
    text = _body(sch.mod.script())
    assert "v_C" not in text
    assert (
        "C_rf[vk_1, vi, vj] = C_rf[vk_1, vi, vj] + A[vi, vk_0 * 4 + vk_1] * B[vk_0 * 4 + vk_1, vj]"
    ) in text
    assert "C[vi, vj] = C[vi, vj] + C_rf[vk_1, vi, vj]" in text


MULTI = """
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
"""


def test_rfactor_of_a_block_sharing_its_outermost_loop():
    """The rf nest goes before the outermost loop; the write-back stays in place, its loop
    k1i (bound to the reduction) removed (TVM's multiple_reduction_blocks)."""

    def sched(s):
        s.rfactor(s.get_loops(s.get_block("C"))[2], 2)

    sch = check_all(MULTI, sched, "main")
    assert """    C_rf = T.alloc_buffer((8, 8, 2))
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
                    vk1o, ci, cj = T.axis.remap("RSS", [k1o, i, j1])""" in _body(sch.mod.script())


def test_rfactor_refuses_a_block_not_first_under_its_outermost_loop():
    sch = Schedule(parse(MULTI))
    _, _, k2o, k2i = sch.get_loops(sch.get_block("D"))
    for loop in (k2o, k2i):
        check_error(
            sch,
            lambda s, loop=loop: s.rfactor(loop, 0),
            "rfactor: The first child block of the outermost loop 'i' is not the reduction block",
        )


def test_rfactor_refuses_a_reduction_loop_with_other_blocks():
    """The outermost loop bound to a reduction iter (k_0) must hold the block alone."""
    src = """
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
"""
    sch = Schedule(parse(src))
    k1 = sch.get_loops(sch.get_block("B"))[2]
    check_error(
        sch,
        lambda s: s.rfactor(k1, 0),
        "rfactor: The loop 'k_0' is required to have only one child block",
    )


def test_rfactor_leaves_the_loop_handles_on_the_write_back():
    """As TVM: the old loops are the write-back's (k_0, bound to the reduction, is gone); the
    rf block's loops are new."""
    sch = Schedule(parse(MM))
    c = sch.get_block("C")
    i, j, k = sch.get_loops(c)
    k0, k1 = sch.split(k, [None, 4])
    rf = sch.rfactor(k1, 0)
    assert [sch.get(lp).op for lp in (i, j, k1)] == [sch.get(lp).op for lp in sch.get_loops(c)]
    assert not {sch.get(lp).op for lp in (i, j, k1)} & {sch.get(lp).op for lp in sch.get_loops(rf)}
    check_error(sch, lambda s: s.parallel(k0), "no longer exists")


ARGMAX = """
@T.prim_func
def main(idx: T.Buffer((16, 32), "int32"), val: T.Buffer((16, 32), "float32"),
         argmax_v0: T.Buffer((16,), "int32"), argmax_v1: T.Buffer((16,), "float32")):
    for i0, i1_0, i1_1 in T.grid(16, 4, 8):
        with T.block("argmax"):
            i = T.axis.spatial(16, i0)
            k = T.axis.reduce(32, i1_0 * 8 + i1_1)
            with T.init():
                argmax_v0[i] = -1
                argmax_v1[i] = T.min_value("float32")
            v_argmax_v0: T.int32 = T.Select(argmax_v1[i] >= val[i, k], argmax_v0[i], idx[i, k])
            v_argmax_v1: T.float32 = T.Select(argmax_v1[i] >= val[i, k], argmax_v1[i], val[i, k])
            argmax_v0[i] = v_argmax_v0
            argmax_v1[i] = v_argmax_v1
"""

# argmin, with the lets, the stores and the init in the other order
ARGMIN = (
    ARGMAX.replace(">=", "<=")
    .replace("min_value", "max_value")
    .replace("argmax", "argmin")
    .replace(
        """                argmin_v0[i] = -1
                argmin_v1[i] = T.max_value("float32")""",
        """                argmin_v1[i] = T.max_value("float32")
                argmin_v0[i] = -1""",
    )
    .replace(
        """            argmin_v0[i] = v_argmin_v0
            argmin_v1[i] = v_argmin_v1""",
        """            argmin_v1[i] = v_argmin_v1
            argmin_v0[i] = v_argmin_v0""",
    )
)


def _rf_inner(name):
    def sched(s):
        s.rfactor(s.get_loops(s.get_block(name))[2], 1)

    return sched


def test_rfactor_argmax_pair():
    """TVM's tuple reducer: both buffers factored, the write-back combines the pairs."""
    sch = check_all(ARGMAX, _rf_inner("argmax"), "main")
    assert """    argmax_v0_rf = T.alloc_buffer((16, 8), "int32")
    argmax_v1_rf = T.alloc_buffer((16, 8))
    for i0, i1_0, i1_1 in T.grid(16, 4, 8):
        with T.block("argmax_rf"):
            vi1_1, i, vi1_0 = T.axis.remap("SSR", [i1_1, i0, i1_0])
            with T.init():
                argmax_v0_rf[i, vi1_1] = -1
                argmax_v1_rf[i, vi1_1] = T.float32(-340282346638528859811704183484516925440.0)
            v_argmax_v0_rf: T.int32 = T.Select(argmax_v1_rf[i, vi1_1] >= val[i, vi1_0 * 8 + vi1_1], argmax_v0_rf[i, vi1_1], idx[i, vi1_0 * 8 + vi1_1])
            v_argmax_v1_rf: T.float32 = T.Select(argmax_v1_rf[i, vi1_1] >= val[i, vi1_0 * 8 + vi1_1], argmax_v1_rf[i, vi1_1], val[i, vi1_0 * 8 + vi1_1])
            argmax_v0_rf[i, vi1_1] = v_argmax_v0_rf
            argmax_v1_rf[i, vi1_1] = v_argmax_v1_rf
    for i0, i1_1 in T.grid(16, 8):
        with T.block("argmax"):
            vi1_1, i = T.axis.remap("RS", [i1_1, i0])
            with T.init():
                argmax_v0[i] = -1
                argmax_v1[i] = T.float32(-340282346638528859811704183484516925440.0)
            v_argmax_v0: T.int32 = T.Select(argmax_v1[i] >= argmax_v1_rf[i, vi1_1], argmax_v0[i], argmax_v0_rf[i, vi1_1])
            v_argmax_v1: T.float32 = T.Select(argmax_v1[i] >= argmax_v1_rf[i, vi1_1], argmax_v1[i], argmax_v1_rf[i, vi1_1])
            argmax_v0[i] = v_argmax_v0
            argmax_v1[i] = v_argmax_v1""" in _body(sch.mod.script())


def test_rfactor_argmin_pair_in_the_other_order():
    """The result is in TVM's reducer order (index, then value) whatever the source's."""
    sch = check_all(ARGMIN, _rf_inner("argmin"), "main")
    text = _body(sch.mod.script())
    assert (
        """            with T.init():
                argmin_v0_rf[i, vi1_1] = -1
                argmin_v1_rf[i, vi1_1] = T.float32(340282346638528859811704183484516925440.0)
            v_argmin_v0_rf: T.int32 = T.Select(argmin_v1_rf[i, vi1_1] <= val"""
        in text
    )
    assert (
        """            argmin_v0[i] = v_argmin_v0
            argmin_v1[i] = v_argmin_v1"""
        in text
    )


def test_rfactor_refuses_pairs_that_are_not_argmax():
    """TVM's argmax_split_* refusals: a store of no let, one let stored twice, one buffer
    updated twice, a wrong identity, the init at another index (the int32 pair lets a let
    go to either buffer)."""
    ints = (
        ARGMAX.replace('val: T.Buffer((16, 32), "float32")', 'val: T.Buffer((16, 32), "int32")')
        .replace('argmax_v1: T.Buffer((16,), "float32")', 'argmax_v1: T.Buffer((16,), "int32")')
        .replace('"float32"', '"int32"')
        .replace("T.float32", "T.int32")
    )
    cases = [
        (
            ARGMAX,
            "argmax_v1[i] = v_argmax_v1",
            "argmax_v1[i] = T.Select(argmax_v1[i] >= val[i, k], argmax_v1[i], val[i, k])",
        ),
        (ints, "argmax_v1[i] = v_argmax_v1", "argmax_v1[i] = v_argmax_v0"),
        (ints, "argmax_v1[i] = v_argmax_v1", "argmax_v0[i] = v_argmax_v1"),
        (ARGMAX, "argmax_v0[i] = -1", "argmax_v0[i] = 0"),
        (
            ARGMAX,
            'argmax_v1[i] = T.min_value("float32")',
            'argmax_v1[(i + 1) % 16] = T.min_value("float32")',
        ),
    ]
    for base, old, new in cases:
        src = base.replace(old, new, 1)
        assert src != base, old
        sch = Schedule(parse(src))
        ki = sch.get_loops(sch.get_block("argmax"))[2]
        check_error(
            sch,
            lambda s: s.rfactor(ki, 1),
            "rfactor: block 'argmax' is not a reduction with a known identity",
        )


def test_rfactor_argmax_pair_wholly_factored():
    """No reduction iter left: the rf block stores the new pair alone, as TVM."""
    src = ARGMAX.replace(
        "for i0, i1_0, i1_1 in T.grid(16, 4, 8):", "for i0, i1 in T.grid(16, 32):"
    ).replace("k = T.axis.reduce(32, i1_0 * 8 + i1_1)", "k = T.axis.reduce(32, i1)")

    def sched(s):
        s.rfactor(s.get_loops(s.get_block("argmax"))[1], 0)

    sch = check_all(src, sched, "main")
    assert """        with T.block("argmax_rf"):
            vi1, i = T.axis.remap("SS", [i1, i0])
            argmax_v0_rf[vi1, i] = idx[i, vi1]
            argmax_v1_rf[vi1, i] = val[i, vi1]""" in _body(sch.mod.script())


TRIANGLE = """
@T.prim_func
def main(A: T.Buffer((8, 8, 16), "float32"), B: T.Buffer((8, 8), "float32")):
    for i in range(8):
        for j in range(i + 1):
            for k_0, k_1 in T.grid(4, 4):
                with T.block("B"):
                    vi = T.axis.spatial(8, i)
                    vj = T.axis.spatial(8, j)
                    vk = T.axis.reduce(16, k_0 * 4 + k_1)
                    with T.init():
                        B[vi, vj] = T.float32(0)
                    B[vi, vj] = B[vi, vj] + A[vi, vj, vk]
"""


def test_rfactor_copies_loops_bounded_by_outer_loops():
    """The rf nest's copy of `range(i + 1)` runs over the copy of i (numbers only: the
    structural comparison of the replay check does not take such loops)."""
    mod = parse(TRIANGLE)
    sch = Schedule(mod)
    sch.rfactor(sch.get_loops(sch.get_block("B"))[3], 0)
    check_numerics(mod, sch.mod, "main")
    assert _body(sch.mod.script()).count("for j, k_1 in T.grid(i + 1, 4):") == 1
    assert "for j, k_0, k_1 in T.grid(i + 1, 4, 4):" in sch.mod.script()


# te.create_prim_func of topi.argmax((1, 32) int32, axis=1), as TVM 0.21 prints it
TOPI_ARGMAX = """
@T.prim_func
def main(placeholder: T.Buffer((1, 32), "int32"), placeholder_red: T.Buffer((1,), "int32")):
    T.func_attr({"tir.noalias": True})
    placeholder_red_temp_v0 = T.alloc_buffer((1,), "int32")
    placeholder_red_temp_v1 = T.alloc_buffer((1,), "int32")
    for ax0, k1 in T.grid(1, 32):
        with T.block("placeholder_red_temp"):
            v_ax0, v_k1 = T.axis.remap("SR", [ax0, k1])
            T.reads(placeholder[v_ax0, v_k1])
            T.writes(placeholder_red_temp_v0[v_ax0], placeholder_red_temp_v1[v_ax0])
            with T.init():
                placeholder_red_temp_v0[v_ax0] = -1
                placeholder_red_temp_v1[v_ax0] = -2147483648
            v_placeholder_red_temp_v0: T.int32 = T.Select(placeholder_red_temp_v1[v_ax0] > placeholder[v_ax0, v_k1] or placeholder_red_temp_v1[v_ax0] == placeholder[v_ax0, v_k1] and placeholder_red_temp_v0[v_ax0] < v_k1, placeholder_red_temp_v0[v_ax0], v_k1)
            v_placeholder_red_temp_v1: T.int32 = T.Select(placeholder_red_temp_v1[v_ax0] > placeholder[v_ax0, v_k1], placeholder_red_temp_v1[v_ax0], placeholder[v_ax0, v_k1])
            placeholder_red_temp_v0[v_ax0] = v_placeholder_red_temp_v0
            placeholder_red_temp_v1[v_ax0] = v_placeholder_red_temp_v1
    for ax0 in range(1):
        with T.block("placeholder_red"):
            v_ax0 = T.axis.spatial(1, ax0)
            T.reads(placeholder_red_temp_v0[v_ax0])
            T.writes(placeholder_red[v_ax0])
            placeholder_red[v_ax0] = placeholder_red_temp_v0[v_ax0]
"""
TOPI_ARGMIN = TOPI_ARGMAX.replace(" > ", " < ").replace("-2147483648", "2147483647")


def _rf_split_8(s):
    _, k = s.get_loops(s.get_block("placeholder_red_temp"))
    _, ki = s.split(k, [None, 8])
    s.rfactor(ki, 1)


def test_rfactor_topi_argmax_keeps_the_first_index_of_equal_values():
    """topi's argmax (TVM's tie-breaking reducer: `v > y or v == y and i < x`): the rf block
    keeps the update, the write-back combines the pairs with the same rule (TVM's expected
    text), and ties (int32 values in [-4, 4)) go to the lowest index, as numpy's."""
    for src, op in ((TOPI_ARGMAX, ">"), (TOPI_ARGMIN, "<")):
        text = check_all(src, _rf_split_8, "main").mod.script()
        assert 'placeholder_red_temp_v0_rf = T.alloc_buffer((1, 8), "int32")' in text
        assert (
            f"v_placeholder_red_temp_v0: T.int32 = T.Select(placeholder_red_temp_v1[v_ax0] "
            f"{op} placeholder_red_temp_v1_rf[v_ax0, vk1_1] or placeholder_red_temp_v1[v_ax0]"
            f" == placeholder_red_temp_v1_rf[v_ax0, vk1_1] and placeholder_red_temp_v0[v_ax0]"
            f" < placeholder_red_temp_v0_rf[v_ax0, vk1_1], placeholder_red_temp_v0[v_ax0], "
            f"placeholder_red_temp_v0_rf[v_ax0, vk1_1])"
        ) in text


def test_rfactor_refuses_a_tie_break_on_the_wrong_index():
    """`... and i < y` (the value, not the index): no reducer of TVM's."""
    src = TOPI_ARGMAX.replace(
        "placeholder_red_temp_v0[v_ax0] < v_k1",
        "placeholder_red_temp_v0[v_ax0] < placeholder[v_ax0, v_k1]",
    )
    sch = Schedule(parse(src))
    _, k = sch.get_loops(sch.get_block("placeholder_red_temp"))
    _, ki = sch.split(k, [None, 8])
    check_error(sch, lambda s: s.rfactor(ki, 1), "not an argmax/argmin pair")
