"""TVM-differential tests for the schedule semantics of issue 15, one class of programs at a
time, on programs written here (tests/support/schedule_differential.py: same accept/reject decision,
TVM-equal result printed as TVM prints it, same trace, same numbers)."""

import pytest
import tvm_oracle

from schedule_differential import assert_agrees
from workloads import mm_relu

pytestmark = pytest.mark.tvm
tvm_oracle.import_tvm()


def _two_stage(b_shape, b_grid, c_shape, c_grid, read, *, c_iters=None):
    """B = A * 2 over b_grid (B[vi, vj] = ...), C = read(B) + 1 over c_grid."""
    rank_b, rank_c = len(b_grid), len(c_grid)
    bv = ", ".join(f"v{k}" for k in range(rank_b))
    bl = ", ".join(f"l{k}" for k in range(rank_b))
    cv = c_iters or ", ".join(f"w{k}" for k in range(rank_c))
    cl = ", ".join(f"m{k}" for k in range(rank_c))
    return f'''
@T.prim_func
def main(A: T.Buffer({b_shape}, "float32"), C: T.Buffer({c_shape}, "float32")):
    B = T.alloc_buffer({b_shape})
    for {bl} in T.grid({", ".join(map(str, b_grid))}):
        with T.block("B"):
            {bv} = T.axis.remap("{"S" * rank_b}", [{bl}])
            B[{bv}] = A[{bv}] * T.float32(2)
    for {cl} in T.grid({", ".join(map(str, c_grid))}):
        with T.block("C"):
            {cv} = T.axis.remap("{"S" * rank_c}", [{cl}])
            C[{cv}] = {read} + T.float32(1)
'''


def _rci(s):
    s.reverse_compute_inline(s.get_block("C"))


# --- reverse_compute_inline through affine reads ---------------------------------------------
REVERSE_INLINE = {
    # C reads B through a fusion, a split, both, with offsets and unit iterators
    "fused": _two_stage((32,), (32,), (8, 4), (8, 4), "B[w0 * 4 + w1]"),
    "split": _two_stage((8, 4), (8, 4), (32,), (32,), "B[w0 // 4, w0 % 4]"),
    "split_3": _two_stage((4, 2, 4), (4, 2, 4), (32,), (32,), "B[w0 // 8, w0 // 4 % 2, w0 % 4]"),
    "transposed_fused": _two_stage((4, 16), (4, 16), (4, 4, 4), (4, 4, 4), "B[w2, w0 * 4 + w1]"),
    "unit_iter": _two_stage((8, 4), (8, 4), (1, 8, 4), (1, 8, 4), "B[w1, w2]"),
    "reversed": _two_stage((8, 4), (8, 4), (4, 8), (4, 8), "B[7 - w1, w0]"),
    "reversed_shifted": _two_stage((9,), (9,), (8,), (8,), "B[8 - w0]"),
    "same_load_twice": _two_stage((8, 4), (8, 4), (4, 8), (4, 8), "B[w1, w0] * B[w1, w0]"),
    # the producer computes more than C reads: the store is guarded (TVM's predicate)
    "shifted": _two_stage((9, 8), (9, 8), (8, 8), (8, 8), "B[w0 + 1, w1]"),
    "overcomputed": _two_stage((8, 8), (8, 8), (6, 8), (6, 8), "B[w0, w1]"),
    "overcomputed_split": _two_stage(
        (2, 2, 8, 8), (2, 2, 8, 8), (15, 13), (15, 13), "B[w0 // 8, w1 // 8, w0 % 8, w1 % 8]"
    ),
}
# Same numbers and TVM-equal after Simplify, printed otherwise: TVM keeps the fused sum whole
# (`(v1 + v0 * 4) // 16`) where the read's divisions already simplify (docs/tvm_compat.md).
REVERSE_INLINE_SPELLING = {
    "fuse_split": _two_stage(
        (16, 4),
        (16, 4),
        (4, 4, 4),
        (4, 4, 4),
        "B[(w0 * 16 + w1 * 4 + w2) // 4, (w0 * 16 + w1 * 4 + w2) % 4]",
    ),
}
REVERSE_INLINE_REFUSED = {
    "diagonal": _two_stage((8, 8), (8, 8), (8,), (8,), "B[w0, w0]"),
    "strided": _two_stage((16,), (16,), (8,), (8,), "B[w0 * 2]"),
    "broadcast": _two_stage((8,), (8,), (8, 4), (8, 4), "B[w0]"),
    "different_loads": _two_stage((9, 8), (9, 8), (8, 8), (8, 8), "B[w0, w1] + B[w0 + 1, w1]"),
    "not_covered": _two_stage((8, 8), (8, 8), (8, 8), (8, 8), "B[w0 // 2 + 4, w1]"),
    "fused_reversed": _two_stage((32,), (32,), (8, 4), (8, 4), "B[31 - (w0 * 4 + w1)]"),
    "wraps": _two_stage((8,), (8,), (16,), (16,), "B[w0 % 8]"),
}


