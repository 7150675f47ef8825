"""reindex_cache_read / reindex_cache_write: TVM 0.21's output, numbers, trace round trip, and
the cases TVM refuses (plus those where TVM would compute wrong numbers)."""

import pytest

from schedule_check import check_all, check_error, parse
from shared_programs import CONV2D_PAD_C4_6X6 as CONV, MATMUL_16 as MATMUL, MM_RELU_16 as MM_RELU
from tir_mlir import Schedule
from schedule_cases.reindex_cache import SCHEDULES, read


@pytest.mark.tvm
@pytest.mark.parametrize("name", sorted(SCHEDULES))
def test_reindex_cache_agrees_with_tvm(name):
    from schedule_differential import assert_agrees

    src, fn = SCHEDULES[name]
    assert_agrees(src, fn)


@pytest.mark.parametrize("name", sorted(SCHEDULES))
def test_reindex_cache_numbers_and_replay(name):
    src, fn = SCHEDULES[name]
    check_all(src, fn, "main", tvm_diff=False)


def test_index_map_as_text():
    """(tir_mlir also takes the map's text, as a trace records it.)"""
    sch = check_all(
        MATMUL, read("C", 0, "shared", "lambda i, j, k: (k, i)"), "main", tvm_diff=False
    )
    assert "A_shared[vk, vi] = A[vi, vk]" in sch.mod.script()


