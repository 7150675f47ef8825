"""Stage `static-bounds` (plain builds, on the tir module): refuse an access that provably
leaves its buffer, before it can corrupt memory at run time.

A plain build does not check accesses, so an index that runs past its buffer writes or reads
someone else's memory (a constant index past the end; a `split(..., disable_predication=True)`
by a factor that does not divide the extent, whose last iterations reach past the buffer).
Each index is read as a sum of terms over the loops around it (their IVs: ranges known when
the bounds are constants). It is refused when some iteration that certainly runs the access
puts the index outside [0, extent):
- the access runs on every iteration of its loops: only loops with constant bounds and at
  least one iteration, and blocks without `T.where` lie between it and the function (no `if`,
  no `T.if_then_else` branch, no `T.init()`);
- its whole range is outside the buffer, or its range is exact (every term ranges over loops of
  its own, so its min and max are reached) and one end is outside.
Anything else (predicated blocks, non-constant divisors, products of loop variables, ...) is
left to the run-time check of a debug build: this stage never refuses a program that runs in
bounds. TVM's `tir.analysis.OOBChecker` makes the same kind of check (its bounds of the index
against the buffer's shape), but TVM's build does not run it.
"""

from dataclasses import dataclass, field
from typing import Optional

from mlir import ir

from tir_mlir.dialect.buffers import buffer_name
from tir_mlir.dialect.ops import Block, Loop
from tir_mlir.errors import BuildError, SourceLoc
from tir_mlir.passes.lowering.common import (
    constant_extent,
    constant_loop,
    constant_min,
    functions,
    source_loc,
)


@dataclass
class Term:
    """A non-affine part of an index (a floordiv, a floormod): sound bounds, whether both are
    reached, and the loops it depends on."""

    lo: int
    hi: int
    exact: bool
    leaves: frozenset


@dataclass
class Form:
    """const + sum(coef * leaf) + sum(terms); a leaf k ranges over [0, LEAVES[k]]."""

    const: int = 0
    coefs: dict = field(default_factory=dict)
    terms: list = field(default_factory=list)

    def bounds(self, top):
        lo = hi = self.const
        for k, c in self.coefs.items():
            lo, hi = lo + min(0, c * top[k]), hi + max(0, c * top[k])
        for t in self.terms:
            lo, hi = lo + t.lo, hi + t.hi
        return lo, hi

    def exact(self) -> bool:
        seen = {k for k, c in self.coefs.items() if c}
        for t in self.terms:
            if not t.exact or seen & t.leaves:
                return False
            seen |= t.leaves
        return True

    def leaves(self) -> frozenset:
        out = {k for k, c in self.coefs.items() if c}
        for t in self.terms:
            out |= t.leaves
        return frozenset(out)


def _add(a: Form, b: Form) -> Form:
    coefs = dict(a.coefs)
    for k, c in b.coefs.items():
        coefs[k] = coefs.get(k, 0) + c
    return Form(a.const + b.const, coefs, a.terms + b.terms)


def _scale(a: Form, c: int) -> Form:
    terms = [
        Term(min(t.lo * c, t.hi * c), max(t.lo * c, t.hi * c), t.exact, t.leaves) for t in a.terms
    ]
    return Form(a.const * c, {k: v * c for k, v in a.coefs.items()}, terms)


def _const(a: Optional[Form]) -> Optional[int]:
    if a is not None and not a.terms and not any(a.coefs.values()):
        return a.const
    return None


