"""Loop primitives: split, fuse, reorder, add_unit_loop, parallel/vectorize/unroll/bind,
annotate/unannotate, tile. Each: numerics vs the unscheduled program, trace replay (Python +
JSON), TVM differential, and the illegal cases (message + module unchanged)."""

import pytest

from schedule_check import check_all, check_error, interp, parse
from tir_mlir import Schedule
from workloads import matmul

MATMUL = matmul(16, noalias=True)

VEC10 = """
@T.prim_func
def main(A: T.Buffer((10,), "float32"), B: T.Buffer((10,), "float32")):
    T.func_attr({"tir.noalias": True})
    for i in range(10):
        with T.block("B"):
            vi = T.axis.spatial(10, i)
            B[vi] = A[vi] * T.float32(2)
"""


def loops(sch, name="C"):
    return sch.get_loops(sch.get_block(name))


# --- split -----------------------------------------------------------------------------------
def test_split_exact_text():
    def s(sch):
        i, j, k = loops(sch)
        sch.split(j, factors=[None, 4])

    sch = check_all(MATMUL, s, "main")
    body = sch.mod.script().split("T.func_attr", 1)[1]
    assert "for i, j_0, j_1, k in T.grid(16, 4, 4, 16):" in body
    assert "vj = T.axis.spatial(16, j_0 * 4 + j_1)" in body
    assert str(sch.trace).splitlines()[-1] == (
        "  l4, l5 = sch.split(loop=l2, factors=[None, 4], preserve_unit_iters=True, "
        "disable_predication=False)"
    )


def test_split_non_dividing_adds_predicate():
    def s(sch):
        (i,) = loops(sch, "B")
        sch.split(i, factors=[3, 4])

    sch = check_all(VEC10, s, "main")
    assert "T.where(i_0 * 4 + i_1 < 10)" in sch.mod.script()


def test_split_three_factors_and_names():
    def s(sch):
        i, j, k = loops(sch)
        sch.split(k, factors=[2, None, 2], names=["ko", "km", "ki"])

    sch = check_all(MATMUL, s, "main", tvm_diff=False)
    assert "vk = T.axis.reduce(16, ko * 8 + km * 2 + ki)" in sch.mod.script()
    assert "names=" in str(sch.trace)


@pytest.mark.parametrize(
    "factors, match",
    [
        ([None, None], "only one factor can be None"),
        ([3, 5], r"product of factors \[3, 5\] \(15\) is smaller than the extent 16"),
        ([0, None], "must be a positive int"),
        ([16], "at least two factors"),
    ],
)
def test_split_illegal(factors, match):
    sch = Schedule(parse(MATMUL))
    i, j, k = loops(sch)
    check_error(sch, lambda s: s.split(j, factors=factors), match)


def test_consumed_handle():
    sch = Schedule(parse(MATMUL))
    i, j, k = loops(sch)
    sch.split(j, factors=[None, 4])
    check_error(
        sch,
        lambda s: s.split(j, factors=[2, None]),
        "loop l2 was consumed by split at trace step 2",
    )


# --- fuse --------------------------------------------------------------------------------------
def test_fuse():
    def s(sch):
        i, j, k = loops(sch)
        sch.fuse(i, j)

    sch = check_all(MATMUL, s, "main")
    text = sch.mod.script()
    assert "for i_j_fused, k in T.grid(256, 16):" in text
    assert "vi = T.axis.spatial(16, i_j_fused // 16)" in text
    assert "vj = T.axis.spatial(16, i_j_fused % 16)" in text


def test_split_then_fuse_back_simplifies():
    def s(sch):
        i, j, k = loops(sch)
        j0, j1 = sch.split(j, factors=[None, 4])
        sch.fuse(j0, j1)

    sch = check_all(MATMUL, s, "main")
    assert 'vi, vj, vk = T.axis.remap("SSR", [i, j_0_j_1_fused, k])' in sch.mod.script()


def test_fuse_split_predicate():
    def s(sch):
        i, j, k = loops(sch)
        j0, j1 = sch.split(j, factors=[None, 4])
        sch.reorder(j0, k, j1)
        f = sch.fuse(i, j0)
        sch.split(f, factors=[3, None])

    check_all(MATMUL, s, "main")


def test_fuse_illegal():
    sch = Schedule(parse(MATMUL))
    i, j, k = loops(sch)
    check_error(sch, lambda s: s.fuse(k, i), "is not the parent of the inner loop")
    check_error(sch, lambda s: s.fuse(i, k), "is not the parent of the inner loop")


# --- reorder -----------------------------------------------------------------------------------
def test_reorder():
    def s(sch):
        i, j, k = loops(sch)
        sch.reorder(k, i)

    sch = check_all(MATMUL, s, "main")
    assert "for k, j, i in T.grid(16, 16, 16):" in sch.mod.script()


def test_reorder_illegal():
    sch = Schedule(parse(MATMUL))
    i, j, k = loops(sch)
    check_error(sch, lambda s: s.reorder(i, i), "appears in the input array multiple times")


def test_reorder_not_one_chain():
    src = VEC10.replace(
        """    for i in range(10):""",
        """    for i in range(10):
        with T.block("A"):
            vi = T.axis.spatial(10, i)
            A[vi] = A[vi] + T.float32(1)
    for i in range(10):""",
    )
    sch = Schedule(parse(src))
    (a,) = loops(sch, "A")
    (b,) = loops(sch, "B")
    check_error(sch, lambda s: s.reorder(a, b), "not in the same loop chain")