@pytest.mark.parametrize("name", sorted(REVERSE_INLINE))
def test_reverse_compute_inline_affine_read(name):
    assert_agrees(REVERSE_INLINE[name], _rci, printer=True)


@pytest.mark.parametrize("name", sorted(REVERSE_INLINE_SPELLING))
def test_reverse_compute_inline_spelling(name):
    assert_agrees(REVERSE_INLINE_SPELLING[name], _rci)


@pytest.mark.parametrize("name", sorted(REVERSE_INLINE_REFUSED))
def test_reverse_compute_inline_refused(name):
    out = assert_agrees(REVERSE_INLINE_REFUSED[name], _rci)
    assert out.ours_error is not None


CHAIN3 = """
@T.prim_func
def main(A: T.Buffer((32, 8), "float32"), D: T.Buffer((1, 4, 8, 8), "float32")):
    B = T.alloc_buffer((32, 8))
    C = T.alloc_buffer((4, 8, 8))
    for i, j in T.grid(32, 8):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for i, j, k in T.grid(4, 8, 8):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSS", [i, j, k])
            C[vi, vj, vk] = B[vi * 8 + vj, vk] + T.float32(1)
    for i, j, k, l in T.grid(1, 4, 8, 8):
        with T.block("D"):
            vi, vj, vk, vl = T.axis.remap("SSSS", [i, j, k, l])
            D[vi, vj, vk, vl] = C[vj, vk, vl] * T.float32(3)
"""


@pytest.mark.parametrize("order", [("C", "D"), ("D", "C")])
def test_reverse_compute_inline_chain(order):
    def sched(s):
        for name in order:
            s.reverse_compute_inline(s.get_block(name))

    assert_agrees(CHAIN3, sched, printer=True)


# --- buffers given by name, storage scopes ----------------------------------------------------
MATMUL = mm_relu(16)
BY_NAME = {
    "cache_read": lambda s: s.cache_read(s.get_block("Y"), "B", "shared"),
    "cache_write": lambda s: s.cache_write(s.get_block("C"), "C", "local"),
    "set_scope": lambda s: s.set_scope(s.get_block("Y"), "Y", "shared"),
    "cache_read_then_compute_at": lambda s: s.compute_at(
        s.cache_read(s.get_block("Y"), "A", "local"), s.get_loops(s.get_block("Y"))[1]
    ),
}


@pytest.mark.parametrize("name", sorted(BY_NAME))
def test_buffer_given_by_name(name):
    assert_agrees(MATMUL, BY_NAME[name], printer=True)


@pytest.mark.parametrize(
    "scope",
    [
        "shared.dyn",
        "global.texture",
        "wmma.matrix_a",
        "local.fragment",
        "metal.simdgroup",
        "m16n8k8.matrixA",
        "globalx",
        "foo",
        "wmma.foo",
        "m.x",
        "mma.x",
    ],
)
@pytest.mark.parametrize("prim", ["cache_read", "cache_write", "set_scope"])
def test_storage_scope_accepted_like_tvm(prim, scope):
    def sched(s):
        if prim == "set_scope":
            s.set_scope(s.get_block("Y"), 0, scope)
        else:
            getattr(s, prim)(s.get_block("C"), 0, scope)

    assert_agrees(MATMUL, sched, numerics=False, text=False)


# --- refusals TVM makes, in words a TVM user recognises ----------------------------------------
TWO_WRITERS = """
@T.prim_func
def main(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
    B = T.alloc_buffer((8,))
    for i in range(4):
        with T.block("B0"):
            vi = T.axis.spatial(4, i)
            B[vi] = A[vi]
    for i in range(4):
        with T.block("B1"):
            vi = T.axis.spatial(4, i)
            B[vi + 4] = A[vi + 4] * T.float32(2)
    for i in range(8):
        with T.block("C"):
            vi = T.axis.spatial(8, i)
            C[vi] = B[vi] + T.float32(1)
"""
ELEMWISE = """
@T.prim_func
def main(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
    for i, j in T.grid(16, 16):
        with T.block("C"):
            vi = T.axis.KIND(16, BIND)
            vj = T.axis.spatial(16, j)
            T.where(COND)
            C[vi, vj] = A[vi, vj] + T.float32(1)
"""


