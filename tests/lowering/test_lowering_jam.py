"""Stage `jam-carried-loops`: the per-tile-element copies of a reduction loop that
`scalar-replace` leaves, each carrying one accumulator, run as one loop carrying all of them.
Checked on the loops of the scf stage (values each carries) and on the numbers (numpy)."""

import re

import numpy as np
import pytest

import tir_mlir
from tir_mlir.context import get_context
from tir_mlir.passes.lowering import pipeline
from tir_mlir.passes.lowering.jam_loops import JamCarriedLoops
from tir_mlir.passes.lowering.scalar_replace import ScalarReplace

RNG = np.random.default_rng(0)

# A tuner's tile: 2 x 2 accumulators of 4 lanes, each reduced over 16 k inside k_0.
TILE = """@T.prim_func
def main(A: T.Buffer((2, 64), "float32"), B: T.Buffer((64, 8), "float32"),
         C: T.Buffer((2, 8), "float32")):
    T.func_attr({"global_symbol": "main", "tir.noalias": True})
    for k_0, i_2, j_2, k_1 in T.grid(4, 2, 2, 16):
        for j_3 in T.vectorized(4):
            with T.block("C"):
                vi = T.axis.spatial(2, i_2)
                vj = T.axis.spatial(8, j_2 * 4 + j_3)
                vk = T.axis.reduce(64, k_0 * 16 + k_1)
                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
"""


def _carried(text) -> list:
    """The number of values each scf.for of `text` carries, in order."""
    return [
        len(m.group(1).split(","))
        for m in re.finditer(r"scf\.for [^\n]*iter_args\(([^)]*)\)", text)
    ]


def _scf(mod):
    with get_context():
        return pipeline.emit_text(mod.module, "scf")


def _check(mod):
    a, b = RNG.random((2, 64), np.float32), RNG.random((64, 8), np.float32)
    c = RNG.random((2, 8), np.float32)
    out = c.copy()
    tir_mlir.build(mod)["main"](a, b, out)
    np.testing.assert_allclose(out, c + a @ b, rtol=1e-5)


def test_copies_of_a_carried_reduction_run_as_one_loop():
    mod = tir_mlir.parse(TILE)
    assert _carried(_scf(mod)) == [4, 4]  # k_0 and one k_1 carry the four accumulators
    _check(mod)


def test_without_the_stage_the_copies_are_four_chains(monkeypatch):
    """What the stage removes: four k_1 loops one after the other, one accumulator each."""
    stages = pipeline.TARGETS["cpu"]
    monkeypatch.setitem(
        pipeline.TARGETS,
        "cpu",
        lambda: [(n, _Skip if s is JamCarriedLoops else s) for n, s in stages()],
    )
    assert _carried(_scf(tir_mlir.parse(TILE))) == [4, 1, 1, 1, 1]


class _Skip:
    name = "skip"

    def __call__(self, module):
        pass


LOOPS = """func.func @f(%m: memref<4xf32>, %x: f32) -> (f32, f32) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %a = scf.for %i = %c0 to %c8 step %c1 iter_args(%s = %x) -> (f32) {{
    %v = memref.load %m[%c0] : memref<4xf32>
    %t = arith.addf %s, %v : f32
    {store}
    scf.yield %t : f32
  }}
  %b = scf.for %i = %c0 to %c8 step %c1 iter_args(%s = {init}) -> (f32) {{
    %v = memref.load %m[%c1] : memref<4xf32>
    %t = arith.mulf %s, {factor} : f32
    scf.yield %t : f32
  }}
  return %a, %b : f32, f32
}}"""


def _jammed(store="", init="%x", factor="%v") -> int:
    from mlir import ir

    with get_context():
        module = ir.Module.parse(LOOPS.format(store=store, init=init, factor=factor))
        JamCarriedLoops()(module)
        module.operation.verify()
        return str(module).count("scf.for")


def test_reading_loops_jam_into_one():
    assert _jammed() == 1


