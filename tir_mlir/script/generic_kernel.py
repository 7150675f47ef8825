"""One compiled kernel for every size of a symbolic function, where that is provably the same
code, as TVM builds one kernel that reads `n` from its arguments. Tried where
dynamic_kernel.py's kernel over dynamic memrefs cannot be made.

tir-mlir's TensorIR has no symbolic extents, so the function is specialized at probe values
and lowered to the llvm dialect: at a base probe, once more per var with only that var changed
(primes), and at two check probes with every var changed (primes; multiples of 2..10). When
the lowered texts are equal except for the numbers of `llvm.mlir.constant` ops, each integer is
fitted as `a1 * n1 + ... + b` from the base and per-var lowerings, and the fit must predict the
checks' integers; a float that changes must be a float parameter itself. Then the base
lowering, with each such constant computed from the sizes the buffers' memref descriptors carry
at run time (scalar parameters: 0-d buffers appended to the parameters, read on entry), is the
function for every value:

    %19 = llvm.mlir.constant(1009 : index) : i64     ->  %arg3 (the size of A's dimension 0)
    %40 = llvm.mlir.constant(16140 : index) : i64    ->  16 * %arg3 - 4      (16n - 4)

Anything else (a constant not affine in the vars, `ceildiv(n, 4)`, `n * m`; a probe value in an
attribute rather than a constant op: a vector length, an allocation's type; a structure that
changes with the size; a scalar parameter of another dtype than int32/int64/float32/float64)
makes `make` return None, and the caller compiles one specialization per size.
"""
import re
from typing import Dict, List, Optional

from mlir import ir

from tir_mlir.errors import BuildError, ScheduleError, TIRError

# Primes: no factor divides them, so nothing folds; small enough that a buffer of four probe
# dimensions passes the size checks. A program constant equal to one makes the texts differ.
# The last set checks the fits where the primes cannot: multiples of every small number (an
# expression like `n // 2 * 2` is `n - 1` at every odd prime).
PROBES = ((1009, 1013, 1019, 1021), (2003, 2011, 2017, 2027), (3001, 3011, 3019, 3023),
          (2520, 2640, 2880, 3360))
# Float scalar parameters: values a decimal prints exactly.
FLOAT_PROBES = ((0.375, 0.625, 0.875, 1.375), (2.625, 2.875, 3.375, 3.625),
                (4.125, 4.375, 4.625, 4.875), (5.125, 5.375, 5.625, 5.875))
SCALAR_DTYPES = ("int32", "int64", "float32", "float64")
MAX_LANE_EXTENT = 1000      # unroll/vectorize a loop longer: maybe the probe's, not the program's
CONSTANT = re.compile(r"llvm\.mlir\.constant\((-?[0-9][0-9.e+-]*) : ")


def _arguments(func) -> Optional[Dict[str, tuple]]:
    """var -> ("size", position) for a var some buffer dimension carries: its position among
    the lowered function's arguments (each memref parameter of rank r is 3 + 2r of them: two
    pointers, the offset, the sizes, the strides); ("load", position) for a scalar parameter,
    passed as a 0-d buffer appended to the parameters (the position of its aligned pointer).
    None for a scalar of a dtype not handled here."""
    from tir_mlir.frontend import ast as A
    out, position = {}, 0
    for name, dims in func._shapes():
        for axis, node in enumerate(dims):
            if isinstance(node, A.Name) and node.id in func.vars and node.id not in func.params:
                out.setdefault(node.id, ("size", position + 3 + axis))
        position += 3 + 2 * len(dims)
    for name in scalar_params(func):
        if func.vars[name] not in SCALAR_DTYPES:
            return None
        out[name] = ("load", position + 1)
        position += 3
    return out if set(out) == set(func.vars) else None


def scalar_params(func) -> List[str]:
    return [p for p in func.params if p in func.vars]


def _long_unrolled_loop(module) -> bool:
    """A loop to unroll or vectorize longer than MAX_LANE_EXTENT, except one the dynamic
    kernel leaves to LLVM's vectorizer (dynamic_kernel.py)."""
    from tir_mlir.dialect.ops import Loop
    from tir_mlir.ir_walk import walk_all
    from tir_mlir.passes.lowering.vectorize import DYNAMIC_EXTENT
    for f in [o.operation for o in module.body.operations]:
        for op in walk_all(f):
            if Loop.is_loop(op) and DYNAMIC_EXTENT not in op.attributes:
                loop = Loop(op)
                if (loop.kind in ("unroll", "vectorized") or loop.annotations) and \
                        loop.constant_bounds and loop.extent > MAX_LANE_EXTENT:
                    return True
    return False