def test_reorder_not_perfect_nest():
    src = """
@T.prim_func
def main(A: T.Buffer((4, 4), "float32")):
    for i in range(4):
        with T.block("X"):
            vi = T.axis.spatial(4, i)
            A[vi, 0] = T.float32(1)
        for j in range(4):
            with T.block("Y"):
                vi, vj = T.axis.remap("SS", [i, j])
                A[vi, vj] = A[vi, vj] + T.float32(1)
"""
    sch = Schedule(parse(src))
    i, j = loops(sch, "Y")
    check_error(sch, lambda s: s.reorder(j, i), "more than one child")


# --- loop kinds, annotations, unit loop ----------------------------------------------------------
def test_kinds_and_annotations():
    def s(sch):
        i, j, k = loops(sch)
        j0, j1 = sch.split(j, factors=[None, 4])
        sch.reorder(j0, k, j1)
        sch.parallel(i)
        sch.vectorize(j1)
        sch.unroll(k)
        sch.annotate(j0, "pragma_auto_unroll_max_step", 16)
        sch.annotate(sch.get_block("C"), "meta", "x")
        sch.unannotate(sch.get_block("C"), "meta")
        sch.add_unit_loop(sch.get_block("C"))

    sch = check_all(MATMUL, s, "main")
    text = sch.mod.script()
    for line in (
        "for i in T.parallel(16):",
        "for k in T.unroll(16):",
        "for j_1 in T.vectorized(4):",
        'for j_0 in T.serial(4, annotations={"pragma_auto_unroll_max_step": 16}):',
    ):
        assert line in text


def test_bind():
    def s(sch):
        i, j, k = loops(sch)
        sch.bind(i, "blockIdx.x")
        sch.bind(j, "threadIdx.x")

    sch = check_all(MATMUL, s, "main", runner=interp)  # thread_binding: GPU only
    assert 'for i in T.thread_binding(16, thread="blockIdx.x"):' in sch.mod.script()


@pytest.mark.parametrize(
    "prim, match",
    [
        (
            lambda s, k: s.parallel(k),
            "The \"parallel\" cannot be fulfilled with regard to block 'C'",
        ),
        (lambda s, k: s.vectorize(k), 'The "vectorize" cannot be fulfilled'),
        (lambda s, k: s.bind(k, "blockIdx.x"), 'The "bind" cannot be fulfilled'),
        (lambda s, k: s.bind(k, "warp.x"), "unknown thread axis 'warp.x'"),
        (lambda s, k: s.unannotate(k, "nope"), "cannot find annotation key 'nope'"),
    ],
)
def test_kind_illegal(prim, match):
    sch = Schedule(parse(MATMUL))
    i, j, k = loops(sch)
    check_error(sch, lambda s: prim(s, k), match)


def test_reduction_bound_to_threadidx_is_allowed():
    sch = Schedule(parse(MATMUL))
    i, j, k = loops(sch)
    sch.bind(k, "threadIdx.x")


# --- tile ----------------------------------------------------------------------------------------
def test_tile_records_splits_and_reorder():
    def s(sch):
        i, j, k = loops(sch)
        sch.tile(i, j, factors=[[None, 8], [None, 4]])

    sch = check_all(MATMUL, s, "main", tvm_diff=False)
    assert "for i_0, j_0, i_1, j_1, k in T.grid(2, 4, 8, 4, 16):" in sch.mod.script()
    assert [i.name for i in sch.trace.insts] == [
        "get_block",
        "get_loops",
        "split",
        "split",
        "reorder",
    ]


def test_tile_illegal():
    sch = Schedule(parse(MATMUL))
    i, j, k = loops(sch)
    check_error(sch, lambda s: s.tile(i, j, factors=[[None, 8]]), "2 loops but 1 factor lists")
    check_error(sch, lambda s: s.tile(i, j, factors=[[None, 8], [3, 5]]), "smaller than the extent")


# --- queries -------------------------------------------------------------------------------------
def test_get_block_errors():
    sch = Schedule(parse(MATMUL))
    check_error(sch, lambda s: s.get_block("nope"), "Cannot find a block with the name: nope")
    check_error(sch, lambda s: s.get_block("C", func_name="other"), "no function named 'other'")


def test_producers_consumers_children():
    src = open(
        __file__.replace("schedule/test_schedule_loops.py", "data/programs/softmax.tir")
    ).read()
    sch = Schedule(parse(src))
    names = lambda rvs: [sch.get(b).name for b in rvs]  # noqa: E731
    assert names(sch.get_producers(sch.get_block("norm"))) == ["exp", "expsum"]
    assert names(sch.get_consumers(sch.get_block("maxelem"))) == ["exp"]
    (i, k) = loops(sch, "expsum")
    assert names(sch.get_child_blocks(i)) == ["expsum"]
    assert sch.get(i).name == "i" and sch.get(k).extent == 128


def test_copy_is_independent():
    sch = Schedule(parse(MATMUL))
    i, j, k = loops(sch)
    other = sch.copy()
    other.split(j, factors=[None, 4])
    assert "j_0" not in sch.mod.script() and "j_0" in other.mod.script()
    sch.fuse(i, j)
    assert len(sch.trace) == 3 and len(other.trace) == 3