def test_a_loop_that_writes_memory_or_needs_the_other_result_stays():
    assert _jammed(store="memref.store %t, %m[%c1] : memref<4xf32>") == 2
    assert _jammed(init="%a") == 2
    assert _jammed(factor="%a") == 2  # read in the body, not through its init


# Unrolled columns of a dot product (k innermost, no decompose_reduction): each column's loop
# is preceded by its init (a store of 0 read back) and followed by the store of its result.
DOTS = """@T.prim_func
def main(A: T.Buffer((8, 32), "float32"), B: T.Buffer((32, 16), "float32"),
         C: T.Buffer((8, 16), "float32")):
    T.func_attr({"global_symbol": "main", "tir.noalias": True})
    for i, j_0 in T.grid(8, 4):
        for j_1 in T.unroll(4):
            for k in range(32):
                with T.block("C"):
                    vi = T.axis.spatial(8, i)
                    vj = T.axis.spatial(16, j_0 * 4 + j_1)
                    vk = T.axis.reduce(32, k)
                    with T.init():
                        C[vi, vj] = T.float32(0)
                    C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
"""


def test_stores_between_the_copies_move_after_the_jammed_loop():
    """The column loops jam: the stores between them (results, inits) move after the jammed
    loop (no loop reads C) and the init read back is the stored zero. They were four
    latency-bound chains one after the other (1699409881/0568 batch_matmul)."""
    mod = tir_mlir.parse(DOTS)
    assert _carried(_scf(mod)) == [4]
    a, b = RNG.random((8, 32), np.float32), RNG.random((32, 16), np.float32)
    c = RNG.random((8, 16), np.float32)
    tir_mlir.build(mod)["main"](a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-5)


STORED_BETWEEN = """func.func @f(%m: memref<4xf32> {{llvm.noalias}}, %o: memref<4xf32> {{llvm.noalias}},
             %x: f32) -> (f32, f32) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c8 = arith.constant 8 : index
  %a = scf.for %i = %c0 to %c8 step %c1 iter_args(%s = %x) -> (f32) {{
    %v = memref.load %m[%c0] : memref<4xf32>
    %t = arith.addf %s, %v : f32
    scf.yield %t : f32
  }}
  memref.store %a, {target}[%c2] : memref<4xf32>
  %b = scf.for %i = %c0 to %c8 step %c1 iter_args(%s = %x) -> (f32) {{
    %v = memref.load %m[%c1] : memref<4xf32>
    %t = arith.mulf %s, %v : f32
    scf.yield %t : f32
  }}
  return %a, %b : f32, f32
}}"""


@pytest.mark.parametrize("target, loops", [("%o", 1), ("%m", 2)])
def test_a_store_between_moves_after_unless_a_later_loop_reads_its_buffer(target, loops):
    from mlir import ir

    with get_context():
        module = ir.Module.parse(STORED_BETWEEN.format(target=target))
        JamCarriedLoops()(module)
        module.operation.verify()
        text = str(module)
    assert text.count("scf.for") == loops
    if loops == 1:  # the store follows the jammed loop and stores its first result
        assert re.search(r"%(\w+):2 = scf\.for.*memref\.store %\1#0, %arg1", text, re.S)


# 64 unrolled rows of 16 columns: 64 loops carrying one 16-lane accumulator each.
ROWS = """@T.prim_func
def main(A: T.Buffer((64, 32), "float32"), B: T.Buffer((32, 16), "float32"),
         C: T.Buffer((64, 16), "float32")):
    T.func_attr({"global_symbol": "main", "tir.noalias": True})
    for i_1 in T.unroll(64):
        for k in range(32):
            for j in T.vectorized(16):
                with T.block("C"):
                    vi, vj, vk = T.axis.remap("SSR", [i_1, j, k])
                    with T.init():
                        C[vi, vj] = T.float32(0)
                    C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
"""


