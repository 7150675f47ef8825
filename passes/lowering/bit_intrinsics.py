"""Expansion of the `tir.call`s of TVM's target tensor intrinsics and quantized kernels
(frontend/vectors.py, frontend/fixed_point.py) into arith / vector ops, for tir-to-affine:

    T.reinterpret("int32", v: int8x4)     ->  vector.bitcast to vector<1xi32>, extract lane 0
    T.reinterpret("int32x16", v: int8x64) ->  vector.bitcast
    T.vectorlow / T.vectorhigh            ->  vector.extract_strided_slice of the first / second half
    T.q_multiply_shift(x, y, q, s)        ->  TVM's expansion (its lower_intrin rule), in int64:
        ((x << max(s, 0)) * y + (1 << (q + max(-s, 0) - 1))) >> (q + max(-s, 0))
    T.q_multiply_shift_per_axis(x, y, ls, rs, q, lreq, rreq)
                                          ->  the same with the shifts ls (when lreq) and rs
"""

from mlir import ir
from mlir.dialects import arith, vector

from tir_mlir.dialect.expr_ops import FIXED_POINT_FLAGS

CALLEES = (
    "reinterpret",
    "vectorlow",
    "vectorhigh",
    "q_multiply_shift",
    "q_multiply_shift_per_axis",
)


def expand(op) -> ir.Value:
    """The value computing `op` (a `tir.call` of one of CALLEES), built before it."""
    callee = ir.StringAttr(op.attributes["callee"]).value
    args, t = list(op.operands), op.results[0].type
    if callee == "reinterpret":
        return _reinterpret(args[0], t)
    if callee in ("vectorlow", "vectorhigh"):
        half = ir.VectorType(t).shape[0]
        return vector.ExtractStridedSliceOp(
            t, args[0], [0 if callee == "vectorlow" else half], [half], [1]
        ).result
    flags = [True, True]
    if callee == "q_multiply_shift":
        x, y, q, s = args
        zero = arith.constant(t, 0)
        left = arith.maxsi(s, zero)
        right = arith.maxsi(arith.subi(zero, s), zero)
    else:
        x, y, left, right, q = args
        flags = [ir.BoolAttr(op.attributes[k]).value for k in FIXED_POINT_FLAGS]
    return _fixed_point_multiply(x, y, left if flags[0] else None, right, q, t)


def _reinterpret(x: ir.Value, t: ir.Type) -> ir.Value:
    src = x.type
    if not isinstance(src, ir.VectorType) and not isinstance(t, ir.VectorType):
        return arith.bitcast(t, x)
    if not isinstance(src, ir.VectorType):
        x = vector.broadcast(ir.VectorType.get([1], src), x)
    if not isinstance(t, ir.VectorType):
        one = vector.bitcast(ir.VectorType.get([1], t), x)
        return vector.extract(one, [], [0])
    return vector.bitcast(t, x)


def _fixed_point_multiply(x, y, left, right, q, t) -> ir.Value:
    """int32 result of the int64 `((x << left) * y + round) >> (right + q)` (left None: 0)."""
    i64 = ir.IntegerType.get_signless(64)
    wide = [arith.extsi(i64, v) for v in (x, y)]
    xw = arith.shli(wide[0], arith.extsi(i64, left)) if left is not None else wide[0]
    total = arith.extsi(i64, arith.addi(right, q))
    one = arith.constant(i64, 1)
    rounding = arith.shli(one, arith.subi(total, one))
    prod = arith.addi(arith.muli(xw, wide[1]), rounding)
    return arith.trunci(t, arith.shrsi(prod, total))