def _lowered_text(mod, target) -> str:
    from tir_mlir.context import get_context
    from tir_mlir.passes.lowering.pipeline import lower
    with get_context():
        return lower(mod.module, target, "llvm-dialect", static_bounds=False).operation.get_asm(
            enable_debug_info=False)


def _is_float(dtype) -> bool:
    return dtype.startswith("float")


def _fit(columns, probes, dtypes) -> Optional[List[Dict]]:
    """Per constant, {var: coefficient, "": offset} for an integer (affine in the integer
    vars), {var: None} for a float that is a float parameter; None when neither.
    `columns[k]` are the lowerings' constants (text): base, one per var, the checks."""
    fits = []
    names = list(dtypes)
    base, checks = probes[0], range(1 + len(names), len(probes))
    for texts in zip(*columns):
        if any(c in t for t in texts for c in ".e"):
            values = [float(t) for t in texts]
            if len(set(values)) == 1:
                fits.append({"": None})
                continue
            var = next((n for n in names if _is_float(dtypes[n]) and
                        all(v == p[n] for v, p in zip(values, probes))), None)
            if var is None:
                return None
            fits.append({var: None})
            continue
        values = [int(t) for t in texts]
        coeff = {}
        for k, name in enumerate(names):
            delta, step = values[1 + k] - values[0], probes[1 + k][name] - base[name]
            if delta and _is_float(dtypes[name]) or not _is_float(dtypes[name]) and delta % step:
                return None
            if delta:
                coeff[name] = delta // step
        offset = values[0] - sum(a * base[n] for n, a in coeff.items())
        if any(values[c] != offset + sum(a * probes[c][n] for n, a in coeff.items())
               for c in checks):
            return None
        fits.append({**coeff, "": offset})
    return fits


def _with_scalar_buffers(mod, name, scalars, dtypes):
    """The probe module with a 0-d buffer parameter per scalar parameter (named after it)."""
    from tir_mlir.context import get_context
    from tir_mlir.dtypes import mlir_type
    with get_context(), mod.module.operation.location:
        f = mod[name]
        entry = f.regions[0].blocks[0]
        attrs = list(ir.ArrayAttr(f.attributes["arg_attrs"])) if "arg_attrs" in f.attributes \
            else [ir.DictAttr.get({}) for _ in entry.arguments]
        for p in scalars:
            entry.add_argument(ir.MemRefType.get([], mlir_type(dtypes[p])), f.location)
            attrs.append(ir.DictAttr.get({"tir.name": ir.StringAttr.get(p)}))
        results = ir.FunctionType(ir.TypeAttr(f.attributes["function_type"]).value).results
        f.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(
            [a.type for a in entry.arguments], results))
        f.attributes["arg_attrs"] = ir.ArrayAttr.get(attrs)
    return mod


class GenericKernel:
    """The compiled kernel and how to call it (see the module comment)."""

    def __init__(self, func, lib, probe_values):
        self.func, self.lib, self.probe_values = func, lib, probe_values

    @classmethod
    def make(cls, func, target, kwargs) -> Optional["GenericKernel"]:
        names, dtypes = list(func.vars), dict(func.vars)
        if kwargs.get("debug") or str(target).split()[0] not in ("llvm", "cpu", "c") or \
                not names or len(names) > len(PROBES[0]):
            return None
        arguments = _arguments(func)
        if arguments is None:
            return None

        def probe(k, name):
            return (FLOAT_PROBES if _is_float(dtypes[name]) else PROBES)[k][names.index(name)]
        base = {n: probe(0, n) for n in names}
        from tir_mlir.script.pyfile import _constant
        if any(type(_constant(d, base)) is not int for _, dims in func._shapes() for d in dims):
            return None         # a shape the call check could not compute (`T.int64(8)`)
        probes = [base] + [{**base, n: probe(1, n)} for n in names] + \
            [{n: probe(k, n) for n in names} for k in (2, 3)]
        scalars = scalar_params(func)
        try:
            mods = [_with_scalar_buffers(func.specialize(p), func.name, scalars, dtypes)
                    for p in probes]
            if _long_unrolled_loop(mods[0].module):
                return None
            texts = [_lowered_text(m, target) for m in mods]
        except (TIRError, ScheduleError, BuildError):
            return None
        if len({CONSTANT.sub("llvm.mlir.constant(? : ", t) for t in texts}) != 1:
            return None
        fits = _fit([CONSTANT.findall(t) for t in texts], probes, dtypes)
        if fits is None:
            return None
        from tir_mlir.runtime.build import build
        try:
            lib = build(mods[0], target, rewrite_lowered=lambda m: _rewrite(
                m, func.name, fits, arguments, dtypes), static_bounds=False, **kwargs)
        except BuildError:
            return None
        return cls(func, lib, base)

    def covers(self, values) -> bool:
        """Whether the kernel serves these values (all: see dynamic_kernel.py for one that
        does not)."""
        return True

    def function(self, values):
        """The compiled function for `values`: it checks the arrays against the shapes they
        give and passes the scalar parameters as 0-d arrays."""
        import numpy as np
        from tir_mlir.runtime.build import Function
        from tir_mlir.runtime.signature import Param
        from tir_mlir.script.pyfile import _constant
        shapes = [[_constant(d, values) for d in dims] for _, dims in self.func._shapes()]
        sig = self.lib.sigs[self.func.name]
        params = [Param(q.name, tuple(dims), q.dtype) for q, dims in zip(sig, shapes)]
        fn = Function(self.lib, self.func.name, params + sig[len(params):])
        scalars = [np.array(values[p], self.func.vars[p]) for p in scalar_params(self.func)]
        return _WithScalars(fn, scalars)


