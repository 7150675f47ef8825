"""loop_partition: TVM 0.21's output (up to T.reads/T.writes, which TVM leaves stale on the
copies and empty on the wrappers, where we print the real regions), numbers, trace round trip,
and the factors TVM refuses."""

import pytest

from schedule_check import check_all, check_error, parse
from shared_programs import MATMUL_16 as MATMUL
from tir_mlir import Schedule
from schedule_cases.loop_partition import EW, SCHEDULES, inner


EXPECTED = """# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((8, 10), "float32"), B: T.Buffer((8, 10), "float32")):
    # with T.block("root"):
    for i in range(8):
        with T.block("B_j_common"):
            T.reads()
            T.writes()
            with T.block("B_j0_partition"):
                T.reads()
                T.writes()
                for j0 in range(4):
                    with T.block("B_j0"):
                        vi, vj = T.axis.remap("SS", [i, j0])
                        T.reads(A[0:8, 0:4])
                        T.writes(B[0:8, 0:4])
                        B[vi, vj] = A[vi, vj] * T.float32(2.0)
            with T.block("B_j1_partition"):
                T.reads()
                T.writes()
                for j1 in range(4, 10):
                    with T.block("B_j1"):
                        vi, vj = T.axis.remap("SS", [i, j1])
                        T.reads(A[0:8, 4:10])
                        T.writes(B[0:8, 4:10])
                        B[vi, vj] = A[vi, vj] * T.float32(2.0)"""
# (TVM's regions: none on the wrappers, each copy's over the whole part)


def test_partition_prints_like_tvm():
    sch = check_all(EW, inner([4, None]), "main", tvm_diff=False)
    assert sch.mod.script() == EXPECTED
    assert str(sch.trace).endswith(
        "l3, l4 = sch.loop_partition(loop=l2, factors=[4, None], preserve_unit_iters=True)"
    )


def _twice(sch):
    i, j = sch.get_loops(sch.get_block("B"))
    sch.loop_partition(j, [3, None])
    sch.loop_partition(i, [None, 3])


def _after_split(sch):
    i, j, k = sch.get_loops(sch.get_block("C"))
    i0, i1 = sch.split(i, [4, 4])
    sch.loop_partition(i0, [1, None])


def _after_fuse(sch):
    i, j, k = sch.get_loops(sch.get_block("C"))
    sch.loop_partition(sch.fuse(i, j), [100, None])


# The partitioned loop is outermost: TVM then prints the root block explicitly (text differs).
OUTERMOST = {
    "twice": (EW, _twice),
    "after_split": (MATMUL, _after_split),
    "after_fuse": (MATMUL, _after_fuse),
    "outer": (EW, lambda sch: sch.loop_partition(sch.get_loops(sch.get_block("B"))[0], [2, None])),
}


@pytest.mark.tvm
@pytest.mark.parametrize("name", sorted(SCHEDULES))
def test_partition_agrees_with_tvm(name):
    from schedule_differential import assert_agrees

    src, fn = SCHEDULES[name]
    assert_agrees(src, fn)


@pytest.mark.tvm
@pytest.mark.parametrize("name", sorted(OUTERMOST))
def test_partition_of_outermost_loop_agrees_with_tvm(name):
    from schedule_differential import assert_agrees

    src, fn = OUTERMOST[name]
    assert_agrees(src, fn, text=False)


@pytest.mark.parametrize("name", sorted(SCHEDULES) + sorted(OUTERMOST))
def test_partition_numbers_and_replay(name):
    src, fn = {**SCHEDULES, **OUTERMOST}[name]
    check_all(src, fn, "main", tvm_diff=False)


def test_reduction_partition_keeps_the_init_at_the_first_iteration():
    """TVM narrows vk's domain too, so T.init() re-runs in the second part (wrong sums, and
    its build fails); we keep the reduction domain whole."""

    def fn(sch):
        i, j, k = sch.get_loops(sch.get_block("C"))
        sch.loop_partition(k, [4, None])

    sch = check_all(MATMUL, fn, "main", tvm_diff=False)
    text = sch.mod.script()
    assert "vk = T.axis.reduce(16, k1)" in text and 'T.block("C_k1")' in text


