"""Symbolic programs (tests/data/symbolic/) built once and checked at several sizes against numpy:
the symbolic build and specialize tests share them."""

import re
from pathlib import Path
import numpy as np
from tir_mlir.frontend.parser import build as build_ir
from tir_mlir.frontend.parser import parse_ast


SOURCE = Path(__file__).parent.parent / "data" / "symbolic" / "build_programs.py"


SIZES = (1, 3, 7, 13, 64)  # below every tile (4, 8), primes, a multiple of every tile


def _sources() -> dict:
    text = SOURCE.read_text().replace("from tvm.script import tir as T\n", "")
    return {
        re.search(r"def (\w+)", p)[1]: "@T.prim_func" + p for p in text.split("@T.prim_func")[1:]
    }


SOURCES = _sources()


def program(name):
    """The program as the tir dialect holds it (dynamic memrefs, index arguments)."""
    return build_ir(parse_ast(SOURCES[name], str(SOURCE)), str(SOURCE))


def _rand(rng, *shape):
    return rng.random(shape, dtype="float32")


def _softmax(a):
    e = np.exp(a - a.max())
    return e / e.sum()


# name -> (arguments at size n, expected output from the arguments, output position)
CASES = {
    "add": (
        lambda r, n: [_rand(r, n, 128), _rand(r, n, 128), np.zeros((n, 128), "float32")],
        lambda a: a[0] + a[1],
        2,
    ),
    "matmul": (
        lambda r, n: [_rand(r, n, 64), _rand(r, 64, 32), np.zeros((n, 32), "float32")],
        lambda a: a[0] @ a[1],
        2,
    ),
    "batch_matmul": (
        lambda r, n: [_rand(r, 2, n, 16), _rand(r, 2, 16, n), np.zeros((2, n, n), "float32")],
        lambda a: a[0] @ a[1],
        2,
    ),
    "row_sum": (
        lambda r, n: [_rand(r, n, n + 2), np.zeros(n, "float32")],
        lambda a: a[0].sum(1),
        1,
    ),
    "total": (lambda r, n: [_rand(r, n, 4), np.zeros(4, "float32")], lambda a: a[0].sum(0), 1),
    "softmax": (lambda r, n: [_rand(r, n), np.zeros(n, "float32")], lambda a: _softmax(a[0]), 1),
    "tiled": (lambda r, n: [_rand(r, n), np.zeros(n, "float32")], lambda a: a[0] * 3, 1),
    "halves": (
        lambda r, n: [_rand(r, n), np.zeros(n // 2, "float32")],
        lambda a: a[0][0 : len(a[0]) // 2 * 2 : 2] + a[0][1 : len(a[0]) // 2 * 2 : 2],
        1,
    ),
    "head": (
        lambda r, n: [_rand(r, n), np.zeros(min(n, 16), "float32")],
        lambda a: a[0][:16] + 1,
        1,
    ),
    "flat": (
        lambda r, n: [_rand(r, n, 3), np.zeros(n * 3 + 1, "float32")],
        lambda a: np.append(a[0].ravel(), -1),
        1,
    ),
    "reverse": (lambda r, n: [_rand(r, n), np.zeros(n, "float32")], lambda a: a[0][::-1], 1),
    "two_stage": (
        lambda r, n: [_rand(r, n, 16), np.zeros((n, 16), "float32")],
        lambda a: a[0] * 2 + 1,
        1,
    ),
    "conv2d": (
        lambda r, n: [_rand(r, n + 2, n + 5), _rand(r, 3, 3), np.zeros((n, n + 3), "float32")],
        lambda a: _conv(a[0], a[1]),
        2,
    ),
    "axpb": (
        lambda r, n: [_rand(r, n), np.zeros(n, "float32"), 1.5, n, -3],
        lambda a: a[0] * np.float32(1.5) - 3,
        1,
    ),
}


def _conv(a, w):
    h, wd = a.shape[0] - 2, a.shape[1] - 2
    return sum(a[y : y + h, x : x + wd] * w[y, x] for y in range(3) for x in range(3))


def _check_at_sizes(lib, name, sizes=SIZES, seed=0):
    make, expect, out = CASES[name]
    rng = np.random.default_rng(seed)
    for n in sizes:
        args = make(rng, n)
        lib[name](*args)
        np.testing.assert_allclose(
            args[out], expect(args), rtol=1e-5, atol=1e-5, err_msg=f"{name} at n = {n}"
        )
