"""One compiled kernel for every size of a symbolic function, where that is provably the same
code, as TVM builds one kernel that reads `n` from its arguments.

tir-mlir's TensorIR has no symbolic extents, so the function is specialized at probe values
(primes) and lowered to the llvm dialect: at a base probe, once more per var with only that var
changed, and at a check probe with every var changed. When the lowered texts are equal except
for the integers of `llvm.mlir.constant` ops, each such integer is fitted as `a1 * n1 + ... + b`
from the base and per-var lowerings and the fit must predict the check lowering's integer; then
the base lowering, with each fitted constant computed from the sizes the buffers' memref
descriptors carry at run time, is the function for every value:

    %19 = llvm.mlir.constant(1009 : index) : i64     ->  %arg3 (the size of A's dimension 0)
    %40 = llvm.mlir.constant(16140 : index) : i64    ->  16 * %arg3 - 4      (16n - 4)

Anything else (a constant not affine in the vars, `ceildiv(n, 4)`, `n * m`; a probe value in an
attribute rather than a constant op: a vector length, an allocation's type; a structure that
changes with the size; a scalar parameter, which no descriptor carries) makes `make` return
None, and the caller compiles one specialization per size.
"""
import re
from typing import Dict, List, Optional

from mlir import ir

from tir_mlir.errors import BuildError, ScheduleError, TIRError

# Primes: no factor divides them, so nothing folds; small enough that a buffer of four probe
# dimensions passes the size checks. A program constant equal to one makes the texts differ.
PROBES = ((1009, 1013, 1019, 1021), (2003, 2011, 2017, 2027), (3001, 3011, 3019, 3023))
MAX_LANE_EXTENT = 1000      # unroll/vectorize a loop longer: maybe the probe's, not the program's
CONSTANT = re.compile(r"llvm\.mlir\.constant\((-?\d+) : ")


def _size_arguments(func) -> Optional[Dict[str, int]]:
    """var -> position, among the lowered function's arguments (each memref parameter of rank r
    is 3 + 2r of them: two pointers, the offset, the sizes, the strides), of a size that
    carries it; None when a var is a scalar parameter."""
    from tir_mlir.frontend import ast as A
    out, position = {}, 0
    for name, dims in func._shapes():
        for axis, node in enumerate(dims):
            if isinstance(node, A.Name) and node.id in func.vars:
                out.setdefault(node.id, position + 3 + axis)
        position += 3 + 2 * len(dims)
    return out if set(out) == set(func.vars) else None


def _long_unrolled_loop(module) -> bool:
    from tir_mlir.dialect.ops import Loop
    from tir_mlir.ir_walk import walk_all
    for f in [o.operation for o in module.body.operations]:
        for op in walk_all(f):
            if Loop.is_loop(op):
                loop = Loop(op)
                if (loop.kind in ("unroll", "vectorized") or loop.annotations) and \
                        loop.constant_bounds and loop.extent > MAX_LANE_EXTENT:
                    return True
    return False


def _lowered_text(mod, target) -> str:
    from tir_mlir.context import get_context
    from tir_mlir.passes.lowering.pipeline import lower
    with get_context():
        return lower(mod.module, target, "llvm-dialect").operation.get_asm(
            enable_debug_info=False)


def _fit(columns, probes, names) -> Optional[List[Dict]]:
    """Per constant, {var: coefficient, "": offset}; None when one is not affine in the vars.
    `columns[k]` are the lowerings' integers: base, one per var, check."""
    fits = []
    base, check = probes[0], probes[-1]
    for values in zip(*columns):
        coeff = {}
        for k, name in enumerate(names):
            delta, step = values[1 + k] - values[0], probes[1 + k][name] - base[name]
            if delta % step:
                return None
            if delta:
                coeff[name] = delta // step
        offset = values[0] - sum(a * base[n] for n, a in coeff.items())
        if values[-1] != offset + sum(a * check[n] for n, a in coeff.items()):
            return None
        fits.append({**coeff, "": offset})
    return fits


