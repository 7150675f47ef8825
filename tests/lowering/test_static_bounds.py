"""A plain build refuses an access that provably leaves its buffer (passes/lowering/static_bounds.py),
with a located error; it never refuses one that may run in bounds, and a debug build still
checks at run time."""

import numpy as np
import pytest

import tir_mlir
from tir_mlir.errors import BuildError, OutOfBoundsError

import lowering_programs as P

PROG = """@T.prim_func
def f(A: T.Buffer((128,), "float32"), B: T.Buffer((64,), "float32")):
    for i in range(64):
        with T.block("B"):
            vi = T.axis.spatial(64, i)
            {pre}B[vi] = {value}
"""


def prog(value, pre=""):
    return tir_mlir.parse(PROG.format(value=value, pre=pre), "sb.tir")


@pytest.mark.parametrize(
    "value, fragment",
    [
        ("A[vi + 1000000]", "the load's index takes the values [1000000, 1000063]"),
        ("A[128]", "the load's index is 128"),
        ("A[vi * 2 + 2]", "the load's index takes the values [2, 128]"),  # reached at vi = 63
        ("A[vi - 1]", "takes the values [-1, 62]"),
        ("A[vi % 4 + 200]", "takes the values [200, 203]"),  # all of it outside
        ("A[vi // 2 * 4 + 8]", "takes the values [8, 132]"),
    ],
)
def test_provably_out_of_bounds_load_is_refused_at_its_location(value, fragment):
    with pytest.raises(BuildError) as info:
        tir_mlir.build(prog(value))
    e = info.value
    assert str(e.loc) == "sb.tir:6:21"
    assert "out of bounds memory access on buffer 'A' dimension 0" in str(e), str(e)
    assert fragment in str(e) and "outside the range [0, 128)" in str(e)
    assert [(m, str(loc)) for m, loc in e.notes] == [("buffer 'A' is defined here", "sb.tir:2:7")]


@pytest.mark.parametrize(
    "value, pre",
    [
        ("A[vi * 2 + 1]", ""),  # max 127: in bounds
        ("A[vi // 2 + (127 - vi) // 2 + 64]", ""),  # always 127; interval says 190
        ("A[vi % 4 * 32 + vi // 4 % 32]", ""),
        ("T.if_then_else(vi < 32, A[vi * 4 + 3], T.float32(0))", ""),  # a branch: may not run
        ("A[vi * 4 + 4]", "if vi < 31:\n                "),  # guarded by `if`
        ("A[vi * vi]", ""),  # not analysed: left to debug
    ],
)
def test_accesses_that_may_run_in_bounds_are_built(value, pre):
    lib = tir_mlir.build(prog(value, pre))
    a = np.arange(128, dtype=np.float32)
    b = np.zeros(64, np.float32)
    if "vi * vi" not in value:
        lib["f"](a, b)
        mod = prog(value, pre)
        expect = np.zeros(64, np.float32)
        tir_mlir.build(mod, debug=True)["f"](a, expect)  # checked at run time: in bounds
        np.testing.assert_array_equal(b, expect)


def test_predicated_block_is_not_refused():
    text = """@T.prim_func
def f(A: T.Buffer((100,), "float32"), B: T.Buffer((128,), "float32")):
    for i in range(128):
        with T.block("B"):
            vi = T.axis.spatial(128, i)
            T.where(i < 100)
            B[vi] = A[vi]
"""
    lib = tir_mlir.build(tir_mlir.parse(text))
    a, b = np.arange(100, dtype=np.float32), np.zeros(128, np.float32)
    lib["f"](a, b)
    np.testing.assert_array_equal(b[:100], a)


