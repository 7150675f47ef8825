"""Reference interpreter: runs a `tir`-dialect function on numpy arrays, op by op.

Small, slow and obviously correct: it reads the same MLIR the lowering reads (blocks with their
bindings, predicate and init; affine loops; arith/math/memref/scf ops) and follows TensorIR's
semantics directly, so `tir-mlir run --check` and the tests can compare compiled code against it.
Each op is turned once into a Python closure over integer value slots; running is then a walk
over closures. Integers are computed exactly and wrapped to their width; unsigned buffers are
viewed as signless (signed) arrays, as in the IR.

    interpret(mod, "mm_relu", a, b, c)     # writes into c like the compiled function
"""
import math as pymath

import numpy as np
from mlir import ir

from tir_mlir.context import get_context
from tir_mlir.dialect.ops import Block, integer_set
from tir_mlir.errors import OutOfBoundsError, TIRError
from tir_mlir.passes.lowering.common import source_loc
from tir_mlir.runtime.signature import check_args, signatures

_FLOATS = {"f16": np.float16, "f32": np.float32, "f64": np.float64}


def interpret(mod, func_name, *arrays):
    """Run function `func_name` of `mod` on `arrays` (one per buffer parameter, written in place)."""
    module = mod.module if hasattr(mod, "module") else mod
    with get_context():
        params = signatures(module)[func_name]
        check_args(func_name, params, arrays)
        f = next(op.operation for op in module.body.operations
                 if op.operation.name == "func.func"
                 and ir.StringAttr(op.operation.attributes["sym_name"]).value == func_name)
        c = _Compiler()
        entry = f.regions[0].blocks[0]
        slots = [c.slot(a) for a in entry.arguments]
        run = c.block(entry)
    env = [None] * len(c.slots)
    for s, a in zip(slots, arrays):
        env[s] = a.view(_signless(a.dtype)) if a.dtype.kind == "u" else a
    with np.errstate(all="ignore"):
        run(env)


def _signless(dtype):
    return np.dtype(dtype.str.replace("u", "i"))


def _np_type(t: ir.Type):
    """Python/numpy scalar constructor of an MLIR type (index: python int)."""
    if isinstance(t, ir.IndexType):
        return int
    if isinstance(t, ir.IntegerType):
        return np.bool_ if t.width == 1 else getattr(np, f"int{t.width}")
    if str(t) == "bf16":
        import ml_dtypes
        return ml_dtypes.bfloat16
    return _FLOATS[str(t)]


def _wrap(v: int, t: ir.Type):
    """Exact integer `v` wrapped to type t (two's complement), as the type's scalar."""
    if isinstance(t, ir.IndexType):
        return int(v)
    w = t.width
    if w == 1:
        return np.bool_(v & 1)
    v &= (1 << w) - 1
    return getattr(np, f"int{w}")(v - (1 << w) if v >> (w - 1) else v)


def _unsigned(v, t) -> int:
    if isinstance(t, ir.IndexType):
        return int(v)
    return int(v) & ((1 << t.width) - 1)


def _trunc_div(a, b):
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


_INT_BIN = {
    "arith.addi": lambda a, b: a + b, "arith.subi": lambda a, b: a - b,
    "arith.muli": lambda a, b: a * b, "arith.divsi": _trunc_div,
    "arith.remsi": lambda a, b: a - _trunc_div(a, b) * b,
    "arith.floordivsi": lambda a, b: a // b, "arith.ceildivsi": lambda a, b: -((-a) // b),
    "arith.maxsi": max, "arith.minsi": min,
    "arith.andi": lambda a, b: a & b, "arith.ori": lambda a, b: a | b,
    "arith.xori": lambda a, b: a ^ b, "arith.shli": lambda a, b: a << b,
    "arith.shrsi": lambda a, b: a >> b,
}
_UINT_BIN = {
    "arith.divui": lambda a, b: a // b, "arith.remui": lambda a, b: a % b,
    "arith.maxui": max, "arith.minui": min, "arith.shrui": lambda a, b: a >> b,
}
_FLOAT_BIN = {
    "arith.addf": lambda a, b: a + b, "arith.subf": lambda a, b: a - b,
    "arith.mulf": lambda a, b: a * b, "arith.divf": lambda a, b: a / b,
    "arith.remf": np.fmod, "arith.maximumf": np.maximum, "arith.minimumf": np.minimum,
    "arith.maxnumf": np.fmax, "arith.minnumf": np.fmin, "math.powf": np.power,
    "math.atan2": np.arctan2, "math.copysign": np.copysign,
}
_FLOAT_UN = {
    "arith.negf": np.negative, "math.exp": np.exp, "math.exp2": np.exp2, "math.log": np.log,
    "math.log2": np.log2, "math.log10": np.log10, "math.log1p": np.log1p,
    "math.expm1": np.expm1, "math.sqrt": np.sqrt, "math.rsqrt": lambda x: 1 / np.sqrt(x),
    "math.tanh": np.tanh, "math.sin": np.sin, "math.cos": np.cos, "math.tan": np.tan,
    "math.atan": np.arctan, "math.asin": np.arcsin, "math.acos": np.arccos,
    "math.sinh": np.sinh, "math.cosh": np.cosh, "math.absf": np.abs, "math.floor": np.floor,
    "math.ceil": np.ceil, "math.round": lambda x: np.sign(x) * np.floor(np.abs(x) + 0.5),
    "math.roundeven": np.rint, "math.trunc": np.trunc,
    "math.erf": lambda x: pymath.erf(float(x)),
}
_CMPI = {0: lambda a, b: a == b, 1: lambda a, b: a != b, 2: lambda a, b: a < b,
         3: lambda a, b: a <= b, 4: lambda a, b: a > b, 5: lambda a, b: a >= b}
