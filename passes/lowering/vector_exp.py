"""Stage `vector-exp` (CPU): `math.exp` on f32 (vector or scalar) becomes straight-line code
(range reduction + a degree-7 polynomial, within 2 ulp of libm on normal results) instead of an
`expf` call per element. With the calls, a vectorized softmax spent most of its time spilling
vector registers around 16 calls per vector; a scalar loop of calls is one LLVM's vectorizer
cannot touch (the unscheduled softmax: TVM inlines its exp and vectorizes that loop).

    exp(x) = 2^n * p(r),  n = round(x * log2(e)),  r = x - n * ln(2)  (ln 2 in two parts)

n is rounded by adding 1.5 * 2^23 (one fma: x * log2(e) + 1.5 * 2^23), whose float has a unit
in the last place of 1, so the sum's low mantissa bits are n itself; subtracting the constant
again gives n as a float. No round instruction and no float-to-int conversion (each two
micro-ops on x86, on the FP ports the polynomial needs): where LLVM cannot vectorize the exp
(a sigmoid per element of a scalar loop), they were a fifth of its FP-port work. The sum's bits
shifted left by 23 are n's exponent field (the constant's bits shift out).

2^n is applied as two exponent-field scalings 2^h * 2^(n - h), h = n >> 1, each a normal float,
so results overflow to inf and underflow to 0 (subnormal results flush to 0) the way the
multiplication does. A NaN is selected back at the end: the polynomial would carry it too, but
without that select LLVM's vectorizer left a lane permutation between the clamps of a softmax's
row sums, so the second clamp was no longer one min instruction.

`exp_within(x, lo, hi)` is the same code for an expansion that knows its argument is a number
in [lo, hi] (tanh's and erf's: vector_tanh_erf.py): no clamps, no NaN select, and one scaling
where every 2^n of the range is a normal float.
"""

import math as pymath

from mlir import ir
from mlir.dialects import arith, math

from tir_mlir.passes.lowering.f32_expand import expand_f32, splat

LOG2E = 1.44269504088896341
LN2_HI, LN2_LO = 0.693359375, -2.12194440e-4
# exp(r) - 1 - r over |r| <= ln(2)/2, divided by r^2 (Horner, highest degree first).
POLY = (
    1.9875691500e-4,
    1.3981999507e-3,
    8.3334519073e-3,
    4.1665795894e-2,
    1.6666665459e-1,
    5.0000001201e-1,
)
# Inputs are clamped so that n fits two exponent-field halves; beyond, exp is inf or 0 anyway.
LO, HI = -104.0, 89.0
# Exponents n of 2^n that one exponent-field scaling writes as a normal float.
MIN_EXPONENT, MAX_EXPONENT = -126, 127
# x * log2(e) + ROUNDER is 1.5 * 2^23 + round(x * log2(e)) for |x * log2(e)| < 2^22: floats of
# [2^23, 2^24) are the integers, and the sum's low 22 mantissa bits are n + 2^22.
ROUNDER = 12582912.0
ROUNDER_BITS = 0x4B400000


class VectorExp:
    name = "vector-exp"

    def __call__(self, module: ir.Module):
        expand_f32(module, {"math.exp": _exp})


def _exp(x):
    def clamp(v, lo, hi):  # compares: a NaN stays NaN
        v = arith.select(arith.cmpf(arith.CmpFPredicate.OLT, v, _f(v, lo)), _f(v, lo), v)
        return arith.select(arith.cmpf(arith.CmpFPredicate.OGT, v, _f(v, hi)), _f(v, hi), v)

    y = _reduced_exp(clamp(x, LO, HI), one_scaling=False)
    is_nan = arith.cmpf(arith.CmpFPredicate.UNO, x, x)
    return arith.select(is_nan, x, y)


def exp_within(x: ir.Value, lo: float, hi: float) -> ir.Value:
    """exp(x) of an f32 `x` (scalar or vector) the caller knows is a number in [lo, hi]: the
    range reduction and polynomial alone, 2^n applied in one step (a NaN or an x outside the
    range gives an unspecified result)."""
    n_lo, n_hi = (_pow2_exponent(v) for v in (lo, hi))
    if not (lo <= hi and MIN_EXPONENT <= n_lo and n_hi <= MAX_EXPONENT):
        raise ValueError(f"exp_within: 2^n of [{lo}, {hi}] is not a normal float")
    return _reduced_exp(x, one_scaling=True)


def _pow2_exponent(x: float) -> int:
    """The n the range reduction picks for x (see _reduced_exp)."""
    return pymath.floor(x * LOG2E + 0.5)


def _f(like: ir.Value, c: float) -> ir.Value:
    return splat(like.type, ir.FloatAttr.get_f32(c))


def _reduced_exp(xc: ir.Value, one_scaling: bool) -> ir.Value:
    """2^n p(r) for an xc inside [LO, HI]; 2^n in one exponent-field scaling or in two."""
    vt = xc.type
    i32 = ir.IntegerType.get_signless(32)
    it = ir.VectorType.get(ir.VectorType(vt).shape, i32) if isinstance(vt, ir.VectorType) else i32

    def f(c):
        return _f(xc, c)

    def i(c):
        return splat(it, ir.IntegerAttr.get(i32, c))

    t = math.fma(xc, f(LOG2E), f(ROUNDER))
    n = arith.subf(t, f(ROUNDER))
    r = math.fma(n, f(-LN2_HI), xc)
    r = math.fma(n, f(-LN2_LO), r)
    p = f(POLY[0])
    for c in POLY[1:]:
        p = math.fma(p, r, f(c))
    p = math.fma(p, arith.mulf(r, r), arith.addf(r, f(1.0)))
    bits = arith.bitcast(it, t)

    def scale(field):  # 2^e of an exponent field e << 23 (a bit pattern), e the int n or part
        return arith.bitcast(vt, arith.addi(field, i(127 << 23)))

    if one_scaling:  # the constant's bits above n's shift out of the 32
        return arith.mulf(p, scale(arith.shli(bits, i(23))))
    k = arith.subi(bits, i(ROUNDER_BITS))
    half = arith.shrsi(k, i(1))
    p = arith.mulf(p, scale(arith.shli(half, i(23))))
    return arith.mulf(p, scale(arith.shli(arith.subi(k, half), i(23))))
