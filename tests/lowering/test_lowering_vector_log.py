"""f32 log and log1p are inline code (passes/lowering/vector_log.py), not a `logf` call per
element: their numbers against math.log/math.log1p in double."""

import math

import numpy as np
import pytest

import tir_mlir
from tir_mlir import Schedule
from tir_mlir.passes.lowering.pipeline import emit_text
from workloads import unary

SPECIALS = [
    0.0,
    -0.0,
    1e-45,
    1e-40,
    1.17549435e-38,
    1.0,
    np.inf,
    -np.inf,
    3.4e38,
    np.nan,
    -1e-30,
    -1e-8,
    -0.5,
    -0.99999994,
    -1.0,
    -2.0,
    0.99999994,
    1.0000001,
]
# (function, reference in double, max error in f32 ulps of the correctly rounded result)
CASES = [("log", math.log, 1.0), ("log1p", math.log1p, 1.5)]


def _reference(fn, ref, v):
    if math.isnan(v):
        return math.nan
    try:
        return ref(v)
    except ValueError:  # log(+-0), log1p(-1): -inf; below the domain: NaN
        return -math.inf if v == (0.0 if fn == "log" else -1.0) else math.nan


def _inputs():
    rng = np.random.default_rng(0)
    pos = np.concatenate(
        [
            np.exp(rng.uniform(-103, 88.7, 40000)),
            np.linspace(0, 4, 20000),
            1 + np.linspace(-1e-3, 1e-3, 4000),
        ]
    )
    return np.concatenate([pos, -pos, SPECIALS]).astype(np.float32)


@pytest.mark.parametrize("vectorized", [True, False])
@pytest.mark.parametrize("fn, ref, max_ulp", CASES, ids=[c[0] for c in CASES])
def test_log_is_inline_and_within_an_ulp_or_so(fn, ref, max_ulp, vectorized):
    a = _inputs()
    sch = Schedule(tir_mlir.parse(unary(fn, len(a))))
    (i,) = sch.get_loops(sch.get_block("B"))
    if vectorized:
        sch.vectorize(sch.split(i, factors=[None, 16])[1])
    assert f"math.{fn} " not in emit_text(sch.mod.module, "scf")
    assert "logf" not in emit_text(sch.mod.module, "asm")
    b = np.zeros_like(a)
    tir_mlir.build(sch.mod)["main"](a, b)
    want = np.array([_reference(fn, ref, float(v)) for v in a])
    np.testing.assert_array_equal(np.isnan(b), np.isnan(want))
    rounded = want.astype(np.float32)
    exact = np.isinf(want) | (rounded == 0)  # -inf, inf, 0, -0
    np.testing.assert_array_equal(b[exact], rounded[exact])
    number = ~np.isnan(want)
    np.testing.assert_array_equal(np.signbit(b[number]), np.signbit(rounded[number]))
    rest = number & ~exact
    ulp = np.spacing(np.nextafter(np.abs(rounded[rest]), np.float32(0))).astype(np.float64)
    ulps = np.abs(b[rest] - want[rest]) / ulp
    assert ulps.max() <= max_ulp, (ulps.max(), a[rest][ulps.argmax()])