class _WithScalars:
    """A compiled function called with the buffers; the scalars' 0-d arrays are appended."""

    def __init__(self, fn, scalars):
        self.fn, self.scalars, self.module = fn, scalars, fn.module

    def __call__(self, *arrays):
        return self.fn(*arrays, *self.scalars)

    def prepare(self, *arrays):
        return self.fn.prepare(*arrays, *self.scalars)


def _scalar_constants(op) -> list:
    """The `llvm.mlir.constant` ops with an integer or float value under `op`, in printing
    order (what CONSTANT finds in the text)."""
    out = []

    def visit(o):
        if o.name == "llvm.mlir.constant" and isinstance(o.attributes["value"],
                                                         (ir.IntegerAttr, ir.FloatAttr)):
            out.append(o)
        return ir.WalkResult.ADVANCE
    op.walk(visit, ir.WalkOrder.PRE_ORDER)
    return out


def _within(op, ancestor) -> bool:
    parent = op.parent
    while parent is not None:
        if parent == ancestor:
            return True
        parent = parent.parent
    return False


def _rewrite(module, name, fits, arguments, dtypes):
    """In llvm.func `name`, each fitted constant that depends on a var -> its value computed
    from the sizes and scalars (BuildError when one is elsewhere or the lowering differs)."""
    from mlir.dialects import llvm
    from tir_mlir.dtypes import mlir_type
    constants = _scalar_constants(module.operation)
    if len(constants) != len(fits):
        raise BuildError("the lowering changed between two runs")
    kernel = next(o.operation for o in module.body.operations
                  if o.operation.name == "llvm.func" and
                  ir.StringAttr(o.operation.attributes["sym_name"]).value == name)
    entry = kernel.regions[0].blocks[0]
    i64 = ir.IntegerType.get_signless(64)
    wrap = llvm.IntegerOverflowFlags.none
    loaded = {}

    def var_value(var):
        """A size argument, or the scalar read once at the kernel's entry."""
        if var not in loaded:
            kind, position = arguments[var]
            loaded[var] = entry.arguments[position]
            if kind == "load":
                with ir.InsertionPoint.at_block_begin(entry), kernel.location:
                    loaded[var] = llvm.load(mlir_type(dtypes[var]), loaded[var])
        return loaded[var]

    for op, fit in zip(constants, fits):
        if len(fit) == 1 and "" in fit:
            continue
        if not _within(op, kernel):
            raise BuildError("a size-dependent constant outside the kernel")
        t = op.results[0].type
        if "" not in fit:                            # a float parameter itself
            (var,) = fit
            value = var_value(var)
            if value.type != t:
                raise BuildError("a float parameter used at another width")
        else:
            with ir.InsertionPoint(op), op.location:
                def const(c):
                    return llvm.ConstantOp(i64, ir.IntegerAttr.get(i64, c)).result
                value = const(fit[""])
                for var, a in fit.items():
                    if var:
                        term = var_value(var)
                        if term.type != i64:         # an int32 scalar parameter
                            term = llvm.sext(i64, term)
                        if a != 1:
                            term = llvm.mul(term, const(a), wrap)
                        value = llvm.add(value, term, wrap)
                if t != i64:
                    value = llvm.trunc(t, value, wrap)
        op.results[0].replace_all_uses_with(value)
        op.erase()
