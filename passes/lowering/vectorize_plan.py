"""What every value of a `T.vectorized` loop body is across the lanes, and whether running the
body once on vectors (op by op over all lanes, instead of lane by lane) computes what the loop
computes. Used by stage `vectorize-loops` (vectorize.py).

Index values get a linear form in the lane number (`LaneLinear`, a form of
tir_mlir/analysis/linear.py): `base + stride * lane`, the base the value at lane 0 (the IV
replaced by the loop's lower bound). Data values are uniform (the same on every lane) or
varying. An index value that is not linear in the lane (`lane floordiv 4`) has no form: made
by an arith op it is a varying vector of indices, fit for data and
conditions; it may not reach an address or an `affine.if`.

Legality, beyond every op having a vector form:
- No two lanes touch one address with one of the two a store (`lanes_disjoint`), so reordering
  the accesses of different lanes cannot change what a load reads or what memory holds at the
  end. A store's own lanes are written in lane order (a uniform address keeps the last lane's
  value), so a store alone is always fine. A load that follows, in the same block, a store of a
  uniform value to the same uniform address (nothing storing to that buffer between them) reads
  its own lane's value on either path (a `cache_read` at an inner loop: A_local[0, k] = A[i, k]
  and read back at once): it needs no check against the other lanes, which lets a loop whose
  body holds the inner loop run it on vectors of its lanes (outer-loop vectorization).
- Under a condition that varies across lanes (`masked`) only contiguous accesses, uniform
  loads and uniform stores of uniform values are allowed (masked vector loads/stores; the
  region runs only when some lane is on, and such a lane made the uniform access in the loop
  as well).
"""

import math
from typing import Any, Dict, Optional

from mlir import ir

from tir_mlir.analysis.linear import Linear, linear
from tir_mlir.dialect.ops import integer_set
from tir_mlir.passes.lowering.buffer_roots import root
from tir_mlir.passes.lowering.common import INTEGER_DIVISIONS, loop_iv

LANE = "lane"
# Ops applied lane-wise: the same op name on vector types.
ELEMENTWISE = {
    "arith.addf",
    "arith.subf",
    "arith.mulf",
    "arith.divf",
    "arith.negf",
    "arith.maximumf",
    "arith.minimumf",
    "arith.maxnumf",
    "arith.minnumf",
    "arith.remf",
    "arith.addi",
    "arith.subi",
    "arith.muli",
    "arith.andi",
    "arith.ori",
    "arith.xori",
    "arith.maxsi",
    "arith.minsi",
    "arith.maxui",
    "arith.minui",
    "arith.divsi",
    "arith.divui",
    "arith.remsi",
    "arith.remui",
    "arith.floordivsi",
    "arith.ceildivsi",
    "arith.shli",
    "arith.shrsi",
    "arith.shrui",
    "arith.cmpf",
    "arith.cmpi",
    "arith.select",
    "arith.extf",
    "arith.truncf",
    "arith.sitofp",
    "arith.uitofp",
    "arith.fptosi",
    "arith.fptoui",
    "arith.extsi",
    "arith.extui",
    "arith.trunci",
    "arith.bitcast",
}
# Integer division traps on a zero divisor: lanes switched off by a mask divide by 1 instead.
DIVISIONS = ELEMENTWISE & INTEGER_DIVISIONS
INDEX_CASTS = ("arith.index_cast", "arith.index_castui")


class LaneLinear(Linear):
    """sum(coefficient * leaf) + const; leaves are index values that are the same on every lane
    (or `LANE`, the lane number)."""

    __slots__ = ()

    @property
    def stride(self) -> int:
        return self.terms.get(LANE, 0)


def expr_form(expr: ir.AffineExpr, dims, symbols, lanes: int) -> Optional[LaneLinear]:
    """Linear form of an affine expression over operands with forms; None if not linear."""

    def division(kind, lhs, rhs):
        if rhs.terms or rhs.const <= 0:
            return None
        return _divide(kind, lhs, rhs.const, lanes)

    form = linear(expr, dims, symbols, division)
    return None if form is None else LaneLinear(form.terms, form.const)


