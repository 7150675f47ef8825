"""The one linear-form analysis (tir_mlir/analysis/linear.py): affine expressions and SSA index
values as sum(coefficient * atom) + constant, what is linear and what is the caller's."""

from mlir import ir
from mlir.dialects import arith, func

from tir_mlir.analysis.linear import Linear, linear, value_linear
from tir_mlir.context import get_context

D = ir.AffineExpr.get_dim
C = ir.AffineExpr.get_constant


def test_forms_merge_terms_and_drop_zero_coefficients():
    with get_context():
        d0, d1 = D(0), D(1)
        assert linear(d0 * 4 + d1 + C(3) + d0 * 2) == Linear({0: 6, 1: 1}, 3)
        assert linear(d0 + d1 - d0) == Linear({1: 1})
        assert linear(d0 * 0 + C(5)).is_const
        terms, const = linear(d1 * 3 - C(2))  # unpacks as (terms, const)
        assert (terms, const) == ({1: 3}, -2)


def test_what_is_not_linear():
    with get_context():
        d0, d1 = D(0), D(1)
        assert linear(d0 * d1) is None
        assert linear(ir.AffineExpr.get_floor_div(d0, C(4))) is None
        assert linear(d0 % 4 + d1) is None
        assert linear(ir.AffineSymbolExpr.get(0) + d0) is None


def test_dims_symbols_and_division_rule():
    with get_context():
        d0, d1, s0 = D(0), D(1), ir.AffineSymbolExpr.get(0)
        dims = [Linear({"i": 2}, 1), Linear({"j": 1})]
        assert linear(d0 * 3 + d1, dims) == Linear({"i": 6, "j": 1}, 3)
        assert linear(d0 + s0, dims, [Linear((), 10)]) == Linear({"i": 2}, 11)

        def division(kind, lhs, rhs):  # exact divisions only
            if (
                kind is ir.AffineFloorDivExpr
                and rhs.is_const
                and all(c % rhs.const == 0 for c in lhs.terms.values())
                and lhs.const % rhs.const == 0
            ):
                return Linear(
                    {a: c // rhs.const for a, c in lhs.terms.items()}, lhs.const // rhs.const
                )
            return None

        assert linear(
            ir.AffineExpr.get_floor_div(d0 * 8 + C(4), C(4)), division=division
        ) == Linear({0: 2}, 1)
        assert linear(ir.AffineExpr.get_floor_div(d0 * 2, C(4)), division=division) is None


def test_a_subclass_stays_itself_under_arithmetic():
    class Lanes(Linear):
        __slots__ = ()

    x = Lanes({"lane": 1}) + Linear({"v": 2}, 1)
    assert type(x) is Lanes and type(x.scale(3)) is Lanes and x == Linear({"lane": 1, "v": 2}, 1)


def test_value_forms_over_arith_with_caller_leaves():
    with get_context(), ir.Location.unknown():
        module = ir.Module.create()
        index = ir.IndexType.get()
        with ir.InsertionPoint(module.body):
            f = func.FuncOp("f", ([index, index], []))
            with ir.InsertionPoint(f.add_entry_block()):
                i, j = f.arguments
                c4, c3 = arith.constant(index, 4), arith.constant(index, 3)
                x = arith.addi(arith.muli(i, c4), arith.subi(j, c3))  # 4i + j - 3
                prod = arith.muli(i, j)  # not linear
                y = arith.addi(prod, c3)
                func.ReturnOp([])
        leaf_calls = []

        def leaf(v):
            leaf_calls.append(v)
            return Linear({"i" if v == i else "j": 1}) if isinstance(v.owner, ir.Block) else None

        cache = {}
        assert value_linear(x, leaf, cache) == Linear({"i": 4, "j": 1}, -3)
        assert value_linear(x, leaf, cache) == Linear({"i": 4, "j": 1}, -3)
        assert len(leaf_calls) == 2  # the second ask is the cache's
        assert value_linear(y, leaf) is None  # the product is the leaf's
        assert value_linear(y, lambda v: Linear({"p": 1}) if v == prod else leaf(v)) == Linear(
            {"p": 1}, 3
        )