class GenericKernel:
    """The compiled kernel and how to call it (see the module comment)."""

    def __init__(self, func, lib, probe_values):
        self.func, self.lib, self.probe_values = func, lib, probe_values

    @classmethod
    def make(cls, func, target, kwargs) -> Optional["GenericKernel"]:
        names = list(func.vars)
        if kwargs.get("debug") or str(target).split()[0] not in ("llvm", "cpu", "c") or \
                not names or len(names) > len(PROBES[0]):
            return None
        sizes = _size_arguments(func)
        if sizes is None:
            return None
        base = {n: PROBES[0][k] for k, n in enumerate(names)}
        from tir_mlir.script.pyfile import _constant
        if any(type(_constant(d, base)) is not int for _, dims in func._shapes() for d in dims):
            return None         # a shape the call check could not compute (`T.int64(8)`)
        probes = [base] + [{**base, n: PROBES[1][k]} for k, n in enumerate(names)] + \
            [{n: PROBES[2][k] for k, n in enumerate(names)}]
        try:
            mods = [func.specialize(p) for p in probes]
            if _long_unrolled_loop(mods[0].module):
                return None
            texts = [_lowered_text(m, target) for m in mods]
        except (TIRError, ScheduleError, BuildError):
            return None
        if len({CONSTANT.sub("llvm.mlir.constant(? : ", t) for t in texts}) != 1:
            return None
        fits = _fit([[int(x) for x in CONSTANT.findall(t)] for t in texts], probes, names)
        if fits is None:
            return None
        from tir_mlir.runtime.build import build
        try:
            lib = build(mods[0], target, rewrite_lowered=lambda m: _rewrite(
                m, func.name, fits, sizes), **kwargs)
        except BuildError:
            return None
        return cls(func, lib, base)

    def function(self, values):
        """The compiled function checking arrays of the shapes `values` give."""
        from tir_mlir.runtime.build import Function
        from tir_mlir.runtime.signature import Param
        from tir_mlir.script.pyfile import _constant
        shapes = [[_constant(d, values) for d in dims] for _, dims in self.func._shapes()]
        params = [Param(q.name, tuple(dims), q.dtype)
                  for q, dims in zip(self.lib.sigs[self.func.name], shapes)]
        return Function(self.lib, self.func.name, params)


def _integer_constants(op) -> list:
    """The `llvm.mlir.constant` ops with an integer value under `op`, in printing order."""
    out = []

    def visit(o):
        if o.name == "llvm.mlir.constant" and isinstance(o.attributes["value"], ir.IntegerAttr):
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


def _rewrite(module, name, fits, sizes):
    """In llvm.func `name`, each fitted constant that depends on a var -> its value computed
    from the size arguments (BuildError when one is elsewhere or the lowering differs)."""
    from mlir.dialects import llvm
    constants = _integer_constants(module.operation)
    if len(constants) != len(fits):
        raise BuildError("the lowering changed between two runs")
    kernel = next(o.operation for o in module.body.operations
                  if o.operation.name == "llvm.func" and
                  ir.StringAttr(o.operation.attributes["sym_name"]).value == name)
    args = kernel.regions[0].blocks[0].arguments
    i64 = ir.IntegerType.get_signless(64)
    for op, fit in zip(constants, fits):
        if len(fit) == 1:
            continue
        if not _within(op, kernel):
            raise BuildError("a size-dependent constant outside the kernel")
        with ir.InsertionPoint(op), op.location:
            def const(c):
                return llvm.ConstantOp(i64, ir.IntegerAttr.get(i64, c)).result
            wrap = llvm.IntegerOverflowFlags.none
            value = const(fit[""])
            for var, a in fit.items():
                if var:
                    term = args[sizes[var]]
                    if a != 1:
                        term = llvm.mul(term, const(a), wrap)
                    value = llvm.add(value, term, wrap)
            t = op.results[0].type
            if t != i64:
                value = llvm.trunc(t, value, wrap)
        op.results[0].replace_all_uses_with(value)
        op.erase()