def test_split_without_predication_on_a_non_dividing_factor():
    """The schedule is TVM's (accepted, no T.where); the plain build refuses the accesses its
    last iterations make past the buffers (TVM compiles them and corrupts memory)."""
    text = """@T.prim_func
def f(A: T.Buffer((10,), "float32"), B: T.Buffer((10,), "float32")):
    for i in range(10):
        with T.block("B"):
            vi = T.axis.spatial(10, i)
            B[vi] = A[vi] + T.float32(1)
"""
    sch = tir_mlir.Schedule(tir_mlir.parse(text, "split.tir"))
    (i,) = sch.get_loops(sch.get_block("B"))
    sch.split(i, factors=[None, 4], disable_predication=True)
    assert "T.where" not in sch.mod.script()
    with pytest.raises(
        BuildError,
        match=r"buffer 'A' dimension 0: the load's index takes "
        r"the values \[0, 11\], outside the range \[0, 10\)",
    ):
        tir_mlir.build(sch.mod)
    with pytest.raises(OutOfBoundsError):  # a debug build runs it, checked
        tir_mlir.build(sch.mod, debug=True)["f"](np.zeros(10, np.float32), np.zeros(10, np.float32))
    sch2 = tir_mlir.Schedule(tir_mlir.parse(text, "split.tir"))
    (i,) = sch2.get_loops(sch2.get_block("B"))
    sch2.split(i, factors=[None, 5], disable_predication=True)  # divides: fine
    b = np.zeros(10, np.float32)
    tir_mlir.build(sch2.mod)["f"](np.arange(10, dtype=np.float32), b)
    np.testing.assert_array_equal(b, np.arange(10) + 1)


def test_lower_and_cli_refuse_too(tmp_path):
    from click.testing import CliRunner
    from tir_mlir.cli import main

    path = tmp_path / "oob.tir"
    path.write_text(PROG.format(value="A[vi + 100]", pre=""))
    r = CliRunner().invoke(main, ["run", str(path)])
    assert r.exit_code == 1 and "Traceback" not in r.output
    assert f"{path}:6:21: error: out of bounds memory access on buffer 'A'" in r.output
    r = CliRunner().invoke(main, ["run", "--bounds-check", str(path)])
    assert r.exit_code == 1 and "out-of-bounds load of buffer 'A'" in r.output, r.output


def test_hand_written_mlir_store_past_the_end():
    with pytest.raises(
        BuildError,
        match=r"'B' dimension 0: the store's index takes the "
        r"values \[1, 8\], outside the range \[0, 8\)",
    ):
        tir_mlir.build(P.out_of_bounds(8))


def _random_index(rng):
    def affine():
        return f"{rng.randint(-3, 4)} * vi + {rng.randint(-3, 4)} * vj + {rng.randint(-8, 40)}"

    terms = []
    for _ in range(rng.randint(1, 3)):
        kind = rng.choice(["affine", "div", "mod", "const"])
        if kind == "affine":
            terms.append(f"({affine()})")
        elif kind == "const":
            terms.append(str(rng.randint(-20, 40)))
        else:
            terms.append(f"({affine()}) {'//' if kind == 'div' else '%'} {rng.randint(1, 9)}")
    return " + ".join(terms)


def test_refusals_are_sound_and_affine_ones_complete():
    """Random index expressions over two loops (floordiv/floormod included), checked against
    every value they take: a refused index does leave the buffer; a purely affine one that
    leaves it is refused."""
    import random
    from mlir import ir
    from tir_mlir.context import get_context
    from tir_mlir.passes.lowering.static_bounds import StaticBounds

    rng = random.Random(7)
    grid = np.stack(np.meshgrid(np.arange(6), np.arange(5), indexing="ij")).reshape(2, -1)
    refused = outside = 0
    for _ in range(150):
        index = _random_index(rng)
        text = f"""@T.prim_func
def f(A: T.Buffer((48,), "float32"), B: T.Buffer((6, 5), "float32")):
    for i, j in T.grid(6, 5):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[{index}]
"""
        values = eval(index, {"vi": grid[0], "vj": grid[1]})  # noqa: S307 - our own text
        bad = bool(np.any((values < 0) | (values >= 48)))
        with get_context():
            module = ir.Module.parse(str(tir_mlir.parse(text).module))
            try:
                StaticBounds()(module)
                refuse = False
            except BuildError:
                refuse = True
        assert bad or not refuse, f"refused an in-bounds index: {index}"
        if "//" not in index and "%" not in index:
            assert refuse == bad, f"missed a provably bad affine index: {index}"
        refused += refuse
        outside += bad
    assert 20 < refused < outside  # both answers, and bad indices it cannot prove (37 < 62)
