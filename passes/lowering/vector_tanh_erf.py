"""Stage `vector-tanh-erf` (CPU): `math.tanh` and `math.erf` on f32 (vector or scalar) become
straight-line code of fma, select and an inline exp (vector_exp.exp_within) instead of a
`tanhf`/`erff` call per element, so a vectorized GELU stays vector code and a scalar loop of
them is one LLVM's vectorizer can take. Both branches of each formula are computed and one is
selected per lane.

    tanh(x) = x + x^3 Q(x^2)                      |x| < 0.625
            = sign(x) (1 - 2 / (exp(2 min(|x|, 10)) + 1))  otherwise (tanh(10) rounds to 1)
    erf(x)  = x + x S(x^2)                        |x| < 0.875
            = sign(x) (1 - exp(-t^2) G(t - 2.4375)),  t = min(|x|, 4)  (erf(4) rounds to 1)

Q, S and G are least-squares fits, reweighted toward minimax, on Chebyshev nodes (G:
erfc(t) exp(t^2), weighted by its share of erf): approximation errors 4.4e-9, 2.0e-10 (of
1 + S) and 6.4e-9 relative, under the rounding of f32 arithmetic. The small branches add a
correction to x (S is erf(x) / x - 1), so the polynomial's rounding counts at its share of the
result. The exp's argument is a number of a known range (a NaN is clamped too, then takes the
polynomial's side, whose result is NaN), so the exp needs no clamps and no NaN select of its
own. Measured against math.tanh/math.erf in double over a dense sweep
(tests/lowering/test_lowering_vector_tanh_erf.py): both within 1.5 ulp; 0 and -0, +-inf (+-1)
and NaN come out exactly. f64 keeps libm's calls (an expansion would still call libm's exp
once per element).
"""

from mlir import ir
from mlir.dialects import arith, math

from tir_mlir.passes.lowering.f32_expand import expand_f32, splat
from tir_mlir.passes.lowering.vector_exp import exp_within

# tanh(x) = x + x z Q(z), z = x^2 (Q highest degree last).
TANH_SMALL = 0.625
TANH_Q = (
    -0.3333328194018201,
    0.13331442157533469,
    -0.053739712156672705,
    0.02063907874099608,
    -0.005704978373884289,
)
TANH_CLAMP = 10.0
# erf(x) = x + x S(z), z = x^2.
ERF_SMALL = 0.875
ERF_S = (
    0.1283791668693741,
    -0.3761263606573365,
    0.11283733002431856,
    -0.02686158469075964,
    0.005206747395867912,
    -0.0008211103540919199,
    8.675389989973021e-05,
)
# erfc(t) exp(t^2) = G(t - ERF_MID) over [ERF_SMALL, ERF_CLAMP].
ERF_MID = 2.4375
ERF_G = (
    0.21555480690612425,
    -0.07755431545684052,
    0.02644363074575421,
    -0.008880635551892873,
    0.002473800300795461,
    -0.0006246909604103052,
    0.0008060798545112182,
    0.0003659386722293359,
    0.00014549879956686368,
)
ERF_CLAMP = 4.0


class VectorTanhErf:
    name = "vector-tanh-erf"

    def __call__(self, module: ir.Module):
        expand_f32(module, {"math.tanh": _tanh, "math.erf": _erf})


def _const(t, c: float):
    return splat(t, ir.FloatAttr.get_f32(c))


def _horner(v, coeffs):
    """coeffs[0] + v coeffs[1] + ... as a chain of fma."""
    p = _const(v.type, coeffs[-1])
    for c in reversed(coeffs[:-1]):
        p = math.fma(p, v, _const(v.type, c))
    return p


def _clamp(a, hi: float):
    """min(a, hi) of an a >= 0, and hi where a is NaN."""
    h = _const(a.type, hi)
    return arith.select(arith.cmpf(arith.CmpFPredicate.OLT, a, h), a, h)


def _below(a, bound: float):
    """a < bound, or a is NaN (which then takes the polynomial's side)."""
    return arith.cmpf(arith.CmpFPredicate.ULT, a, _const(a.type, bound))


def _tanh(x):
    t = x.type
    a = math.absf(x)
    z = arith.mulf(x, x)
    small = math.fma(arith.mulf(x, z), _horner(z, TANH_Q), x)
    e = exp_within(arith.mulf(_clamp(a, TANH_CLAMP), _const(t, 2.0)), 0.0, 2 * TANH_CLAMP)
    large = arith.subf(_const(t, 1.0), arith.divf(_const(t, 2.0), arith.addf(e, _const(t, 1.0))))
    # The sign goes on last: the polynomial makes tanh(-0) +0 (-0 * Q + -0).
    return math.copysign(arith.select(_below(a, TANH_SMALL), small, large), x)


def _erf(x):
    t = x.type
    a = math.absf(x)
    small = math.fma(x, _horner(arith.mulf(x, x), ERF_S), x)
    c = _clamp(a, ERF_CLAMP)
    g = _horner(arith.subf(c, _const(t, ERF_MID)), ERF_G)
    e = exp_within(arith.negf(arith.mulf(c, c)), -(ERF_CLAMP**2), 0.0)
    large = arith.subf(_const(t, 1.0), arith.mulf(e, g))
    return math.copysign(arith.select(_below(a, ERF_SMALL), small, large), x)