def test_handles_after_partition():
    sch = Schedule(parse(EW))
    b = sch.get_block("B")
    i, j = sch.get_loops(b)
    j0, j1 = sch.loop_partition(j, [4, None])
    assert (sch.get(j0).min, sch.get(j0).extent, sch.get(j1).min, sch.get(j1).extent) == (
        0,
        4,
        4,
        6,
    )
    assert sch.get(i).extent == 8
    with pytest.raises(Exception, match="consumed by loop_partition"):
        sch.get(j)
    with pytest.raises(Exception, match="consumed by loop_partition"):
        sch.get(b)
    assert sch.get(sch.get_block("B_j1")).iter_vars[1].dom == (4, 6)


@pytest.mark.parametrize(
    "factors,match",
    [
        ([4, 6], "larger than or equal to the extent"),
        ([10], "larger than or equal to the extent"),
        ([None, 10], "larger than or equal to the extent"),
        ([None, None, 4], "only one factor"),
        ([0, 10], "required to be positive"),
        ([2.5, None], "required to be positive"),
        ([2, -1], "required to be positive"),
    ],
)
def test_illegal_factors_refused(factors, match):
    sch = Schedule(parse(EW))
    i, j = sch.get_loops(sch.get_block("B"))
    check_error(sch, lambda s: s.loop_partition(j, factors), match)


@pytest.mark.tvm
@pytest.mark.parametrize("factors", [[4, 6], [None, None, 4], [0, 10], [2, -1]])
def test_tvm_refuses_the_same_factors(factors):
    import tvm

    sch = tvm.tir.Schedule(tvm.script.from_source(EW))
    i, j = sch.get_loops(sch.get_block("B"))
    with pytest.raises(tvm.TVMError):
        sch.loop_partition(j, factors)


def test_loop_without_block_refused():
    src = """
@T.prim_func
def main(A: T.Buffer((8,), "float32")):
    for i in range(8):
        A[i] = T.float32(1)
"""
    from tir_mlir.context import get_context
    from tir_mlir.analysis.structure import is_loop, walk

    sch = Schedule(parse(src))
    with get_context():  # no block to reach the loop from with get_loops: a handle by hand
        rv = sch._handle(next(o for o in walk(sch.mod["main"]) if is_loop(o)))
    check_error(sch, lambda s: s.loop_partition(rv, [4, None]), "contains no block")


def test_annotated_loop_refused():
    """TVM's rule, as for split (fuzzer seed 991)."""
    sch = Schedule(parse(EW))
    i, _ = sch.get_loops(sch.get_block("B"))
    sch.annotate(i, "pragma_auto_unroll_max_step", 4)
    check_error(
        sch,
        lambda s: s.loop_partition(i, [3, None]),
        "loop_partition: loop 'i' has an annotation or thread binding",
    )


def _kind_then_partition(kind):
    def fn(sch):
        _, j = sch.get_loops(sch.get_block("B"))
        getattr(sch, kind)(j)
        sch.loop_partition(j, [3, None])

    return fn


@pytest.mark.parametrize("kind", ["parallel", "unroll", "vectorize"])
def test_parts_are_serial(kind):
    """TVM builds the parts as serial loops (fuzzer seed 2648: an unrolled loop)."""
    text = check_all(EW, _kind_then_partition(kind), "main", tvm_diff=False).mod.script()
    assert not any(k in text for k in ("T.parallel", "T.unroll", "T.vectorized"))


@pytest.mark.tvm
def test_unrolled_loop_partitioned_agrees_with_tvm():
    from schedule_differential import assert_agrees

    assert_agrees(EW, _kind_then_partition("unroll"))