class _Analysis:
    def __init__(self):
        self.top = []  # leaf k ranges over [0, top[k]]

    def leaf(self, count: int) -> Form:
        self.top.append(count - 1)
        return Form(0, {len(self.top) - 1: 1})

    def div(self, a: Optional[Form], c: Optional[int], mod: bool) -> Optional[Form]:
        if a is None or c is None or c <= 0:
            return None
        k = _const(a)
        if k is not None:
            return Form(k % c if mod else k // c)
        lo, hi = a.bounds(self.top)
        if mod and lo // c == hi // c:  # one period: a shift of `a`
            return _add(a, Form(-(lo // c) * c))
        if mod:
            return Form(0, {}, [Term(0, c - 1, False, a.leaves())])
        return Form(0, {}, [Term(lo // c, hi // c, a.exact(), a.leaves())])

    def affine(self, e: ir.AffineExpr, dims) -> Optional[Form]:
        e = e.maybe_downcast()
        if isinstance(e, ir.AffineConstantExpr):
            return Form(e.value)
        if isinstance(e, ir.AffineDimExpr):
            return dims[e.position]
        if not isinstance(e, ir.AffineBinaryExpr):
            return None
        a, b = self.affine(e.lhs, dims), self.affine(e.rhs, dims)
        if a is None or b is None:
            return None
        if isinstance(e, ir.AffineAddExpr):
            return _add(a, b)
        if isinstance(e, ir.AffineMulExpr):
            return _mul(a, b)
        if isinstance(e, (ir.AffineFloorDivExpr, ir.AffineModExpr)):
            return self.div(a, _const(b), isinstance(e, ir.AffineModExpr))
        return None

    def value(self, op, env) -> Optional[Form]:
        """The form of the index result of `op`, or None."""
        name = op.name
        args = [env.get(v) for v in op.operands]
        if name == "arith.constant" and isinstance(
            op.results[0].type, (ir.IndexType, ir.IntegerType)
        ):
            return Form(ir.IntegerAttr(op.attributes["value"]).value)
        if name == "arith.index_cast" or name == "arith.extsi":
            return args[0]
        if None in args:
            return None
        if name == "arith.addi":
            return _add(*args)
        if name == "arith.subi":
            return _add(args[0], _scale(args[1], -1))
        if name == "arith.muli":
            return _mul(*args)
        if name == "arith.floordivsi":
            return self.div(args[0], _const(args[1]), False)
        if (
            name == "tir.call"
            and "callee" in op.attributes
            and ir.StringAttr(op.attributes["callee"]).value == "floormod"
        ):
            return self.div(args[0], _const(args[1]), True)
        return None


def _mul(a: Form, b: Form) -> Optional[Form]:
    if (k := _const(b)) is not None:
        return _scale(a, k)
    if (k := _const(a)) is not None:
        return _scale(b, k)
    return None


class StaticBounds:
    name = "static-bounds"

    def __call__(self, module: ir.Module):
        for f in functions(module):
            try:
                _Checker().region_block(f.regions[0].blocks[0], {})
            except RecursionError:  # a binding nested too deep to analyse: not refused
                pass


class _Checker(_Analysis):
    def region_block(self, block: ir.Block, env: dict):
        for op in block.operations:
            op = op.operation
            if op.name in ("memref.load", "memref.store"):
                self.check(op, env)
            elif op.name == "affine.for":
                loop = Loop(op)
                if not constant_loop(loop):
                    continue
                extent = constant_extent(loop)
                if extent <= 0:
                    continue
                leaf = self.leaf((extent + loop.step - 1) // loop.step)
                env[loop.iv] = _add(Form(constant_min(loop)), _scale(leaf, loop.step))
                self.region_block(loop.body, env)
            elif Block.is_block(op):
                b = Block(op)
                if b.predicate is not None:
                    continue
                dims = [env.get(v) for v in op.operands]
                m = b.bindings
                for arg, e in zip(b.body.arguments, m.results):
                    env[arg] = None if None in dims else self.affine(e, dims)
                self.region_block(b.body, env)
            elif len(op.results) == 1 and isinstance(
                op.results[0].type, (ir.IndexType, ir.IntegerType)
            ):
                form = self.value(op, env)
                if form is not None:
                    env[op.results[0]] = form

    def check(self, op, env):
        load = op.name == "memref.load"
        buf = op.operands[0 if load else 1]
        shape = ir.MemRefType(buf.type).shape
        for axis, (v, n) in enumerate(zip(list(op.operands)[1 if load else 2 :], shape)):
            form = env.get(v)
            if form is None or n < 0 or n == ir.ShapedType.get_dynamic_size():
                continue
            lo, hi = form.bounds(self.top)
            outside = lo >= n or hi < 0
            if outside or (form.exact() and (hi >= n or lo < 0)):
                raise _error(op, buf, axis, lo, hi, n, load)


def _error(op, buf, axis, lo, hi, n, load) -> BuildError:
    if isinstance(buf.owner, ir.Block):
        name = buffer_name(buf, f"arg{ir.BlockArgument(buf).arg_number}")
    else:
        name = buffer_name(buf, "buffer")
    values = f"is {lo}" if lo == hi else f"takes the values [{lo}, {hi}]"
    return BuildError(
        f"out of bounds memory access on buffer {name!r} dimension {axis}: the "
        f"{'load' if load else 'store'}'s index {values}, outside the range [0, {n}) (build "
        f"with debug=True, or run --bounds-check, to check accesses at run time instead)",
        source_loc(op),
        [(f"buffer {name!r} is defined here", SourceLoc.of(buf.location))],
    )