def _elemwise(kind="spatial", bind="i", cond="j < 16"):
    return ELEMWISE.replace("KIND", kind).replace("BIND", bind).replace("COND", cond)


def _reverse_all(s):
    s.reorder(*reversed(s.get_loops(s.get_block("C"))))


def _rfactor_after(kind):
    def sched(s):
        k = s.get_loops(s.get_block("Y"))[2]
        if kind == "bind":
            s.bind(k, "threadIdx.x")
        else:
            getattr(s, kind)(k)
        s.rfactor(k, 0)

    return sched


REFUSALS = {
    "cache_write_two_producers": (
        TWO_WRITERS,
        lambda s: s.cache_write(s.get_block("B0"), 0, "local"),
        "expected to be written by single block",
    ),
    "cache_read_two_producers": (
        TWO_WRITERS,
        lambda s: s.cache_read(s.get_block("C"), 0, "local"),
        "expected to be written by single block",
    ),
    "reorder_opaque_iter": (
        _elemwise(kind="opaque"),
        _reverse_all,
        "block iter type other than data-parallel or reduction",
    ),
    "reorder_where_on_sum": (_elemwise(cond="i + j < 20"), _reverse_all, "affine binding"),
    "reorder_where_between_loops": (_elemwise(cond="i < j"), _reverse_all, "affine binding"),
    "reorder_reversed_binding": (_elemwise(bind="15 - i"), _reverse_all, "affine binding"),
    "reorder_binding_not_iter_map": (
        _elemwise(bind="(i + j) % 16"),
        _reverse_all,
        "affine binding",
    ),
    "reorder_partial_splits": (
        _elemwise(bind="i // 2 * 2 + j % 2"),
        _reverse_all,
        "affine binding",
    ),
    "rfactor_unrolled": (MATMUL, _rfactor_after("unroll"), "required to be `Serial`"),
    "rfactor_thread_bound": (MATMUL, _rfactor_after("bind"), "required to be `Serial`"),
}
ACCEPTED = {
    "reorder_where_on_loop": (_elemwise(cond="2 <= i and j < 8"), _reverse_all),
}


@pytest.mark.parametrize("name", sorted(REFUSALS))
def test_refused_like_tvm(name):
    src, sched, words = REFUSALS[name]
    out = assert_agrees(src, sched, numerics=False)
    assert out.ours_error is not None and words in str(out.ours_error.error)


@pytest.mark.parametrize("name", sorted(ACCEPTED))
def test_accepted_like_tvm(name):
    src, sched = ACCEPTED[name]
    assert_agrees(src, sched, printer=True)


# --- compute_at under GPU bindings: the region is relaxed over the threads sharing the scope --
ROW = """
@T.prim_func
def main(A: T.Buffer((256,), "float32"), C: T.Buffer((256,), "float32")):
    for i in range(256):
        with T.block("C"):
            vi = T.axis.spatial(256, i)
            C[vi] = A[vi] * T.float32(2)
"""


@pytest.mark.parametrize("scope", ["shared", "local", "global", "warp"])
@pytest.mark.parametrize("at", [0, 1, 2])
@pytest.mark.parametrize("reverse", [False, True])
def test_compute_at_under_thread_bindings(scope, at, reverse):
    def sched(s):
        c = s.get_block("C")
        loops = s.split(s.get_loops(c)[0], [4, 16, 4])
        s.bind(loops[0], "blockIdx.x")
        s.bind(loops[1], "threadIdx.x")
        if reverse:
            s.reverse_compute_at(s.cache_write(c, 0, scope), loops[at])
        else:
            s.compute_at(s.cache_read(c, 0, scope), loops[at])

    assert_agrees(ROW, sched, printer=True)