def test_reindex_cache_read_text():
    sch = check_all(
        MATMUL, read("C", 0, "shared", lambda i, j, k: (i // 4, k, i % 4)), "main", tvm_diff=False
    )
    assert """    A_shared = T.alloc_buffer((4, 16, 4), scope="shared")
    for i, k in T.grid(16, 16):
        with T.block("A_shared"):
            vi, vk = T.axis.remap("SS", [i, k])
            T.reads(A[vi, vk])
            T.writes(A_shared[vi // 4, vk, vi % 4])
            A_shared[vi // 4, vk, vi % 4] = A[vi, vk]""" in sch.mod.script()
    assert str(sch.trace).endswith(
        'b1 = sch.reindex_cache_read(block=b0, read_buffer_index=0, storage_scope="shared", '
        "index_map=lambda i, j, k: (i // 4, k, i % 4,))"
    )


SINGLE = """
@T.prim_func
def main(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
    for i, j in T.grid(16, 16):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = A[vi, vj] + A[vj, vi]
"""

# (program, block, "read"|"write", buffer index, scope, map, message); TVM refuses each too
ILLEGAL = {
    "map_uses_other_iter_var": (
        MATMUL,
        "C",
        "read",
        0,
        "shared",
        lambda i, j, k: (i, j, k),
        "'vj' .* appears in the index map but not in the buffer",
    ),
    "map_drops_iter_var": (
        MATMUL,
        "C",
        "read",
        0,
        "shared",
        lambda i, j, k: (i,),
        "'vk' .* appears in the buffer indices but not in the index map",
    ),
    "map_offset": (MATMUL, "C", "read", 0, "shared", lambda i, j, k: (i + 2, k), "not 0"),
    "not_single_point": (
        SINGLE,
        "C",
        "read",
        0,
        "shared",
        lambda i, j: (i, j),
        "different indices",
    ),
    "index_out_of_range": (
        MATMUL,
        "C",
        "read",
        2,
        "shared",
        lambda i, j, k: (i, k),
        "out of range",
    ),
    "write_index_out_of_range": (
        MATMUL,
        "C",
        "write",
        1,
        "shared",
        lambda i, j, k: (i, j),
        "out of range",
    ),
    "bad_scope": (MATMUL, "C", "read", 0, "nowhere", lambda i, j, k: (i, k), "scope"),
    "map_arity": (MATMUL, "C", "read", 0, "shared", lambda i, j: (i, j), "symbolically"),
    "not_a_stage_pipeline": (
        MM_RELU.replace("C[vi, vj] = T.max(Y[vi, vj]", "A[vi, vj] = T.max(Y[vi, vj]"),
        "C",
        "read",
        0,
        "local",
        lambda i, j: (i, j),
        "stage pipeline",
    ),
}


def call(block, kind, i, scope, fn):
    return lambda sch: getattr(sch, f"reindex_cache_{kind}")(block, i, scope, fn)


@pytest.mark.parametrize("name", sorted(ILLEGAL))
def test_illegal_reindex_cache_refused(name):
    src, block, *args, match = ILLEGAL[name]
    sch = Schedule(parse(src))
    check_error(sch, call(sch.get_block(block), *args), match)


@pytest.mark.tvm
@pytest.mark.parametrize("name", sorted(ILLEGAL))
def test_tvm_refuses_the_same(name):
    import tvm

    src, block, *args, _ = ILLEGAL[name]
    sch = tvm.tir.Schedule(tvm.script.from_source(src))
    with pytest.raises((tvm.TVMError, ValueError, TypeError, AssertionError)):
        call(sch.get_block(block), *args)(sch)


def test_map_merging_elements_refused():
    """TVM accepts `(i + k,)` and every A[vi, vk] with the same vi + vk shares one element."""
    sch = Schedule(parse(MATMUL))
    b = sch.get_block("C")
    check_error(
        sch, call(b, "read", 0, "shared", lambda i, j, k: (i + k,)), "two different elements"
    )
    check_error(
        sch, call(b, "write", 0, "local", lambda i, j, k: (i + j,)), "two different elements"
    )


def test_map_merging_nothing_accepted():
    """A map may collapse iteration points that read the same element (non-injective on the
    iteration space, injective on the buffer)."""
    src = MATMUL.replace("A[vi, vk]", "A[vi // 2, vk]")
    check_all(src, read("C", 0, "shared", lambda i, j, k: (i // 2, k)), "main", tvm_diff=False)


INPLACE = """
@T.prim_func
def main(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    for i, k in T.grid(16, 4):
        with T.block("X"):
            vi, vk = T.axis.remap("SR", [i, k])
            A[vi] = A[vi] * T.float32(2) + B[vi]
"""


def test_read_of_written_buffer_refused():
    """TVM redirects the reads only: the later iterations of vk would read a stale copy."""
    sch = Schedule(parse(INPLACE))
    b = sch.get_block("X")
    check_error(
        sch,
        lambda s: s.reindex_cache_read(b, 0, "local", lambda i, k: (i,)),
        "would not see its writes",
    )


def test_write_without_init_refused():
    """After decompose_reduction two blocks write C (TVM fails an internal check)."""
    sch = Schedule(parse(MATMUL))
    b = sch.get_block("C")
    sch.decompose_reduction(b, sch.get_loops(b)[0])
    check_error(
        sch,
        lambda s: s.reindex_cache_write(b, 0, "local", lambda i, j, k: (i, j)),
        "written by single block",
    )


def test_predicated_block_refused():
    """A non-dividing split leaves a T.where: TVM's copy would read past the buffer."""
    sch = Schedule(parse(MATMUL))
    b = sch.get_block("C")
    sch.split(sch.get_loops(b)[0], [None, 5])
    check_error(
        sch, lambda s: s.reindex_cache_read(b, 0, "local", lambda i, j, k: (i, k)), "T.where"
    )


def test_guarded_read_reaching_outside_the_buffer_refused():
    """As reindex (tests/schedule/test_schedule_reindex.py): TVM's copy would read A[-1]."""
    sch = Schedule(parse(CONV))
    b = sch.get_block("Apad")
    check_error(
        sch,
        lambda s: s.reindex_cache_read(b, 0, "shared", lambda n, c, h, w: (n, c, h, w)),
        r"reindex_cache_read: block 'Apad' accesses 'A' at \[-1, 6\] on axis 2",
    )
