"""f32 tanh and erf are inline code (passes/lowering/vector_tanh_erf.py), not a libm call per
element: their numbers against math.tanh/math.erf in double, and a vectorized GELU."""

import math

import numpy as np
import pytest

import tir_mlir
from tir_mlir import Schedule
from tir_mlir.passes.lowering.pipeline import emit_text
from workloads import unary

from schedule_everyday import bias_activation


SPECIALS = [
    np.nan,
    np.inf,
    -np.inf,
    0.0,
    -0.0,
    1e-45,
    -1e-45,
    1e-30,
    1e-8,
    0.625,
    0.875,
    np.nextafter(np.float32(0.625), np.float32(0)),
    np.nextafter(np.float32(0.875), np.float32(0)),
    3.9,
    3.92,
    4.0,
    9.0,
    9.02,
    10.0,
    88.0,
    1e30,
    3.4e38,
]
# (function, reference in double, max error in f32 ulps (of the correctly rounded result,
# the smaller ulp at a power of 2), |x| from which the result is exactly +-1)
CASES = [("tanh", math.tanh, 1.5, 10.0), ("erf", math.erf, 1.5, 4.0)]


def _inputs():
    rng = np.random.default_rng(0)
    pos = np.concatenate(
        [np.linspace(0, 12, 60000), np.exp(rng.uniform(-100, 5, 20000)), np.float32(SPECIALS)]
    )
    return np.concatenate([pos, -pos]).astype(np.float32)


@pytest.mark.parametrize("vectorized", [True, False])
@pytest.mark.parametrize("fn, ref, max_ulp, saturated", CASES, ids=[c[0] for c in CASES])
def test_tanh_erf_are_inline_and_within_a_few_ulp(fn, ref, max_ulp, saturated, vectorized):
    a = _inputs()
    sch = Schedule(tir_mlir.parse(unary(fn, len(a))))
    (i,) = sch.get_loops(sch.get_block("B"))
    if vectorized:
        sch.vectorize(sch.split(i, factors=[None, 16])[1])
    assert f"math.{fn}" not in emit_text(sch.mod.module, "scf")
    b = np.zeros_like(a)
    tir_mlir.build(sch.mod)["main"](a, b)
    want = np.array([math.nan if math.isnan(v) else ref(float(v)) for v in a])
    np.testing.assert_array_equal(np.isnan(b), np.isnan(want))
    rounded = want.astype(np.float32)
    exact = (rounded == 0) | (np.abs(a) >= saturated)  # 0, -0 and tiny; large and +-inf
    np.testing.assert_array_equal(b[exact], rounded[exact])
    number = ~np.isnan(want)
    np.testing.assert_array_equal(np.signbit(b[number]), np.signbit(rounded[number]))
    rest = number & ~exact
    ulp = np.spacing(np.nextafter(np.abs(rounded[rest]), np.float32(0))).astype(np.float64)
    ulps = np.abs(b[rest] - want[rest]) / ulp
    assert ulps.max() <= max_ulp, (ulps.max(), a[rest][ulps.argmax()])


@pytest.mark.parametrize("act", ["gelu_erf", "gelu_tanh"])
def test_vectorized_gelu_calls_no_libm_and_matches_numpy(act):
    """The bias block inlined into the activation, the inner loop vectorized, the outer
    parallel: one vector loop with no `erff`/`tanhf` call left in it."""
    n, m = 64, 256
    sch = Schedule(tir_mlir.parse(bias_activation(n, m, act)))
    sch.compute_inline(sch.get_block("bias"))
    i, j = sch.get_loops(sch.get_block("act"))
    _, ji = sch.split(j, factors=[None, 16])
    sch.vectorize(ji)
    sch.parallel(i)
    ll = emit_text(sch.mod.module, "llvm-ir")
    assert not [
        line
        for line in ll.splitlines()
        if "call" in line and any(f in line for f in ("tanh", "erf"))
    ]
    rng = np.random.default_rng(1)
    a = (rng.standard_normal((n, m)) * 3).astype(np.float32)
    bias = rng.standard_normal(m).astype(np.float32)
    b = np.zeros_like(a)
    tir_mlir.build(sch.mod)["main"](a, bias, b)
    x = (a + bias).astype(np.float64)
    if act == "gelu_erf":
        want = x * 0.5 * (1 + np.vectorize(math.erf)(x * 0.70710678))
    else:
        want = x * 0.5 * (1 + np.tanh(0.7978846 * (x + 0.044715 * x**3)))
    np.testing.assert_allclose(b, want, rtol=2e-6, atol=1e-6)


@pytest.mark.parametrize("fn, ref", [("erf", math.erf), ("tanh", math.tanh)])
def test_vectorized_f64_keeps_libm_per_lane(fn, ref):
    """f64 is left to libm: one call per lane of the vector (this build used to fail in the
    translation to LLVM IR, on the vector.extract those calls are fed by)."""
    text = unary(fn, 64, "float64")
    sch = Schedule(tir_mlir.parse(text))
    (i,) = sch.get_loops(sch.get_block("B"))
    sch.vectorize(sch.split(i, factors=[None, 8])[1])
    a = np.linspace(-5, 5, 64)
    b = np.zeros_like(a)
    tir_mlir.build(sch.mod)["main"](a, b)
    np.testing.assert_allclose(b, [ref(v) for v in a], rtol=1e-15, atol=1e-16)
