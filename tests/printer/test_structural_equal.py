"""structural_equal / assert_structural_equal: equal up to renaming, and the first difference."""

from pathlib import Path

import pytest
from mlir import ir

from tir_mlir.context import get_context
from tir_mlir.module import IRModule
from tir_mlir.printer.equality import assert_structural_equal, structural_equal

MM = (Path(__file__).parent.parent / "data" / "printer" / "mm_relu.mlir").read_text()


def mod(text) -> IRModule:
    with get_context():
        return IRModule(ir.Module.parse(text))


def variant(*pairs) -> IRModule:
    text = MM
    for old, new in pairs:
        assert old in text, old
        text = text.replace(old, new, 1)
    return mod(text)


def test_renamed_loops_iter_vars_and_buffers_are_equal():
    other = variant(
        ('{tir.name = "k"', '{tir.name = "kk"'),
        ('"vk"]', '"r"]'),
        ('tir.name = "Y"', 'tir.name = "Z"'),
        ('tir.name = "A"', 'tir.name = "X"'),
    )
    assert structural_equal(mod(MM), other)
    assert_structural_equal(mod(MM), other)


def test_binding_operand_order_does_not_matter():
    # (i, j) with (d0, d1) is the same binding as (j, i) with (d1, d0).
    other = variant(
        ('"tir.block"(%i, %j) ({', '"tir.block"(%j, %i) ({'),
        ("affine_map<(d0, d1) -> (d0, d1)>", "affine_map<(d0, d1) -> (d1, d0)>"),
    )
    assert structural_equal(mod(MM), other)


@pytest.mark.parametrize(
    "pairs, where",
    [
        ([("affine.for %k = 0 to 128", "affine.for %k = 0 to 64")], "extent differs: 128 != 64"),
        (
            [
                ('memref<128x128xf32> {tir.name = "C"}', 'memref<128x128xf16> {tir.name = "C"}'),
                (
                    "memref.store %1, %C[%vi, %vj] : memref<128x128xf32>",
                    "%h = arith.truncf %1 : f32 to f16\n memref.store %h, %C[%vi, %vj] : memref<128x128xf16>",
                ),
            ],
            "params differs",
        ),
        (
            [("affine_map<(d0, d1) -> (d0, d1)>", "affine_map<(d0, d1) -> (d1, d0)>")],
            "bindings differs: ('%13', '%14') != ('%14', '%13')",
        ),
        (
            [('{tir.name = "j"}', '{tir.name = "j", tir.kind = #tir.for_kind<"parallel">}')],
            "kind differs: 'serial' != 'parallel'",
        ),
        (
            [
                (
                    "%c0 = arith.constant 0.0 : f32\n            %1",
                    "%c0 = arith.constant 1.0 : f32\n            %1",
                )
            ],
            "'0.000000e+00 : f32' != '1.000000e+00 : f32'",
        ),
        ([('{name = "C"', '{name = "D"')], 'block "C" != block "D"'),
        (
            [
                (
                    "}, {\n          ^bb0(%vi: index, %vj: index, %vk: index):\n"
                    "            %c0 = arith.constant 0.0 : f32\n"
                    "            memref.store %c0, %Y[%vi, %vj] : memref<128x128xf32>\n"
                    "            gpu.yield\n          })",
                    "}, {\n          })",
                )
            ],
            "has_init differs: True != False",
        ),
    ],
)
def test_differences_are_found_and_located(pairs, where):
    other = variant(*pairs)
    assert not structural_equal(mod(MM), other)
    with pytest.raises(AssertionError) as e:
        assert_structural_equal(mod(MM), other)
    assert where in str(e.value)
    assert str(e.value).startswith("modules differ at func @mm_relu")


def test_function_names_must_match():
    other = variant(("func.func @mm_relu", "func.func @mm"))
    with pytest.raises(AssertionError, match=r"functions \['mm_relu'\] != \['mm'\]"):
        assert_structural_equal(mod(MM), other)


PARSER_CASES = [
    # T.Buffer[...] (old) vs T.Buffer(...) spelling; remap vs one axis.spatial per iter var.
    ("tests/data/mm_relu.tir", "tests/data/programs/mm_relu.tir"),
]


@pytest.mark.parametrize("a, b", PARSER_CASES)
def test_equivalent_spellings_parse_equal(a, b):
    parser = pytest.importorskip("tir_mlir.frontend.parser")
    root = Path(__file__).parent.parent.parent
    assert_structural_equal(
        parser.parse((root / a).read_text()), parser.parse((root / b).read_text())
    )


SYMBOLIC = """@T.prim_func
def f(a: T.handle, b: T.handle):
    n = T.int32()
    A = T.match_buffer(a, (n,))
    B = T.match_buffer(b, (n,))
    for i in range(EXTENT):
        with T.block("B"):
            vi = T.axis.spatial(DOMAIN, i)
            T.where(i < n)
            B[vi] = A[vi]
"""


def _symbolic(extent="n", domain="n"):
    import tir_mlir

    return tir_mlir.parse(SYMBOLIC.replace("EXTENT", extent).replace("DOMAIN", domain))


def test_symbolic_sizes_compare_by_expression_not_by_value():
    """Two parses hold different SSA values for `n`: loops, domains and T.where over it compare
    through the canonical numbering, as buffers and loop vars do."""
    assert structural_equal(_symbolic(), _symbolic())
    assert not structural_equal(_symbolic(), _symbolic(extent="n + 1"))
    assert not structural_equal(_symbolic(), _symbolic(domain="n + 1"))


def test_loops_bounded_by_outer_loops_compare():
    tri = """@T.prim_func
def f(A: T.Buffer((8, 8), "float32")):
    for i in range(8):
        for j in range(UPPER):
            with T.block("A"):
                vi = T.axis.spatial(8, i)
                vj = T.axis.spatial(8, j)
                A[vi, vj] = T.float32(0)
"""
    import tir_mlir

    a, b = (tir_mlir.parse(tri.replace("UPPER", u)) for u in ("i + 1", "i + 1"))
    assert structural_equal(a, b)
    assert not structural_equal(a, tir_mlir.parse(tri.replace("UPPER", "i")))