_CMPF = {1: "==", 2: ">", 3: ">=", 4: "<", 5: "<=", 6: "!=", 8: "==", 9: ">", 10: ">=",
         11: "<", 12: "<=", 13: "!="}


def _cmpf(pred):
    if pred == 0:
        return lambda a, b: False
    if pred == 15:
        return lambda a, b: True
    if pred == 7:
        return lambda a, b: not (np.isnan(a) or np.isnan(b))
    if pred == 14:
        return lambda a, b: bool(np.isnan(a) or np.isnan(b))
    rel = {"==": lambda a, b: a == b, "!=": lambda a, b: a != b, "<": lambda a, b: a < b,
           "<=": lambda a, b: a <= b, ">": lambda a, b: a > b, ">=": lambda a, b: a >= b}[_CMPF[pred]]
    ordered = pred <= 6

    def cmp(a, b):
        if np.isnan(a) or np.isnan(b):
            return not ordered
        return bool(rel(a, b))
    return cmp


def _eval_expr(e):
    """Python function of (dims, syms) computing an affine expression (floor semantics)."""
    e = e.maybe_downcast()
    if isinstance(e, ir.AffineConstantExpr):
        v = e.value
        return lambda d, s: v
    if isinstance(e, ir.AffineDimExpr):
        p = e.position
        return lambda d, s: d[p]
    if isinstance(e, ir.AffineSymbolExpr):
        p = e.position
        return lambda d, s: s[p]
    lhs, rhs = _eval_expr(e.lhs), _eval_expr(e.rhs)
    op = {ir.AffineAddExpr: lambda a, b: a + b, ir.AffineMulExpr: lambda a, b: a * b,
          ir.AffineModExpr: lambda a, b: a % b, ir.AffineFloorDivExpr: lambda a, b: a // b,
          ir.AffineCeilDivExpr: lambda a, b: -((-a) // b)}[type(e)]
    return lambda d, s: op(lhs(d, s), rhs(d, s))


class _Compiler:
    def __init__(self):
        self.slots = {}

    def slot(self, v) -> int:
        return self.slots.setdefault(v, len(self.slots))

    def block(self, block: ir.Block):
        """Closure running a block's ops; returns the values its terminator yields."""
        fns = []
        term = None
        for op in block.operations:
            op = op.operation
            if op.name in ("gpu.yield", "scf.yield", "affine.yield", "func.return"):
                term = [self.slot(v) for v in op.operands]
            else:
                fns.append(self.op(op))
        term = term or []

        def run(env):
            for f in fns:
                f(env)
            return [env[s] for s in term]
        return run

    def op(self, op):
        name = op.name
        ins = [self.slot(v) for v in op.operands]
        outs = [self.slot(r) for r in op.results]
        handler = getattr(self, "_" + name.replace(".", "_"), None)
        if handler is not None:
            return handler(op, ins, outs)
        t = op.results[0].type if len(op.results) else None
        if name in _FLOAT_BIN or name in _FLOAT_UN:
            fn, cast = _FLOAT_BIN.get(name) or _FLOAT_UN[name], _np_type(t)
            o = outs[0]
            if len(ins) == 2:
                a, b = ins
                return lambda env: env.__setitem__(o, cast(fn(env[a], env[b])))
            a, = ins
            return lambda env: env.__setitem__(o, cast(fn(env[a])))
        if name in _INT_BIN or name in _UINT_BIN:
            a, b = ins
            o = outs[0]
            if name in _INT_BIN:
                fn = _INT_BIN[name]
                signed = (lambda x: bool(x)) if not isinstance(t, ir.IndexType) and t.width == 1 \
                    else int
                return lambda env: env.__setitem__(o, _wrap(fn(signed(env[a]), signed(env[b])), t))
            fn = _UINT_BIN[name]
            return lambda env: env.__setitem__(
                o, _wrap(fn(_unsigned(env[a], t), _unsigned(env[b], t)), t))
        raise TIRError(f"interpreter: unsupported op '{name}'", source_loc(op))

    # --- memory -----------------------------------------------------------------------------
    def _memref_alloc(self, op, ins, outs):
        mt = ir.MemRefType(op.results[0].type)
        dtype = np.dtype(_np_type(mt.element_type))
        shape, o = tuple(mt.shape), outs[0]
        return lambda env: env.__setitem__(o, np.zeros(shape, dtype))

    _memref_alloca = _memref_alloc

    def _memref_dealloc(self, op, ins, outs):
        return lambda env: None

    def _access(self, op, buf, idx):
        shape = ir.MemRefType(op.operands[0 if op.name == "memref.load" else 1].type).shape
        loc = source_loc(op)

        def index(env):
            i = tuple(int(env[s]) for s in idx)
            for axis, (k, n) in enumerate(zip(i, shape)):
                if not 0 <= k < n:
                    raise OutOfBoundsError(f"out-of-bounds {op.name[7:]}: index {k} on axis "
                                           f"{axis} of a buffer of shape {tuple(shape)}", loc,
                                           index=k, axis=axis)
            return i
        return index

    def _memref_load(self, op, ins, outs):
        buf, idx, o = ins[0], ins[1:], outs[0]
        index = self._access(op, buf, idx)
        return lambda env: env.__setitem__(o, env[buf][index(env)])

    def _memref_store(self, op, ins, outs):
        v, buf, idx = ins[0], ins[1], ins[2:]
        index = self._access(op, buf, idx)

        def store(env):
            env[buf][index(env)] = env[v]
        return store

    # --- control flow -----------------------------------------------------------------------
    def _affine_for(self, op, ins, outs):
        def bound(key):
            return ir.AffineConstantExpr(ir.AffineMapAttr(op.attributes[key]).value.results[0]).value
        lo, hi = bound("lowerBoundMap"), bound("upperBoundMap")
        step = ir.IntegerAttr(op.attributes["step"]).value
        body_block = op.regions[0].blocks[0]
        iv = self.slot(body_block.arguments[0])
        body = self.block(body_block)

        def loop(env):
            for i in range(lo, hi, step):
                env[iv] = i
                body(env)
        return loop

    def _affine_apply(self, op, ins, outs):
        m = ir.AffineMapAttr(op.attributes["map"]).value
        fn, nd, o = _eval_expr(m.results[0]), m.n_dims, outs[0]
        return lambda env: env.__setitem__(o, fn([env[s] for s in ins[:nd]],
                                                 [env[s] for s in ins[nd:]]))

    def _set_test(self, iset, ins):
        tests = [(_eval_expr(c.expr), c.is_eq) for c in iset.constraints]
        nd = iset.n_dims

        def holds(env):
            d, s = [env[x] for x in ins[:nd]], [env[x] for x in ins[nd:]]
            return all((f(d, s) == 0) if eq else (f(d, s) >= 0) for f, eq in tests)
        return holds

    def _affine_if(self, op, ins, outs):
        holds = self._set_test(integer_set(op.attributes["condition"]), ins)
        return self._if(op, holds, outs)

    def _scf_if(self, op, ins, outs):
        c = ins[0]
        return self._if(op, lambda env: bool(env[c]), outs)

    def _if(self, op, cond, outs):
        then = self.block(op.regions[0].blocks[0])
        other = self.block(op.regions[1].blocks[0]) if len(op.regions[1].blocks) else None

        def run(env):
            vals = then(env) if cond(env) else (other(env) if other else [])
            for o, v in zip(outs, vals):
                env[o] = v
        return run

    def _tir_block(self, op, ins, outs):
        blk = Block(op)
        fns = [_eval_expr(e) for e in blk.bindings.results]
        pred = blk.predicate
        holds = self._set_test(pred, ins) if pred is not None else None
        body_args = [self.slot(a) for a in blk.body.arguments]
        body = self.block(blk.body)
        init = None
        if blk.init is not None:
            init_args = [self.slot(a) for a in blk.init.arguments]
            init = self.block(blk.init)
            reduce_at = [(k, dmin) for k, (t, (dmin, _)) in
                         enumerate(zip(blk.iter_types, blk.domains)) if t == "R"]

        def run(env):
            if holds is not None and not holds(env):
                return
            dims = [env[s] for s in ins]
            values = [f(dims, ()) for f in fns]
            if init is not None and all(values[k] == dmin for k, dmin in reduce_at):
                for s, v in zip(init_args, values):
                    env[s] = v
                init(env)
            for s, v in zip(body_args, values):
                env[s] = v
            body(env)
        return run

    # --- values -----------------------------------------------------------------------------
    def _arith_constant(self, op, ins, outs):
        attr = op.attributes["value"]
        t = op.results[0].type
        if isinstance(t, (ir.IntegerType, ir.IndexType)):
            v = _wrap(ir.IntegerAttr(attr).value, t)
        else:
            v = _np_type(t)(ir.FloatAttr(attr).value)
        o = outs[0]
        return lambda env: env.__setitem__(o, v)

    def _arith_select(self, op, ins, outs):
        c, a, b = ins
        o = outs[0]
        return lambda env: env.__setitem__(o, env[a] if env[c] else env[b])

    def _arith_cmpi(self, op, ins, outs):
        pred = ir.IntegerAttr(op.attributes["predicate"]).value
        t = op.operands[0].type
        a, b = ins
        o = outs[0]
        if pred >= 6:
            fn = _CMPI[pred - 4]
            return lambda env: env.__setitem__(o, np.bool_(fn(_unsigned(env[a], t),
                                                              _unsigned(env[b], t))))
        fn = _CMPI[pred]
        return lambda env: env.__setitem__(o, np.bool_(fn(int(env[a]), int(env[b]))))

    def _arith_cmpf(self, op, ins, outs):
        fn = _cmpf(ir.IntegerAttr(op.attributes["predicate"]).value)
        a, b = ins
        o = outs[0]
        return lambda env: env.__setitem__(o, np.bool_(fn(env[a], env[b])))

    def _cast(self, op, ins, outs, fn):
        a, o = ins[0], outs[0]
        return lambda env: env.__setitem__(o, fn(env[a]))

    def _int_cast(self, op, ins, outs, unsigned=False):
        src, t = op.operands[0].type, op.results[0].type
        conv = (lambda x: _unsigned(x, src)) if unsigned else int
        return self._cast(op, ins, outs, lambda x: _wrap(conv(x), t))

    _arith_extsi = _arith_trunci = _arith_index_cast = _int_cast

    def _arith_extui(self, op, ins, outs):
        return self._int_cast(op, ins, outs, unsigned=True)

    _arith_index_castui = _arith_extui

    def _float_cast(self, op, ins, outs, unsigned=False):
        src, cast = op.operands[0].type, _np_type(op.results[0].type)
        if unsigned:
            return self._cast(op, ins, outs, lambda x: cast(_unsigned(x, src)))
        if isinstance(src, ir.IntegerType):
            return self._cast(op, ins, outs, lambda x: cast(int(x)))
        return self._cast(op, ins, outs, cast)

    _arith_sitofp = _arith_extf = _arith_truncf = _float_cast

    def _arith_uitofp(self, op, ins, outs):
        return self._float_cast(op, ins, outs, unsigned=True)

    def _arith_fptosi(self, op, ins, outs):
        t = op.results[0].type
        return self._cast(op, ins, outs, lambda x: _wrap(int(np.trunc(np.float64(x))), t))

    _arith_fptoui = _arith_fptosi

    def _math_absi(self, op, ins, outs):
        t = op.results[0].type
        return self._cast(op, ins, outs, lambda x: _wrap(abs(int(x)), t))

    def _math_fma(self, op, ins, outs):
        a, b, c = ins
        o, cast = outs[0], _np_type(op.results[0].type)
        return lambda env: env.__setitem__(o, cast(env[a] * env[b] + env[c]))

    def _tir_call(self, op, ins, outs):
        callee = ir.StringAttr(op.attributes["callee"]).value
        t = op.results[0].type
        cast, o = _np_type(t), outs[0]
        is_int = isinstance(t, (ir.IntegerType, ir.IndexType))
        fns = {
            "sigmoid": lambda x: cast(1 / (1 + np.exp(-x))),
            "floormod": (lambda a, b: _wrap(int(a) % int(b), t)) if is_int
            else (lambda a, b: cast(a - np.floor(a / b) * b)),
            "floordiv": lambda a, b: _wrap(int(a) // int(b), t),
            "rsqrt": lambda x: cast(1 / np.sqrt(x)),
            "log1p": lambda x: cast(np.log1p(x)),
        }
        if callee not in fns:
            raise TIRError(f"interpreter: unsupported intrinsic T.{callee}", source_loc(op))
        fn = fns[callee]
        return lambda env: env.__setitem__(o, fn(*[env[s] for s in ins]))

    def _tir_evaluate(self, op, ins, outs):
        return lambda env: None
