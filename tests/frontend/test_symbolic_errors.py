"""Symbolic programs the frontend refuses: a located error saying what is expected."""

import pytest

import tir_mlir
from tir_mlir.frontend.mlir_input import parse_mlir

HEAD = "@T.prim_func\ndef f(a: T.handle):\n    n = T.int32()\n    A = T.match_buffer(a, (n,))\n"


@pytest.mark.parametrize(
    "body,where,message",
    [
        (
            "    for i in range(n):\n        for j in range(n * i):\n            A[j] = T.float32(1)\n",
            (6, 24),
            (
                "a loop bound must be a constant or affine in enclosing loop variables: product "
                "of two variables is not affine"
            ),
        ),
        (
            (
                "    for i in range(n):\n        with T.block('A'):\n            vi = T.axis.spatial(n, i)\n"
                "            T.assume(vi < 4)\n            A[vi] = T.float32(1)\n"
            ),
            (8, 13),
            "T.assume must be at the top level of the function body",
        ),
        (
            "    T.assume(n * n > 4)\n",
            (5, 14),
            (
                "T.assume needs comparisons of affine expressions of "
                "the function's symbolic vars joined by 'and'"
            ),
        ),
        ("    n = T.int32()\n", (5, 5), "symbolic var 'n' is declared twice"),
        ("    B = T.alloc_buffer((n - n,))\n", (5, 5), "B: buffer has a zero-sized dimension"),
    ],
)
def test_located_errors(body, where, message):
    with pytest.raises(tir_mlir.TIRParseError) as e:
        tir_mlir.parse(HEAD + body, "f.tir")
    assert (e.value.loc.line, e.value.loc.col) == where
    assert e.value.message.startswith(message), e.value.message


def test_a_float_scalar_is_no_size():
    src = (
        "@T.prim_func\ndef f(a: T.handle, x: T.float32):\n    A = T.match_buffer(a, (x,))\n"
        "    A[0] = T.float32(1)\n"
    )
    with pytest.raises(
        tir_mlir.TIRParseError, match="f.tir:3:28: a buffer dimension must be a constant, found 'x'"
    ):
        tir_mlir.parse(src, "f.tir")


def test_a_buffer_parameter_of_symbolic_shape_prints_as_tvm_does():
    """`A: T.Buffer((n, 128))` (n declared in the body, as TVMScript in Python allows): TVM
    prints such a parameter as a handle `A_handle` and its T.match_buffer."""
    src = (
        '@T.prim_func\ndef f(A: T.Buffer((n, 128), "float32")):\n    n = T.int32()\n'
        "    for i, j in T.grid(n, 128):\n        with T.block('A'):\n"
        "            vi, vj = T.axis.remap('SS', [i, j])\n            A[vi, vj] = T.float32(1)\n"
    )
    text = tir_mlir.parse(src, "f.tir").script()
    assert (
        "def f(A_handle: T.handle):\n    n = T.int32()\n    A = T.match_buffer(A_handle, "
        "(n, 128))\n" in text
    )
    assert tir_mlir.parse(text).script() == text


def test_an_implicit_var_no_shape_binds_is_refused():
    """TVM refuses it too ('undefined variable n'): no call could give its value."""
    src = (
        '@T.prim_func\ndef f(A: T.Buffer((128,), "float32")):\n    n = T.int32()\n'
        "    for i in range(T.min(n, 128)):\n        with T.block('A'):\n"
        "            vi = T.axis.spatial(128, i)\n            A[vi] = T.float32(1)\n"
    )
    with pytest.raises(
        tir_mlir.TIRParseError,
        match="f.tir:3:5: symbolic var 'n' is in no buffer shape of the function",
    ):
        tir_mlir.parse(src, "f.tir")
    mlir = tir_mlir.parse(
        src.replace("T.min(n, 128)", "128").replace("    n = T.int32()\n", "")
    ).mlir()
    mlir = mlir.replace(
        ") attributes {tir.prim_func",
        ', %n: index {tir.implicit, tir.name = "n"}) attributes {tir.prim_func',
    )
    with pytest.raises(tir_mlir.TIRParseError, match="an implicit var .* must be a size"):
        parse_mlir(mlir, "f.mlir")