# --- sch.get(...) views answer what TVM code asks of tir.Block / tir.For -----------------------
def _view_facts(sch):
    b = sch.get_block("Y")
    i, j, k = sch.get_loops(b)
    sch.bind(i, "blockIdx.x")
    sch.annotate(j, "pragma_x", 1)
    sch.annotate(b, "meta_x", "v")
    bv, iv, jv, kv = sch.get(b), sch.get(i), sch.get(j), sch.get(k)
    root = sch.get(sch.get_block("root"))
    return {
        "name_hint": bv.name_hint,
        "iter_vars": [
            (v.var.name, int(v.dom.min), int(v.dom.extent), int(v.iter_type)) for v in bv.iter_vars
        ],
        "reads": [r.buffer.name for r in bv.reads],
        "writes": [w.buffer.name for w in bv.writes],
        "init": bv.init is not None,
        "annotations": dict(bv.annotations),
        "loop_var": kv.loop_var.name,
        "extent": (int(kv.extent), kv.extent.value, kv.extent.dtype, int(kv.min)),
        "kind": int(kv.kind),
        "thread": (iv.thread_binding.thread_tag, jv.thread_binding is None),
        "loop_annotations": dict(jv.annotations),
        "same_as": (sch.get(b).same_as(sch.get(b)), sch.get(k).same_as(sch.get(j))),
        "root": (root.name_hint, len(root.iter_vars)),
    }


def test_views_answer_like_tvm():
    import tvm
    import tir_mlir

    theirs = _view_facts(tvm.tir.Schedule(tvm.script.from_source(MATMUL)))
    ours = _view_facts(tir_mlir.Schedule(tir_mlir.parse(MATMUL)))
    assert ours == theirs


# --- compute_at when the consumer reads through floordiv / floormod / reversed indices --------
def _compute_b_at(level):
    def sched(s):
        s.compute_at(s.get_block("B"), s.get_loops(s.get_block("C"))[level])

    return sched


COMPUTE_AT = {
    "split_read": (_two_stage((8, 4), (8, 4), (32,), (32,), "B[w0 // 4, w0 % 4]"), 0),
    "div_read": (_two_stage((8, 8), (8, 8), (8, 8), (8, 8), "B[w0 // 2, w1]"), 0),
    "mod_read": (_two_stage((8, 8), (8, 8), (8, 8), (8, 8), "B[w0 % 4, w1]"), 0),
    "reversed": (_two_stage((8, 8), (8, 8), (8, 8), (8, 8), "B[7 - w0, w1]"), 0),
    "reversed_inner": (_two_stage((8, 8), (8, 8), (8, 8), (8, 8), "B[w0, 7 - w1]"), 1),
    "fused_read": (_two_stage((32,), (32,), (8, 4), (8, 4), "B[w0 * 4 + w1]"), 0),
    "stencil": (_two_stage((9, 8), (9, 8), (8, 8), (8, 8), "B[w0 + 1, w1] + B[w0, w1]"), 0),
}


@pytest.mark.parametrize("name", sorted(COMPUTE_AT))
def test_compute_at_affine_reads(name):
    src, level = COMPUTE_AT[name]
    assert_agrees(src, _compute_b_at(level), printer=True)


# --- reverse_compute_at when the consumer reads through fusions, splits, reversed indices -----
def _reverse_c_at(level, split=None):
    def sched(s):
        b = s.get_block("B")
        if split:
            s.split(s.get_loops(b)[0], split)
        s.reverse_compute_at(s.get_block("C"), s.get_loops(b)[level])

    return sched


FUSED_READ = _two_stage((32,), (32,), (8, 4), (8, 4), "B[w0 * 4 + w1]")
SPLIT_READ = _two_stage((8, 4), (8, 4), (32,), (32,), "B[w0 // 4, w0 % 4]")
REVERSE_COMPUTE_AT = {
    "split_read": (SPLIT_READ, _reverse_c_at(0)),
    "split_read_inner": (SPLIT_READ, _reverse_c_at(1)),
    "split3_read": (
        _two_stage((4, 2, 4), (4, 2, 4), (32,), (32,), "B[w0 // 8, w0 // 4 % 2, w0 % 4]"),
        _reverse_c_at(1),
    ),
    "fused_read": (FUSED_READ, _reverse_c_at(0)),
    "fused_read_tiles": (FUSED_READ, _reverse_c_at(0, [8, 4])),
    "fused_read_inner": (FUSED_READ, _reverse_c_at(1, [8, 4])),
    "fused_read_part_digit": (FUSED_READ, _reverse_c_at(0, [16, 2])),
    "fused_read_two_digits": (FUSED_READ, _reverse_c_at(0, [4, 8])),
    "reversed": (_two_stage((8, 8), (8, 8), (8, 8), (8, 8), "B[7 - w0, w1]"), _reverse_c_at(0)),
    "reversed_shifted": (
        _two_stage((9, 8), (9, 8), (8, 8), (8, 8), "B[8 - w0, w1]"),
        _reverse_c_at(1),
    ),
    "shifted": (_two_stage((9, 8), (9, 8), (8, 8), (8, 8), "B[w0 + 1, w1]"), _reverse_c_at(0)),
}