def test_a_run_wider_than_the_register_file_is_cut_where_it_would_spill():
    """Jammed as one, the 64 row loops would carry 64 vector accumulators, beyond the target's
    vector registers: LLVM spills them at every step. The run is cut into loops whose
    accumulators fit (scalar-replace's budget: the register file less FREE_REGISTERS)."""
    mod = tir_mlir.parse(ROWS)
    carried = _carried(_scf(mod))
    regs = ScalarReplace.for_target("llvm")
    width = -(-16 * 32 // regs.register_bits)  # registers of one 16-lane float accumulator
    assert sum(carried) == 64 and len(carried) > 1, carried
    assert max(carried) * width <= regs.budget, carried
    a, b = RNG.random((64, 32), np.float32), RNG.random((32, 16), np.float32)
    c = RNG.random((64, 16), np.float32)
    tir_mlir.build(mod)["main"](a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-5)


# 64 unrolled columns of a dot product: 64 loops carrying one float accumulator each.
WIDE_DOTS = DOTS.replace("(32, 16)", "(32, 256)").replace("(8, 16)", "(8, 256)")
WIDE_DOTS = WIDE_DOTS.replace("T.unroll(4)", "T.unroll(64)").replace(
    "(16, j_0 * 4", "(256, j_0 * 64"
)


def test_scalar_accumulators_count_by_their_bits():
    """64 float column sums jam as one loop: LLVM's SLP vectorizer packs them (64 x 32 bits)."""
    assert _carried(_scf(tir_mlir.parse(WIDE_DOTS))) == [64]


# Unrolled columns of a dot product over a split k (k_0 around k_1, no decompose_reduction):
# each column is a nest of two loops between its init and its result's store.
SPLIT_DOTS = """@T.prim_func
def main(A: T.Buffer((8, 64), "{t}"), B: T.Buffer((64, 16), "{t}"),
         C: T.Buffer((8, 16), "{acc}")):
    T.func_attr({{"global_symbol": "main", "tir.noalias": True}})
    for i, j_0 in T.grid(8, 2):
        for j_1 in T.unroll(8):
            for k_0, k_1 in T.grid(4, 16):
                with T.block("C"):
                    vi = T.axis.spatial(8, i)
                    vj = T.axis.spatial(16, j_0 * 8 + j_1)
                    vk = T.axis.reduce(64, k_0 * 16 + k_1)
                    with T.init():
                        C[vi, vj] = {zero}
                    C[vi, vj] = C[vi, vj] + {a} * {b}
"""
FLOAT_SPLIT_DOTS = SPLIT_DOTS.format(
    t="float32", acc="float32", zero="T.float32(0)", a="A[vi, vk]", b="B[vk, vj]"
)
INT_SPLIT_DOTS = SPLIT_DOTS.format(
    t="int8",
    acc="int32",
    zero="0",
    a='T.Cast("int32", A[vi, vk])',
    b='T.Cast("int32", B[vk, vj])',
)


def test_float_column_nests_jam_across_stores_down_to_the_innermost_loops():
    """The 8 column nests jam across their inits and stores, then their k_1 loops jam in the
    jammed k_0: 8 float chains side by side at every step. They ran one latency-bound chain of
    adds after another (1418610677/0066 matmul256_bias_relu, 1.8x TVM's time at 1 thread)."""
    mod = tir_mlir.parse(FLOAT_SPLIT_DOTS)
    assert _carried(_scf(mod)) == [8, 8]
    a, b = RNG.random((8, 64), np.float32), RNG.random((64, 16), np.float32)
    c = RNG.random((8, 16), np.float32)
    tir_mlir.build(mod)["main"](a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-5)


def test_integer_column_nests_stay_apart():
    """Integer chains are not jammed as nests: LLVM vectorizes each k_1 along k
    (2004163578/0182 matmul256_int8 ran 1.6x slower with its 8 columns jammed)."""
    mod = tir_mlir.parse(INT_SPLIT_DOTS)
    assert _carried(_scf(mod)) == [1, 1] * 8
    a = RNG.integers(-128, 128, (8, 64), dtype=np.int8)
    b = RNG.integers(-128, 128, (64, 16), dtype=np.int8)
    c = np.zeros((8, 16), np.int32)
    tir_mlir.build(mod)["main"](a, b, c)
    np.testing.assert_array_equal(c, a.astype(np.int32) @ b.astype(np.int32))
