"""Elementwise ops on constants, evaluated at import.

A batch norm's scale is `1 / sqrt(var + eps)` of its constant `var`: torch-mlir writes it as
`linalg.generic`s over constants (and `expand_shape`s of them to broadcast). Kept as blocks,
the program computes them on every call, and a schedule that inlines them into the
normalization recomputes the square root and division for every element. Their results are
constants: they are computed here, once, as Relax's constant folding does.

Only ops whose float result is correctly rounded (IEEE add, sub, mul, div, sqrt, neg, abs,
min/max, compares, selects, casts between float types), so the folded constant holds what
the program would have computed; a body with any other op (exp, integer math, ...) is kept.
"""

import numpy as np
from mlir import ir

from tir_mlir.frontend.linalg_import.linalg_ops import indexing_maps, iterator_types, n_inputs

_BINARY = {
    "arith.addf": np.add,
    "arith.subf": np.subtract,
    "arith.mulf": np.multiply,
    "arith.divf": np.divide,
    "arith.maximumf": np.maximum,  # NaN-propagating, as numpy's
    "arith.minimumf": np.minimum,
    "arith.maxnumf": np.fmax,  # NaN-ignoring
    "arith.minnumf": np.fmin,
}
_UNARY = {"arith.negf": np.negative, "math.sqrt": np.sqrt, "math.absf": np.abs}
_CASTS = ("arith.truncf", "arith.extf")
# arith.cmpf predicates by number: (ordered compare, true when unordered)
_CMPF = {
    1: (np.equal, False),
    2: (np.greater, False),
    3: (np.greater_equal, False),
    4: (np.less, False),
    5: (np.less_equal, False),
    6: (np.not_equal, False),
    8: (np.equal, True),
    9: (np.greater, True),
    10: (np.greater_equal, True),
    11: (np.less, True),
    12: (np.less_equal, True),
    13: (np.not_equal, True),
}


def float_dtype(t: ir.Type):
    """numpy's dtype of a float type (None: another type, or one numpy lacks, bf16)."""
    for cls, dtype in (
        (ir.F16Type, np.float16),
        (ir.F32Type, np.float32),
        (ir.F64Type, np.float64),
    ):
        if isinstance(t, cls):
            return np.dtype(dtype)
    return None


def evaluate(op, inputs: list) -> np.ndarray | None:
    """The result of the all-parallel `linalg.generic` `op` of one output indexed by its
    dimensions in order, given an array (or scalar) per input (None for an input the body does
    not read); None when it is not such an op or its body has an op evaluated elsewhere."""
    if len(op.results) != 1 or "R" in iterator_types(op):
        return None
    maps = indexing_maps(op)
    out_t = ir.RankedTensorType(op.results[0].type)
    if float_dtype(out_t.element_type) is None or not out_t.has_static_shape:
        return None
    out = maps[-1]
    if [str(e) for e in out.results] != [f"d{i}" for i in range(out.n_dims)]:
        return None
    grid = np.indices(tuple(out_t.shape), sparse=True)
    body = op.regions[0].blocks[0]
    env: dict = {}
    for j in range(n_inputs(op)):
        x = inputs[j]
        if x is None or np.ndim(x) == 0:
            env[body.arguments[j]] = x
            continue
        index = []
        for e in maps[j].results:
            e = e.maybe_downcast()
            if isinstance(e, ir.AffineDimExpr):
                index.append(grid[e.position])
            elif isinstance(e, ir.AffineConstantExpr):
                index.append(e.value)
            else:
                return None
        env[body.arguments[j]] = np.asarray(x)[tuple(index)]
    with np.errstate(all="ignore"):
        for o in body.operations:
            o = o.operation
            if o.name == "linalg.yield":
                y = _value(o.operands[0], env)
                if y is None:
                    return None
                dtype = float_dtype(out_t.element_type)
                return np.ascontiguousarray(np.broadcast_to(np.asarray(y, dtype), out_t.shape))
            if o.name == "cf.assert":  # torch-mlir's checks: folded when they hold
                if not np.all(_value(o.operands[0], env)):
                    return None
                continue
            r = _apply(o, env)
            if r is None:
                return None
            env[o.results[0]] = r
    return None


def const_value(v: ir.Value):
    """The value of a scalar `arith.constant` (None: not one)."""
    return _value(v, {})


def _value(v: ir.Value, env: dict):
    """An operand's value: computed in the body, or a scalar constant from outside it."""
    if v in env:
        return env[v]
    owner = v.owner
    if isinstance(owner, ir.Block) or owner.name != "arith.constant":
        return None
    attr = owner.attributes["value"]
    dtype = float_dtype(attr.type) if isinstance(attr, ir.FloatAttr) else None
    if dtype is not None:
        return dtype.type(ir.FloatAttr(attr).value)
    if isinstance(attr, ir.IntegerAttr) and ir.IntegerType(attr.type).width == 1:
        return np.bool_(attr.value)
    return None


def _apply(o, env: dict):
    if o.name == "arith.constant":
        return _value(o.results[0], env)
    values = [_value(v, env) for v in o.operands]
    if any(a is None for a in values):
        return None
    args = [np.asarray(a) for a in values]
    if o.name in _BINARY:
        return _BINARY[o.name](*args)
    if o.name in _UNARY:
        return _UNARY[o.name](*args)
    if o.name in _CASTS:
        dtype = float_dtype(o.results[0].type)
        return None if dtype is None else args[0].astype(dtype)
    if o.name == "arith.select":
        return np.where(*args)
    if o.name == "arith.cmpf":
        predicate = ir.IntegerAttr(o.attributes["predicate"]).value
        if predicate not in _CMPF:
            return None
        compare, unordered = _CMPF[predicate]
        a, b = args
        nan = np.isnan(a) | np.isnan(b)
        return (compare(a, b) & ~nan) | (nan & unordered)
    return None