def _divide(kind, x, c, lanes):
    """floordiv / mod / ceildiv of `x` by a positive constant. With x = B + s * lane, where B
    is a multiple of g = gcd(c, B's coefficients) plus r0, B mod c <= c - g + r0, so when
    r0 + s * (lanes - 1) < g no lane crosses a multiple of c: x floordiv c = B floordiv c
    (uniform) and x mod c = B mod c + s * lane (the fuse + split + vectorize pattern)."""
    if not x.terms:
        if kind is ir.AffineModExpr:
            return Linear((), x.const % c)
        return Linear((), x.const // c if kind is ir.AffineFloorDivExpr else -(-x.const // c))
    s = x.terms.get(LANE, 0)
    base = Linear({k: v for k, v in x.terms.items() if k != LANE}, x.const)
    g = math.gcd(c, *base.terms.values())
    if s and (s < 0 or kind is ir.AffineCeilDivExpr or base.const % g + s * (lanes - 1) >= g):
        return None
    key = (kind.__name__, frozenset(base.terms.items()), base.const, c)
    return Linear({key: 1, LANE: s if kind is ir.AffineModExpr else 0})


def leaves(key):
    """The index values a leaf key stands for (itself, or those of a floordiv/mod)."""
    if isinstance(key, tuple):
        for k, _ in key[1]:
            yield from leaves(k)
    elif key != LANE:
        yield key


def lanes_disjoint(a, b, inner, lanes: int) -> bool:
    """Whether two accesses (one Linear per dimension) never reach one address from two
    different lanes. Leaves in `inner` (defined inside the loop) may differ between the two."""
    for fa, fb in zip(a, b):
        keys = (set(fa.terms) | set(fb.terms)) - {LANE}
        if any(
            fa.terms.get(k, 0) != fb.terms.get(k, 0) or any(v in inner for v in leaves(k))
            for k in keys
        ):
            continue  # this dimension proves nothing
        s, diff = fa.stride, fa.const - fb.const
        if s != fb.stride:
            continue
        if s == 0:
            if diff:
                return True  # never the same address at all
            continue
        # s * (x - y) + diff = 0 needs x - y = -diff / s, a lane distance in 1 .. lanes - 1
        if diff % s or not 0 < abs(diff // s) < lanes:
            return True
    return False


class Plan:
    """The lane analysis of one vectorized loop; `ok` says whether `vectorize` may rewrite it."""

    def __init__(self, loop):
        self.lanes = loop.extent
        # index value -> its form; None: it depends on the lane, but not linearly
        self.forms: Dict[Any, Optional[LaneLinear]] = {loop.iv: LaneLinear({LANE: 1}, loop.min)}
        self.varying = set()  # data values that differ across lanes
        self.inner = set()  # index leaves defined inside the loop
        self.uniform_ifs = []  # affine/scf.if ops whose condition is the same on every lane
        # (a list: Operation hashes are not stable, equality is)
        self.accesses = []  # (is store, memref, [Linear per index])
        self.ok = self._block(loop.body, False) and self._independent()

    def stride(self, v):
        """Lane stride of an index value (None: not linear in the lane)."""
        f = self.forms.get(v)
        if f is None and v not in self.forms:
            return 0  # defined outside the loop
        return None if f is None else f.stride

    def form(self, v):
        return self.forms[v] if v in self.forms else LaneLinear({v: 1})

    def is_varying(self, v) -> bool:
        if isinstance(v.type, ir.IndexType):
            return self.stride(v) != 0
        return v in self.varying

    def _leaf(self, v):
        self.forms[v] = LaneLinear({v: 1})
        self.inner.add(v)

    def _block(self, block, masked) -> bool:
        # memref -> the address (forms) of the last store of a uniform value at a uniform
        # address in this block that no later op may have overwritten
        stored: Dict[Any, list] = {}
        for o in list(block.operations)[:-1]:
            o = o.operation
            if o.name == "memref.load" and self._own_store(o, stored):
                continue  # it reads what its own lane stored just before
            if not self._op(o, masked):
                return False
            for mem in _stored_memrefs(o):
                for kept in [m for m in stored if _may_alias(m, mem)]:
                    del stored[kept]
            if o.name == "memref.store" and not self._varying_store(o):
                stored[o.operands[1]] = self._address(o, 2)
        return True

    def _address(self, access, first):
        return [self.forms.get(v, LaneLinear({v: 1})) for v in list(access.operands)[first:]]

    def _own_store(self, load, stored) -> bool:
        """Whether `load` reads the element a store earlier in its block (in `stored`) wrote,
        the same on every lane (a uniform value at a uniform address, as a `cache_read` at an
        inner loop copies A[i, k] to A_local[0, k] and reads it back). Each lane then reads what
        it stored itself, in the loop and in the vector code alike: the load needs no check
        against the other lanes' accesses, and, run once on the vector path, reads the one
        value all lanes stored."""
        index = stored.get(load.operands[0])
        return index is not None and None not in index and self._address(load, 1) == index

    def _varying_store(self, o) -> bool:
        return self.is_varying(o.operands[0]) or any(self.stride(v) for v in list(o.operands)[2:])

    def _op(self, o, masked) -> bool:
        name = o.name
        if any(isinstance(v.type, ir.VectorType) for v in [*o.operands, *o.results]):
            return False
        if name == "affine.for":
            self._leaf(loop_iv(o))
            return self._block(o.regions[0].blocks[0], masked)
        if name == "affine.if":
            return self._affine_if(o, masked)
        if name == "scf.if":
            return self._scf_if(o, masked)
        if name in ("memref.load", "memref.store"):
            return self._access(o, masked)
        if name == "memref.prefetch":
            return True  # a hint: lane 0's address is as good as any
        if any(
            self.stride(v) is None and v not in self.varying
            for v in o.operands
            if isinstance(v.type, ir.IndexType)
        ):
            return False  # an index with no per-lane value reaches this op
        if len(o.results) != 1:
            return False
        result = o.results[0]
        if isinstance(result.type, ir.IndexType):
            return self._index_op(o, result)
        if name == "arith.constant":
            return True
        if name not in ELEMENTWISE and not name.startswith("math.") and name not in INDEX_CASTS:
            return False
        if any(self.is_varying(v) for v in o.operands):
            self.varying.add(result)
        return True

    def _index_op(self, o, result) -> bool:
        name, ops = o.name, list(o.operands)
        found = [self.form(v) for v in ops]
        forms = [f for f in found if f is not None]
        form = None
        if name == "arith.constant":
            form = LaneLinear((), ir.IntegerAttr(o.attributes["value"]).value)
        elif len(forms) != len(found):
            pass
        elif name == "affine.apply":
            m = ir.AffineMapAttr(o.attributes["map"]).value
            form = expr_form(m.results[0], forms[: m.n_dims], forms[m.n_dims :], self.lanes)
        elif name in ("arith.addi", "arith.subi"):
            a, b = forms
            form = a + (b if name == "arith.addi" else b.scale(-1))
        elif name == "arith.muli":
            a, b = forms
            form = a.scale(b.const) if not b.terms else b.scale(a.const) if not a.terms else None
        elif name == "arith.floordivsi" and not forms[1].terms and forms[1].const > 0:
            # A block body's `//` (a transform_layout'd buffer's index: B[j // 32, k, j % 32],
            # the mod being j - j // 32 * 32) divides as an affine floordiv does.
            q = _divide(ir.AffineFloorDivExpr, forms[0], forms[1].const, self.lanes)
            form = None if q is None else LaneLinear(q.terms, q.const)
        if form is not None:
            self.forms[result] = form
        elif any(self.is_varying(v) for v in ops):
            self.forms[result] = None  # depends on the lane, but not linearly:
            if name in ELEMENTWISE:  # a vector of indices, fit for data, not addresses
                self.varying.add(result)
        elif name in ELEMENTWISE or name in INDEX_CASTS or name == "affine.apply":
            self._leaf(result)  # the same on every lane: an opaque leaf
        else:
            return False
        return True

    def _affine_if(self, o, masked) -> bool:
        if len(o.results):
            return False
        iset = integer_set(o.attributes["condition"])
        forms = [self.form(v) for v in o.operands]
        found = [
            expr_form(c.expr, forms[: iset.n_dims], forms[iset.n_dims :], self.lanes)
            for c in iset.constraints
        ]
        cons = [c for c in found if c is not None]
        if len(cons) != len(found):
            return False
        if any(c.stride for c in cons):
            masked = True
        else:
            self.uniform_ifs.append(o)
        return all(self._block(r.blocks[0], masked) for r in o.regions if len(r.blocks))

    def _scf_if(self, o, masked) -> bool:
        """An `scf.if` on an i1 (a statement `if`, or `T.if_then_else` with results)."""
        if any(isinstance(r.type, ir.IndexType) for r in o.results):
            return False
        varying = self.is_varying(o.operands[0])
        if not varying:
            self.uniform_ifs.append(o)
        blocks = [r.blocks[0] for r in o.regions if len(r.blocks)]
        if not all(self._block(b, masked or varying) for b in blocks):
            return False
        for k, r in enumerate(o.results):
            if varying or any(self.is_varying(list(b.operations)[-1].operands[k]) for b in blocks):
                self.varying.add(r)
        return True

    def _access(self, o, masked) -> bool:
        store = o.name == "memref.store"
        memref = o.operands[1 if store else 0]  # (bool buffers are bytes by now)
        index = list(o.operands)[2 if store else 1 :]
        strides = [self.stride(v) for v in index]
        if None in strides:
            return False
        value = o.operands[0] if store else o.results[0]
        if isinstance(value.type, ir.IndexType):
            return False
        uniform = not any(strides)
        if (
            masked
            and not contiguous(memref, strides)
            and (not uniform or store and self.is_varying(value))
        ):
            return False
        if not store and not uniform:
            self.varying.add(value)
        self.accesses.append((store, memref, [self.form(v) for v in index]))
        return True

    def _independent(self) -> bool:
        acc = self.accesses
        return all(
            lanes_disjoint(a[2], b[2], self.inner, self.lanes)
            for i, a in enumerate(acc)
            for b in acc[i + 1 :]
            if a[1] == b[1] and (a[0] or b[0])
        )


def _stored_memrefs(op):
    """The memrefs `op` (or an op nested in it) stores to."""
    if op.name == "memref.store":
        yield op.operands[1]
    for region in op.regions:
        for block in region.blocks:
            for inner in block.operations:
                yield from _stored_memrefs(inner.operation)


def _may_alias(a, b) -> bool:
    """Whether memrefs `a` and `b` may share memory: views of one buffer, or of arguments (any
    two may alias here) or of buffers not traced back."""
    (ra, shared_a), _ = root(a, ())
    (rb, shared_b), _ = root(b, ())
    return ra is None or rb is None or ra == rb or (shared_a and shared_b)


def contiguous(memref, strides) -> bool:
    """A vector load/store: stride 1 in the last dimension, the same element in the others,
    on a buffer whose last dimension is dense (not a strided view)."""
    return (
        bool(strides)
        and strides[-1] == 1
        and not any(strides[:-1])
        and ir.MemRefType(memref.type).get_strides_and_offset()[0][-1] == 1
    )
