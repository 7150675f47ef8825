"""Range-aware index simplification (tir_mlir/analysis/index.py)."""

from mlir import ir

from tir_mlir.context import get_context
from tir_mlir.analysis import index


def simp(text, ranges):
    """Simplify an affine expression given as `affine_map<(d0, d1, d2) -> (...)>` text."""
    with get_context():
        m = ir.AffineMapAttr(ir.Attribute.parse(f"affine_map<(d0, d1, d2) -> ({text})>")).value
        return str(index.simplify(m.results[0], ranges))


R = {0: (0, 31), 1: (0, 3), 2: (0, 16383)}


def test_floordiv_of_split_drops_inner():
    assert simp("(d0 * 4 + d1) floordiv 4", R) == "d0"


def test_mod_of_split_keeps_inner():
    assert simp("(d0 * 4 + d1) mod 4", R) == "d1"


def test_div_mod_recombine():
    assert simp("(d2 floordiv 128) * 128 + d2 mod 128", R) == "d2"


def test_nested_floordiv():
    assert simp("(d2 floordiv 4) floordiv 32", R) == "d2 floordiv 128"


def test_no_range_no_change():
    assert (
        simp("(d2 * 1366 + d0) floordiv 32", {2: (0, 2), 0: (0, 1365)})
        == "(d2 * 1366 + d0) floordiv 32"
    )


def test_small_range_is_constant():
    assert simp("d1 floordiv 4", R) == "0"
    assert simp("d1 mod 4", R) == "d1"


def test_lin_roundtrip_with_constant():
    with get_context():
        e = index.var(0).scale(4) + index.var(1) + index.const(3)
        assert str(index.to_affine(e)) == "d0 * 4 + d1 + 3"
