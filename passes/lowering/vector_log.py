"""Stage `vector-log` (CPU): `math.log` and `math.log1p` on f32 (vector or scalar) become
straight-line code instead of a `logf` call per element, so a vectorized loop of them stays
vector code and a scalar one is a loop LLVM's vectorizer can take.

    log(x) = e ln(2) + log1p(f),  x = 2^e (1 + f),  1 + f in [sqrt(1/2), sqrt(2))
    log1p(f) = f - f^2 / 2 + f^3 R(f)

e and 1 + f come from the exponent and mantissa fields (a subnormal x is scaled by 2^23
first); ln(2) is applied in two parts, the first exact in e * ln2_hi. R is a least-squares
fit, reweighted toward minimax, on Chebyshev nodes (approximation error 7.5e-10 relative).
log1p(x) is log(u) + (x - (u - 1)) / u with u = 1 + x rounded, the correction restoring what
the rounding of u lost (x where u == 1). Measured against math.log/math.log1p in double over a
dense sweep (tests/lowering/test_lowering_vector_log.py): within 1 ulp (log) and 1.5 ulp (log1p);
log(+-0) = -inf, log(inf) = inf, log(x < 0) and NaN are NaN, log1p(-1) = -inf, log1p(-0) = -0.
f64 keeps libm's calls.
"""

from mlir import ir
from mlir.dialects import arith, math

from tir_mlir.passes.lowering.f32_expand import expand_f32, splat

LN2_HI, LN2_LO = 0.693359375, -2.12194440e-4
SQRT2 = 1.41421356237
# (log1p(f) - f + f^2 / 2) / f^3 over f in [sqrt(1/2) - 1, sqrt(2) - 1], lowest degree first.
R = (
    0.33333312602802867,
    -0.25000009603654083,
    0.20002118732202354,
    -0.16667995667106947,
    0.1421955090824238,
    -0.12405591416931244,
    0.11888174598133054,
    -0.11675641304405539,
    0.06746601329298117,
)
MIN_NORMAL = 1.17549435e-38


class VectorLog:
    name = "vector-log"

    def __call__(self, module: ir.Module):
        expand_f32(module, {"math.log": _log, "math.log1p": _log1p})


def _f(t, c: float):
    return splat(t, ir.FloatAttr.get_f32(c))


def _int_type(t):
    i32 = ir.IntegerType.get_signless(32)
    return ir.VectorType.get(ir.VectorType(t).shape, i32) if isinstance(t, ir.VectorType) else i32


def _i(t, c: int):
    return splat(t, ir.IntegerAttr.get(ir.IntegerType.get_signless(32), c))


def _cmp(pred, a, b):
    return arith.cmpf(pred, a, b)


def _log(x):
    t, it = x.type, _int_type(x.type)
    P = arith.CmpFPredicate
    subnormal = _cmp(P.OLT, x, _f(t, MIN_NORMAL))
    xs = arith.select(subnormal, arith.mulf(x, _f(t, 8388608.0)), x)
    bits = arith.bitcast(it, xs)
    e = arith.subi(arith.shrui(bits, _i(it, 23)), _i(it, 127))
    m = arith.bitcast(t, arith.ori(arith.andi(bits, _i(it, 0x007FFFFF)), _i(it, 0x3F800000)))
    big = _cmp(P.OGT, m, _f(t, SQRT2))
    m = arith.select(big, arith.mulf(m, _f(t, 0.5)), m)
    e = arith.addi(e, arith.select(big, _i(it, 1), _i(it, 0)))
    ef = arith.addf(arith.sitofp(t, e), arith.select(subnormal, _f(t, -23.0), _f(t, 0.0)))
    f = arith.subf(m, _f(t, 1.0))  # exact
    f2 = arith.mulf(f, f)
    p = _f(t, R[-1])
    for c in reversed(R[:-1]):
        p = math.fma(p, f, _f(t, c))
    r = math.fma(arith.mulf(f2, f), p, arith.mulf(f2, _f(t, -0.5)))
    y = arith.addf(math.fma(ef, _f(t, LN2_LO), r), f)
    y = math.fma(ef, _f(t, LN2_HI), y)
    inf = float("inf")
    y = arith.select(_cmp(P.OEQ, x, _f(t, inf)), x, y)
    y = arith.select(_cmp(P.OLT, x, _f(t, 0.0)), _f(t, float("nan")), y)
    y = arith.select(_cmp(P.OEQ, x, _f(t, 0.0)), _f(t, -inf), y)
    return arith.select(_cmp(P.UNO, x, x), x, y)


def _log1p(x):
    t = x.type
    P = arith.CmpFPredicate
    u = arith.addf(x, _f(t, 1.0))
    lu = _log(u)
    correction = arith.divf(arith.subf(x, arith.subf(u, _f(t, 1.0))), u)
    edge = arith.ori(_cmp(P.OEQ, u, _f(t, 0.0)), _cmp(P.OEQ, u, _f(t, float("inf"))))
    y = arith.select(edge, lu, arith.addf(lu, correction))
    return arith.select(_cmp(P.OEQ, u, _f(t, 1.0)), x, y)