@pytest.mark.parametrize("name", sorted(REVERSE_COMPUTE_AT))
def test_reverse_compute_at_affine_reads(name):
    src, sched = REVERSE_COMPUTE_AT[name]
    assert_agrees(src, sched, printer=True)


OVERLAP = (
    _elemwise(bind="i // 2 * 2 + j % 2")
    .replace("for i, j in T.grid(16, 16)", "for i, j, k in T.grid(6, 4, 16)")
    .replace("vi = T.axis.spatial(16, i // 2 * 2 + j % 2)", "vi = T.axis.spatial(16, i * 2 + j)")
    .replace("vj = T.axis.spatial(16, j)", "vj = T.axis.spatial(16, k)")
    .replace("j < 16", "k < 16")
)


def test_reorder_overlapping_binding_accepted_like_tvm():
    """`i * 2 + j` with 4 values of j: surjective, overlapping; TVM's iter map accepts it."""

    def sched(s):
        i, j, k = s.get_loops(s.get_block("C"))
        s.reorder(i, k, j)

    assert_agrees(OVERLAP, sched, printer=True)


# --- compute_at when the region's extent depends on the outer loops: the bounding region ----
def _split_c_compute_b(split):
    def sched(s):
        c = s.get_block("C")
        s.split(s.get_loops(c)[0], split)
        s.compute_at(s.get_block("B"), s.get_loops(c)[0])

    return sched


BOUNDING = {
    "div": (_two_stage((11,), (11,), (32,), (32,), "B[w0 // 3]"), [8, 4]),
    "div_shifted": (_two_stage((11,), (11,), (32,), (32,), "B[(w0 + 1) // 3]"), [8, 4]),
    "mod": (_two_stage((3,), (3,), (32,), (32,), "B[w0 % 3]"), [8, 4]),
    "div_2d": (_two_stage((11, 4), (11, 4), (32, 4), (32, 4), "B[w0 // 3, w1]"), [8, 4]),
}


@pytest.mark.parametrize("name", sorted(BOUNDING))
def test_compute_at_bounding_region(name):
    src, split = BOUNDING[name]
    assert_agrees(src, _split_c_compute_b(split), printer=True)


# --- inlining when a T.where leaves part of the buffer unwritten -------------------------------
_WHERE_B = _two_stage((8, 8), (8, 8), (8, 8), (8, 8), "B[w0, w1]").replace(
    "B[v0, v1] =", "T.where(l1 < 6)\n            B[v0, v1] ="
)
_WHERE_C = _two_stage((8, 8), (8, 8), (8, 8), (8, 8), "B[w0, w1]").replace(
    "C[w0, w1] =", "T.where(m1 < 6)\n            C[w0, w1] ="
)
INLINE_COVER = {
    "producer_where_uncovered": (_WHERE_B, "compute_inline", "B", False),
    "producer_where_covered": (
        _two_stage((8, 8), (8, 8), (8, 6), (8, 6), "B[w0, w1]")
        .replace("B[v0, v1] =", "T.where(l1 < 6)\n            B[v0, v1] =")
        .replace("A: T.Buffer((8, 6)", "A: T.Buffer((8, 8)"),
        "compute_inline",
        "B",
        True,
    ),
    "producer_smaller": (
        _two_stage((8, 8), (8, 4), (8, 8), (8, 8), "B[w0, w1]"),
        "compute_inline",
        "B",
        False,
    ),
    "consumer_where": (_WHERE_C, "reverse_compute_inline", "C", False),
}


@pytest.mark.parametrize("name", sorted(INLINE_COVER))
def test_inline_needs_covering_producer(name):
    src, prim, block, accepted = INLINE_COVER[name]
    out = assert_agrees(src, lambda s: getattr(s, prim)(s.get_block(block)), printer=True)
    assert (out.ours_error is None) == accepted
