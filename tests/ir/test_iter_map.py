"""TVM's iter-map normal form of bindings (tir_mlir/analysis/iter_map.py): the trees TVM 0.21's
IterMapSimplify gives for the bindings split and fuse build (each expected text is what TVM
printed for the same schedule), and None where the port does not model TVM."""

import random

import pytest
from mlir import ir

from tir_mlir.analysis import iter_map as im
from tir_mlir.analysis.iter_map import add, floordiv, floormod, mul
from tir_mlir.context import get_context
from tir_mlir.printer.affine_text import tree_text


def v(k):
    return ("v", k)


def _texts(trees, names):
    return [tree_text(t, names)[0] for t in trees]


def test_a_fused_sum_stays_whole_under_div_and_mod():
    f = add(mul(v(0), 1024), v(1))
    out = im.simplify([floordiv(f, 512), floormod(f, 512)], {0: 256, 1: 1024})
    assert _texts(out, ["f0", "f1"]) == ["(f0 * 1024 + f1) // 512", "(f0 * 1024 + f1) % 512"]


def test_a_bound_narrows_the_fused_mark():
    # four loops (98, 4, 2, 16) fused, split by 1024 with T.where(f < 12544): TVM's
    # rewrite_unbound_block test `after_unrolled_loop`
    f = add(mul(v(0), 1024), v(1))
    p = add(mul(floordiv(f, 128), 2), floordiv(floormod(f, 32), 16))
    co = add(mul(floordiv(floormod(f, 128), 32), 16), floormod(f, 16))
    out = im.simplify([p, co], {0: 13, 1: 1024}, [(f, 12544)])
    assert _texts(out, ["a", "b"]) == [
        "(a * 1024 + b) // 128 * 2 + (a * 1024 + b) % 32 // 16",
        "(a * 1024 + b) % 128 // 32 * 16 + (a * 1024 + b) % 16",
    ]
    # a bound under which the division would need padding (12544 is no multiple of 1024)
    # is dropped, as TVM retries without the predicate
    bounded = im.simplify([floordiv(f, 1024)], {0: 13, 1: 1024}, [(f, 12544)])
    assert _texts(bounded, ["a", "b"]) == ["(a * 1024 + b) // 1024"]


def test_splits_of_one_loop_combine():
    g = add(mul(floordiv(v(0), 1024), 1024), floormod(v(0), 1024))
    out = im.simplify([floordiv(g, 512), floormod(g, 512)], {0: 262144})
    assert _texts(out, ["g"]) == ["g // 512", "g % 512"]


def test_a_scaled_sum_and_plain_forms():
    out = im.simplify([add(mul(v(0), 8), mul(v(1), 2))], {0: 8, 1: 4})
    assert _texts(out, ["i", "j"]) == ["(i * 4 + j) * 2"]
    out = im.simplify(
        [floordiv(v(0), 16), add(mul(floormod(v(0), 16), 32), v(1))], {0: 8192, 1: 32}
    )
    assert _texts(out, ["g", "j"]) == ["g // 16", "g % 16 * 32 + j"]


def test_unit_loops():
    s = add(mul(v(0), 1024), v(1))
    assert im.simplify([s], {0: 1, 1: 1024}, [(s, 1)]) == [s]  # TVM keeps the sum
    assert im.simplify([add(v(0), v(1))], {0: 1, 1: 1}, trivial=True) == [0]


def test_what_is_not_modelled_gives_none():
    assert im.simplify([floordiv(add(mul(v(0), 3), v(1)), 2)], {0: 5, 1: 3}) is None  # padding
    assert im.simplify([v(2)], {0: 4}) is None  # not a loop of constant extent
    # overlapping uses of one loop are no iter map (TVM keeps such bindings as they are)
    assert im.simplify([floordiv(mul(v(0), 8), 16), mul(v(0), 2048)], {0: 8}) is None


def test_trees_and_affine_forms():
    with get_context():
        t = floordiv(add(mul(v(0), 1024), v(1)), 512)
        e = im.to_affine(t)
        assert str(e) == "d0 * 2 + d1 floordiv 512"  # MLIR folds it
        assert im.same_value(t, e, {0: (0, 255), 1: (0, 1023)})
        assert not im.same_value(floordiv(v(1), 512), e, {0: (0, 255), 1: (0, 1023)})
        assert im.of_affine(e) == ("+", ("*", v(0), 2), ("//", v(1), 512))
        assert im.is_flat(im.of_affine(e)) and not im.is_flat(t)
        assert isinstance(e, ir.AffineExpr)


@pytest.mark.tvm
def test_agrees_with_tvm_on_random_bindings():
    """Random sums, divisions and bounds: where the port answers, TVM's
    arith.iter_map_simplify gives the same text."""
    tvm = pytest.importorskip("tvm")
    from tvm import arith, tir

    rng = random.Random(0)
    answered = 0
    for _ in range(200):
        nv = rng.randint(1, 4)
        ext = {k: rng.choice([1, 2, 4, 8, 13, 16, 32, 256, 1024]) for k in range(nv)}
        trees = [_random_tree(rng, nv, 0) for _ in range(rng.randint(1, 2))]
        bounds = [(_random_sum(rng, nv), rng.randint(1, 5000))] if rng.random() < 0.4 else []
        names = [f"x{k}" for k in range(nv)]
        vs = [tir.Var(n, "int32") for n in names]
        pred = tir.const(True)
        for t, upper in bounds:
            pred = _to_tvm(t, vs) < upper
        dom = {vs[k]: tvm.ir.Range(0, ext[k]) for k in range(nv)}
        ref = arith.iter_map_simplify(
            [_to_tvm(t, vs) for t in trees],
            dom,
            pred,
            check_level=arith.iter_affine_map.IterMapLevel.Surjective,
            simplify_trivial_iterators=False,
        )
        mine = im.simplify(trees, ext, bounds)
        if mine is not None:
            answered += 1
            assert _texts(mine, names) == [str(r) for r in ref], (trees, ext, bounds)
    assert answered > 25


def _random_sum(rng, nv):
    t = 0
    for k in rng.sample(range(nv), rng.randint(1, nv)):
        t = add(t, mul(v(k), rng.choice([1, 1, 2, 4, 8, 16, 32, 64, 128, 1024])))
    return t


def _random_tree(rng, nv, depth):
    if rng.random() < 0.3 or depth > 2:
        return _random_sum(rng, nv)
    inner = _random_tree(rng, nv, depth + 1)
    op = rng.choice(["//", "%", "*", "+"])
    if op == "+":
        return add(inner, _random_tree(rng, nv, depth + 1))
    c = rng.choice([2, 3, 4, 8, 16, 32, 64, 128, 512])
    return {"//": floordiv, "%": floormod, "*": mul}[op](inner, c)


def _to_tvm(t, vs):
    from tvm import tir

    if isinstance(t, int):
        return tir.IntImm("int32", t)
    if t[0] == "v":
        return vs[t[1]]
    a = _to_tvm(t[1], vs)
    if t[0] == "+":
        return a + _to_tvm(t[2], vs)
    return (
        a * t[2]
        if t[0] == "*"
        else tir.floordiv(a, t[2])
        if t[0] == "//"
        else tir.floormod(a, t[2])
    )
