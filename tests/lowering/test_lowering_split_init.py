"""A reduction's init left in a split k (`if k0 * K1 + k1 == 0: C = 0`, no decompose_reduction)
becomes the start value of the accumulators that scalar-replace carries, loop by loop, instead
of a branch per value and step (in LLVM a select per accumulator and step, and with a full
register file, spills). Numbers against numpy, structure of the scf."""

import re

import numpy as np

import tir_mlir
from tir_mlir import Schedule
from tir_mlir.passes.lowering.pipeline import emit_text
from workloads import matmul

RNG = np.random.default_rng(0)


def _innermost_for(scf: str) -> str:
    """The body of the last `scf.for` that carries values, up to its yield."""
    start = [m.start() for m in re.finditer(r"scf\.for .*iter_args", scf)][-1]
    return scf[start : scf.index("scf.yield", start)]


def _check(sch, n, k):
    a = RNG.random((n, k), dtype=np.float32)
    b = RNG.random((k, n), dtype=np.float32)
    c = np.full((n, n), 7, np.float32)
    tir_mlir.build(sch.mod)["main"](a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)


def test_split_k_tile_starts_from_the_init():
    # i0, j0, k0, k1, i1 (unrolled), j1 (vectorized): both k loops carry the 4 vector
    # accumulators, and they start at zero: no if in the k loops, C is never read.
    sch = Schedule(tir_mlir.parse(matmul(64, noalias=True)))
    i, j, k = sch.get_loops(sch.get_block("C"))
    i0, i1 = sch.split(i, factors=[None, 4])
    j0, j1 = sch.split(j, factors=[None, 16])
    k0, k1 = sch.split(k, factors=[None, 16])
    sch.reorder(i0, j0, k0, k1, i1, j1)
    sch.unroll(i1)
    sch.vectorize(j1)
    scf = emit_text(sch.mod.module, "scf")
    four = ", ".join(["vector<16xf32>"] * 4)
    assert scf.count(f"-> ({four})") == 2  # k0 and k1
    assert "scf.if" not in scf[scf.index("iter_args") :]
    assert "vector.load %arg2" not in scf  # the init is the start value
    _check(sch, 64, 64)


def test_split_k_init_tested_where_the_outer_k_does_not_carry():
    # k0 outside j (64 steps: too many to unroll): only k1 carries C[i, j]; its init is
    # tested once per k1 loop (on k0) before it, not at every step.
    sch = Schedule(tir_mlir.parse(matmul(64, noalias=True)))
    i, j, k = sch.get_loops(sch.get_block("C"))
    k0, k1 = sch.split(k, factors=[None, 16])
    sch.reorder(i, k0, j, k1)
    scf = emit_text(sch.mod.module, "scf")
    assert "scf.if" not in _innermost_for(scf)
    before = scf[: [m.start() for m in re.finditer(r"scf\.for .*iter_args", scf)][-1]]
    assert re.search(r"scf\.if %\w+ -> \(f32\)", before)
    _check(sch, 64, 64)


def test_init_that_holds_at_a_later_step_stays_in_the_loop():
    # k1 counts down (vk = k0 * 16 + 15 - k1): the init holds at the last step of k1 in the
    # first k0, so it cannot start the loop; the sum starts there.
    prog = tir_mlir.parse(
        """
@T.prim_func
def main(A: T.Buffer((8, 64), "float32"), C: T.Buffer((8,), "float32")):
    T.func_attr({"tir.noalias": True})
    for i, k0, k1 in T.grid(8, 4, 16):
        with T.block("C"):
            vi = T.axis.spatial(8, i)
            vk = T.axis.reduce(64, k0 * 16 + 15 - k1)
            with T.init():
                C[vi] = T.float32(0)
            C[vi] = C[vi] + A[vi, vk]
"""
    )
    assert "scf.if" in _innermost_for(emit_text(prog.module, "scf"))
    a = RNG.random((8, 64), dtype=np.float32)
    c = np.full((8,), 7, np.float32)
    tir_mlir.build(prog)["main"](a, c)
    np.testing.assert_allclose(c, a[:, 0] + a[:, 16:].sum(axis=1), rtol=1e-5)


CONV = """
@T.prim_func
def main(A: T.Buffer((1, 4, 10, 10), "float32"), W: T.Buffer((4, 4, 3, 3), "float32"),
         B: T.Buffer((1, 4, 8, 8), "float32")):
    T.func_attr({"tir.noalias": True})
    for n, f, y, x, rc, ry, rx in T.grid(1, 4, 8, 8, 4, 3, 3):
        with T.block("B"):
            vn, vf, vy, vx, vc, vr, vs = T.axis.remap("SSSSRRR", [n, f, y, x, rc, ry, rx])
            with T.init():
                B[vn, vf, vy, vx] = T.float32(0)
            B[vn, vf, vy, vx] = B[vn, vf, vy, vx] + A[vn, vc, vy + vr, vx + vs] * W[vf, vc, vr, vs]
"""


