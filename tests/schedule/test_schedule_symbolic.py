"""Schedule primitives on symbolic programs (`n = T.int32()`), on the real IR: each case of
data/symbolic/schedule_cases.py applied to a program of data/symbolic/schedule_programs.py
prints what TVM 0.21 prints (goldens recorded by data/symbolic/record_schedule_goldens.py;
with TVM installed, each golden is also checked against TVM live), and what TVM refuses (or
what needs a fact the program does not state) is a ScheduleError saying why."""

import functools
import importlib.util
from pathlib import Path

import numpy as np
import pytest

import tir_mlir
from tir_mlir.errors import ScheduleError
from schedule_check import check_numerics, parse
from symbolic_programs import SOURCES, program

DATA = Path(__file__).parent.parent / "data" / "symbolic"


def _module(name: str):
    spec = importlib.util.spec_from_file_location(f"symbolic_{name}", DATA / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


CASES = _module("schedule_cases").CASES


@functools.cache
def _tvm_programs():
    """data/symbolic/schedule_programs.py as TVM reads it, once: each of its @T.prim_func
    decorators walks the caller's stack (inspect.stack), dear in a process with many modules."""
    return _module("schedule_programs")


def scheduled(case: str) -> tir_mlir.Schedule:
    prog, fn = CASES[case]
    sch = tir_mlir.Schedule(program(prog))
    fn(sch)
    return sch


def body(text: str) -> str:
    """The statements under the root block: what the primitives made (the header, how
    parameters print, is the printer's; its tests check it)."""
    return text.strip().split('# with T.block("root"):', 1)[1]


# TVM canonicalizes the product inside its iter-map form as `m * n`; MLIR's affine
# simplification orders it `n * m` (the same value).
SAME_UP_TO_ORDER = {
    case: ("% (m * n)", "% (n * m)")
    for case in ("fuse_symbolic", "fuse_split3_reorder", "fuse_split3_reorder_small")
}


# TVM writes this binding start first (`n - i_0 * 4 - 4 + ax0`) and its guard as
# `4 <= n + ax0 - i_0 * 4`: the same values, in another term order (checked below instead).
TERM_ORDER = {"cache_read_reversed"}


def test_a_region_that_uses_a_size():
    text = scheduled("cache_read_reversed").mod.script()
    assert "v0 = T.axis.spatial(n, n + ax0 - i_0 * 4 - 4)" in text
    assert "T.where(i_0 * 4 < ax0 + n - 3)" in text


@pytest.mark.parametrize("case", sorted(set(CASES) - TERM_ORDER))
def test_prints_what_tvm_prints(case):
    golden = (DATA / "golden" / f"{case}.py").read_text()
    if case in SAME_UP_TO_ORDER:
        golden = golden.replace(*SAME_UP_TO_ORDER[case])
    assert body(scheduled(case).mod.script()) == body(golden)


@pytest.mark.tvm
@pytest.mark.parametrize("case", sorted(CASES))
def test_goldens_are_tvms(case):
    """(An extra oracle: the recorded golden is what TVM 0.21 prints today.)"""
    import tvm

    prog, fn = CASES[case]
    sch = tvm.tir.Schedule(getattr(_tvm_programs(), prog))
    fn(sch)
    assert sch.mod["main"].script().strip() == (DATA / "golden" / f"{case}.py").read_text().strip()


def test_split_guard_is_symbolic():
    text = scheduled("split_guard").mod.script()
    assert "for i_0, i_1, j in T.grid((n + 3) // 4, 4, 16):" in text
    assert "T.where(i_0 * 4 + i_1 < n)" in text


def test_sample_perfect_tile_keeps_a_symbolic_loop_whole():
    sch = tir_mlir.Schedule(program("add"))
    i, _ = sch.get_loops(sch.get_block("C"))
    factors = sch.sample_perfect_tile(i, n=3, max_innermost_factor=16)
    assert [sch.get(f) for f in factors] == [-1, 1, 1]
    assert "decision=[-1, 1, 1]" in str(sch.trace)
    with pytest.raises(
        ScheduleError,
        match=r"extent is symbolic, so the only decision is "
        r"\[-1, 1\], got \[4, 1\]",
    ):
        sch.sample_perfect_tile(i, n=2, decision=[4, 1])


def test_sample_partitioned_tile_keeps_a_symbolic_loop_whole():
    # as TVM 0.21 (its trace records `decision=[-1, 1, 1]` whatever the innerpart_factor)
    sch = tir_mlir.Schedule(program("add"))
    i, _ = sch.get_loops(sch.get_block("C"))
    factors = sch.sample_partitioned_tile(i, n=3, partition_pos=1, innerpart_factor=4)
    assert [sch.get(f) for f in factors] == [-1, 1, 1]
    assert "decision=[-1, 1, 1]" in str(sch.trace)
    outer, *_ = sch.split(i, factors)
    assert "for i_0, i_1, i_2, j in T.grid(n, 1, 1, 16):" in sch.mod.script()
    _check_sizes("add", sch.mod)
    with pytest.raises(
        ScheduleError,
        match=r"sample_partitioned_tile: the loop's extent is symbolic, so the only "
        r"decision is \[-1, 1\], got \[4, 1\]",
    ):
        sch.sample_partitioned_tile(outer, n=2, decision=[4, 1])


def test_loop_partition_needs_a_constant_range():
    sch = tir_mlir.Schedule(program("add"))
    i, _ = sch.get_loops(sch.get_block("C"))
    before = sch.mod.script()
    for factors in ([4, None], [4, 8]):
        with pytest.raises(ScheduleError, match=r"loop 'i' runs from 0 for n iterations"):
            sch.loop_partition(i, factors)
    assert sch.mod.script() == before


def test_read_at_a_region_as_long_as_a_size():
    # the copy runs over `m` (TVM 0.21 fails here: "key is not in Map"); the numbers are
    # numpy's at every size from one build
    sch = tir_mlir.Schedule(program("row_sum"))
    b = sch.get_block("B")
    i, _ = sch.get_loops(b)
    sch.read_at(i, b, 0, "shared")
    assert (
        '        with T.block("A_shared"):\n'
        "            v0 = T.axis.spatial(n, i)\n"
        "            T.reads(A[v0, 0:m])\n"
        "            T.writes(A_shared[v0, 0:m])\n"
        '            T.block_attr({"auto_copy": True})\n'
        "            for ax0, ax1 in T.grid(1, m):\n"
        "                A_shared[v0 + ax0, ax1] = A[v0 + ax0, ax1]\n"
    ) in sch.mod.script()
    _check_sizes("row_sum", sch.mod)


def test_read_at_a_guarded_region_is_refused():
    # the last tile of a split of n reads past the buffer: the copy would too
    sch = tir_mlir.Schedule(program("row_sum"))
    b = sch.get_block("B")
    i, _ = sch.get_loops(b)
    i0, _ = sch.split(i, [None, 4])
    before = sch.mod.script()
    with pytest.raises(ScheduleError, match="may lie outside the buffer"):
        sch.read_at(i0, b, 0, "shared")
    assert sch.mod.script() == before


def test_cache_inplace_of_a_symbolic_buffer():
    # TVM 0.21 prints the same copies with its block's iter vars `vi`, `vj` in place of the
    # loops `i`, `j` (undefined there: docs/tvm_compat.md)
    sch = tir_mlir.Schedule(parse(INPLACE))
    sch.cache_inplace(sch.get_block("B"), 0, "local")
    text = sch.mod.script()
    assert 'B_local = T.alloc_buffer((n, 8), scope="local")' in text
    assert (
        "        for ax0, ax1 in T.grid(1, 1):\n"
        '            with T.block("B_local"):\n'
        "                v0 = T.axis.spatial(n, i + ax0)\n"
        "                v1 = T.axis.spatial(8, j + ax1)\n"
        "                T.reads(B[v0, v1])\n"
        "                T.writes(B_local[v0, v1])\n"
        "                B_local[v0, v1] = B[v0, v1]\n"
    ) in text
    lib = tir_mlir.build(sch.mod)
    rng = np.random.default_rng(0)
    for n in SIZES:
        b = rng.random((n, 8), dtype="float32")
        want = b + 1
        lib["main"](b)
        np.testing.assert_allclose(b, want, rtol=1e-6, err_msg=f"at n = {n}")


INPLACE = """
@T.prim_func
def main(b: T.handle):
    n = T.int32()
    B = T.match_buffer(b, (n, 8), "float32")
    for i, j in T.grid(n, 8):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = B[vi, vj] + T.float32(1)
"""


def _check_sizes(prog: str, mod):
    """One build of `mod` gives numpy's numbers for `prog` at every size of SIZES."""
    lib = tir_mlir.build(mod)
    rng = np.random.default_rng(0)
    for n in SIZES:
        args, want = _inputs(prog, n, rng)
        lib[prog](*args)
        for k, expected in want.items():
            np.testing.assert_allclose(args[k], expected, rtol=1e-5, atol=1e-5, err_msg=f"n = {n}")


def test_sample_categorical_factors_replay():
    sch = scheduled("categorical_split")
    replay = tir_mlir.Schedule(program("add"))
    sch.trace.apply_to_schedule(replay, remove_postproc=False)
    assert replay.mod.script() == sch.mod.script()
    assert "T.grid((n + 7) // 8, 8, 16)" in sch.mod.script()


def test_constant_factors_cannot_cover_a_symbolic_extent():
    sch = tir_mlir.Schedule(program("add"))
    i, _ = sch.get_loops(sch.get_block("C"))
    with pytest.raises(
        ScheduleError,
        match=r"the product of factors \[4, 8\] \(32\) cannot be "
        r"proved to cover the symbolic extent n of loop 'i'",
    ):
        sch.split(i, [4, 8])
    assert "for i, j in T.grid(n, 16):" in sch.mod.script()  # unchanged


def test_unguarded_split_needs_a_stated_divisibility():
    sch = tir_mlir.Schedule(program("add"))
    i, _ = sch.get_loops(sch.get_block("C"))
    with pytest.raises(
        ScheduleError,
        match=r"disable_predication needs n % 4 == 0 for loop "
        r"'i', which the program does not state \(add "
        r"T.assume\(n % 4 == 0\)\)",
    ):
        sch.split(i, [None, 4], disable_predication=True)
    assert "T.where" not in scheduled("split_assumed_unguarded").mod.script()


def test_a_layout_that_pads_a_symbolic_dimension_is_refused():
    """(TVM: "would introduce padding wherever m % -4 < 0 ...")"""
    sch = tir_mlir.Schedule(program("scale_sum"))
    with pytest.raises(
        ScheduleError,
        match=r"sends shape \(n, m\) to \(n, \(m - 1\) // 4 \+ 1, 4\), "
        r"which is not a bijection",
    ):
        sch.transform_layout(sch.get_block("B"), ("write", 0), lambda i, j: (i, j // 4, j % 4))


def test_reduction_loop_is_not_parallel():
    sch = tir_mlir.Schedule(program("row_sum"))
    _, k = sch.get_loops(sch.get_block("B"))
    with pytest.raises(ScheduleError, match="not a data parallel"):
        sch.parallel(k)


def test_loop_view_extents():
    sch = tir_mlir.Schedule(program("add"))
    i, j = sch.get_loops(sch.get_block("C"))
    io, _ = sch.split(i, [None, 4])
    assert str(sch.get(io).extent) == "(n + 3) // 4"
    assert sch.get(j).extent == 16


def _inputs(prog: str, n: int, rng):
    """The arguments of `prog` at size n (m = n + 3 where it has a second size) and the
    outputs numpy computes from them (each paired with the argument it is compared to)."""
    f32 = lambda *shape: rng.random(shape, dtype="float32")  # noqa: E731
    m = n + 3
    if prog == "add":
        a, b, c = f32(n, 16), f32(n, 16), np.zeros((n, 16), "float32")
        return [a, b, c], {2: a + b}
    if prog == "add_assumed":
        a, c = f32(4 * n), np.zeros(4 * n, "float32")
        return [a, c], {1: a + 1}
    if prog == "row_sum":
        a, b = f32(n, m), np.zeros(n, "float32")
        return [a, b], {1: a.sum(1)}
    if prog == "matmul":
        a, b, c = f32(n, 64), f32(64, 64), np.zeros((n, 64), "float32")
        return [a, b, c], {2: a @ b}
    if prog == "reverse":
        a, b = f32(n), np.zeros(n, "float32")
        return [a, b], {1: 2 * a[::-1]}
    if prog == "scale_sum":
        a, c = f32(n, m), np.zeros(n, "float32")
        return [a, c], {1: (2 * a).sum(1)}
    raise KeyError(prog)


SIZES = (1, 3, 8, 13, 37)  # primes, and sizes smaller than every tile


@pytest.mark.parametrize("case", sorted(CASES))
def test_one_build_gives_numpys_numbers_at_every_size(case):
    prog, _ = CASES[case]
    lib = tir_mlir.build(scheduled(case).mod)
    rng = np.random.default_rng(0)
    for n in SIZES:
        args, want = _inputs(prog, n, rng)
        lib[prog](*args)
        for k, expected in want.items():
            np.testing.assert_allclose(
                args[k], expected, rtol=1e-5, atol=1e-5, err_msg=f"{case} at n = {n}"
            )


def test_reorder_of_a_three_way_split_of_a_fused_loop_divides_by_the_size():
    # TVM 0.21's print of the same schedule (docs/tvm_compat.md, fuse over (64, n)): the
    # bindings divide the fused iterator by n, bounded by the split's T.where
    sch = tir_mlir.Schedule(tir_mlir.parse((DATA / "softmax.tir").read_text()))
    norm = sch.get_block("norm")
    fused = sch.fuse(*sch.get_loops(norm))
    rest, bx, tx = sch.split(fused, [None, 256, 1024])
    sch.reorder(bx, tx, rest)
    fused = "(i_j_fused_0 * 262144 + i_j_fused_1 * 1024 + i_j_fused_2)"
    assert (
        "for i_j_fused_1, i_j_fused_2, i_j_fused_0 in T.grid(256, 1024, (n * 64 + 262143) // 262144):\n"
        '        with T.block("norm"):\n'
        f"            vi = T.axis.spatial(64, {fused} // n)\n"
        f"            vj = T.axis.spatial(n, {fused} % n)\n"
        "            T.where((i_j_fused_0 * 256 + i_j_fused_1) * 1024 + i_j_fused_2 < n * 64)\n"
    ) in sch.mod.script()


def test_reorder_of_a_static_three_way_split_of_a_fused_loop():
    # (MLIR's form of the row binding, `f0 * 16384 + f1 * 64 + f2 // 16`, no longer shows
    # the fused sum the T.where bounds: the iter map's fused iterator is what it bounds)
    src = SOURCES["add"].replace("    n = T.int32()\n", "").replace("n,", "20000,")
    sch = tir_mlir.Schedule(parse(src))
    fused = sch.fuse(*sch.get_loops(sch.get_block("C")))
    rest, bx, tx = sch.split(fused, [None, 256, 1024])
    sch.reorder(bx, tx, rest)
    assert "for i_j_fused_1, i_j_fused_2, i_j_fused_0 in T.grid(256, 1024, 2):" in sch.mod.script()
    check_numerics(parse(src), sch.mod, "add")


def test_reorder_of_a_three_way_split_of_three_fused_loops_over_sizes():
    # digits by a size times a constant (`F % (n * m * 4) // (m * 4)`) and by a size of a
    # constant division (`(F // 4) % m`, as MLIR writes it); TVM accepts the same reorder
    sch = tir_mlir.Schedule(
        parse(
            "@T.prim_func\n"
            "def f(a: T.handle, b: T.handle):\n"
            "    n, m = T.int32(), T.int32()\n"
            "    A = T.match_buffer(a, (n, m, 4))\n"
            "    B = T.match_buffer(b, (n, m, 4))\n"
            "    for i, j, k in T.grid(n, m, 4):\n"
            '        with T.block("B"):\n'
            '            vi, vj, vk = T.axis.remap("SSS", [i, j, k])\n'
            "            B[vi, vj, vk] = A[vi, vj, vk] * T.float32(2)\n"
        )
    )
    rest, bx, tx = sch.split(sch.fuse(*sch.get_loops(sch.get_block("B"))), [None, 4, 8])
    sch.reorder(tx, bx, rest)
    assert "in T.grid(8, 4, (n * m * 4 + 31) // 32):" in sch.mod.script()
    lib = tir_mlir.build(sch.mod)
    rng = np.random.default_rng(0)
    for n in SIZES:
        a = rng.random((n, n + 3, 4), dtype="float32")
        b = np.zeros_like(a)
        lib["f"](a, b)
        np.testing.assert_allclose(b, 2 * a, err_msg=f"at n = {n}")
