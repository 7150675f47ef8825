"""tir_mlir.analysis.symbolic: integer expressions over a function's symbols."""

import pytest
from mlir import ir

from tir_mlir.analysis.symbolic import SymExpr, as_int, ceildiv, divisible


@pytest.fixture
def syms():
    with ir.Context(), ir.Location.unknown():
        m = ir.Module.parse("func.func @f(%n: index, %m: index) { return }")
        n, mv = m.body.operations[0].regions[0].blocks[0].arguments
        yield n, mv, SymExpr.symbol(n), SymExpr.symbol(mv)


def test_arithmetic_folds_to_ints(syms):
    _, _, n, m = syms
    assert n - n == 0 and isinstance(n - n, int)
    assert as_int(n + m - n - m + 5) == 5
    assert (4 * n + 3) // 4 == n
    assert (n * 8) % 4 == 0


def test_maps_and_unused_symbols_dropped(syms):
    nv, mv, n, m = syms
    amap, ops = ceildiv(n, 4).to_map()
    assert str(amap) == "()[s0] -> (s0 ceildiv 4)" and ops == [nv]
    amap, ops = (n * m + 1).to_map()
    assert str(amap) == "()[s0, s1] -> (s0 * s1 + 1)" and ops == [nv, mv]
    e = n + m - n
    assert e.symbols == (mv,) and str(e.to_map()[0]) == "()[s0] -> (s0)"
    assert SymExpr.from_map(amap, ops)[0] == n * m + 1


def test_equality_and_hash(syms):
    _, _, n, m = syms
    assert 4 * n + 3 == n * 4 + 3
    assert n != m and n + 1 != n
    assert {2 * n: "x"}[n * 2] == "x"


def test_divisible_with_facts(syms):
    nv, _, n, m = syms
    assert divisible(8 * n, 4)
    assert not divisible(n, 4)
    assert divisible(n, 4, [(nv, 8)])
    assert not divisible(n + m, 4, [(nv, 8)])
    assert divisible(12, 4) and not divisible(13, 4)


def test_range_facts():
    from tir_mlir.analysis.symbolic import bounds, prove_le, show, smin, tile_count

    with ir.Context(), ir.Location.unknown():
        m = ir.Module.parse(
            'func.func @f(%n: index {tir.name = "n"}) {\n'
            "  %c = arith.constant 64 : index\n"
            "  %e = arith.minsi %n, %c : index\n  return\n}"
        )
        body = m.body.operations[0].regions[0].blocks[0]
        n, e = SymExpr.symbol(body.arguments[0]), SymExpr.symbol(list(body.operations)[1].result)
        assert bounds(n - 1) == (-1, None) and bounds(ceildiv(n, 4)) == (0, None)
        assert prove_le(n - 1, n) and not prove_le(n, n - 1)
        assert bounds((n // 4) * 4 - n) == (-3, 0)  # -(n % 4)
        assert prove_le(e, n) and prove_le(e, 64) and not prove_le(e, 63)
        assert smin(n, n + 3) == n and smin(n, e) == e
        assert show(tile_count(n, 4)) == "(n + 3) // 4"
        assert show(tile_count(n // 4, 4)) == "(n + 12) // 16"