def test_init_over_several_reduction_loops_starts_the_carried_tile():
    # 2 filters x 2 columns inside rc, ry, rx: the init `if rc == 0 and ry == 0 and rx == 0`
    # (no decompose_reduction) is a conjunction tested in rx's loop; it starts the 4 carried
    # accumulators of all three loops, so none is selected against zero at every step and B is
    # never read.
    sch = Schedule(tir_mlir.parse(CONV))
    n, f, y, x, rc, ry, rx = sch.get_loops(sch.get_block("B"))
    f0, f1 = sch.split(f, factors=[None, 2])
    x0, x1 = sch.split(x, factors=[None, 2])
    sch.reorder(n, f0, y, x0, rc, ry, rx, f1, x1)
    # (annotated, x0 stays around the tile: loop-interchange would run strips of it inside)
    sch.annotate(x0, "pragma_keep", 1)
    scf = emit_text(sch.mod.module, "scf")
    assert scf.count("-> (f32, f32, f32, f32)") == 3  # rc, ry and rx
    body = _innermost_for(scf)
    assert "scf.if" not in body and "arith.select" not in body
    assert "memref.load %arg2" not in scf  # the init is the start value
    a = RNG.random((1, 4, 10, 10), dtype=np.float32)
    w = RNG.random((4, 4, 3, 3), dtype=np.float32)
    b = np.full((1, 4, 8, 8), 7, np.float32)
    tir_mlir.build(sch.mod)["main"](a, w, b)
    np.testing.assert_allclose(b, _conv(a, w), rtol=1e-4, atol=1e-4)


def _conv(a, w):
    want = np.zeros((1, 4, 8, 8), np.float32)
    for r in range(3):
        for s in range(3):
            want[0] += np.einsum("cyx,fc->fyx", a[0, :, r : r + 8, s : s + 8], w[:, :, r, s])
    return want


def test_init_of_a_cache_write_tile_starts_the_carried_values():
    # The same tile through cache_write (reverse_compute_at the fused outer loop) with the
    # filters unrolled: the tile's rows and columns, small loops, are unrolled by scalar-replace,
    # which leaves the dropped store's address (of the unrolled IV, a constant in the loop) in
    # each init's then-block; dead, it must not keep the init from starting the carried values.
    sch = Schedule(tir_mlir.parse(CONV))
    block = sch.get_block("B")
    n, f, y, x, rc, ry, rx = sch.get_loops(block)
    f0, f1 = sch.split(f, factors=[None, 2])
    x0, x1 = sch.split(x, factors=[None, 2])
    sch.reorder(n, f0, y, x0, rc, ry, rx, f1, x1)
    outer = sch.fuse(n, f0, y)
    sch.reverse_compute_at(sch.cache_write(block, 0, "local"), outer)
    sch.unroll(f1)
    scf = emit_text(sch.mod.module, "scf")
    assert scf.count("-> (f32, f32, f32, f32)") == 3  # rc, ry and rx
    assert "scf.if" not in _innermost_for(scf)
    a = RNG.random((1, 4, 10, 10), dtype=np.float32)
    w = RNG.random((4, 4, 3, 3), dtype=np.float32)
    b = np.full((1, 4, 8, 8), 7, np.float32)
    tir_mlir.build(sch.mod)["main"](a, w, b)
    np.testing.assert_allclose(b, _conv(a, w), rtol=1e-4, atol=1e-4)


CONV1D = """
@T.prim_func
def main(A: T.Buffer((1, 8, 18), "float32"), W: T.Buffer((4, 8, 3), "float32"),
         B: T.Buffer((1, 4, 16), "float32")):
    T.func_attr({"tir.noalias": True})
    for n, f, x, rc, rx in T.grid(1, 4, 16, 8, 3):
        with T.block("B"):
            vn, vf, vx, vc, vr = T.axis.remap("SSSRR", [n, f, x, rc, rx])
            with T.init():
                B[vn, vf, vx] = T.float32(0)
            B[vn, vf, vx] = B[vn, vf, vx] + A[vn, vc, vx + vr] * W[vf, vc, vr]
"""


def test_init_of_a_guarded_split_k_is_stored_before_it():
    # rc split 3 x 2 x 3 (18 > 8: a version guard runs rc0's tail under loops of its own), so
    # rc0 cannot carry the cache_write element; its init `if rc0 == 0` on the value in
    # memory was a select of 0 or the element at every rc0 step: a dependence of each output's
    # sum on the one before. Now 0 is stored before rc0 and the loads start from it.
    sch = Schedule(tir_mlir.parse(CONV1D))
    n, f, x, rc, rx = sch.get_loops(sch.get_block("B"))
    rc0, rc1, rc2 = sch.split(rc, factors=[None, 2, 3])
    sch.reorder(n, f, x, rc0, rx, rc1, rc2)
    nf = sch.fuse(n, f)
    local = sch.cache_write(sch.get_block("B"), 0, "local")
    sch.reverse_compute_at(local, x)
    sch.parallel(nf)
    scf = emit_text(sch.mod.module, "scf")
    assert not re.search(r"scf\.if %\w+ -> \(f32\)", scf) and "arith.select" not in scf
    rc0_loop = scf.index("scf.for", scf.index("scf.for", scf.index("scf.parallel")) + 1)
    assert "memref.store %cst" in scf[:rc0_loop]  # the init, before rc0
    a = RNG.random((1, 8, 18), dtype=np.float32)
    w = RNG.random((4, 8, 3), dtype=np.float32)
    b = np.full((1, 4, 16), 7, np.float32)
    tir_mlir.build(sch.mod)["main"](a, w, b)
    want = sum(np.einsum("cx,fc->fx", a[0, :, r : r + 16], w[:, :, r]) for r in range(3))
    np.testing.assert_allclose(b[0], want, rtol=1e-5, atol=1e-5)
