"""Region analysis behind compute_at, reverse_compute_at and compute_root.

Which part of a buffer do some blocks touch in one iteration of a target loop, and which
iteration domain of a block covers it. Loop variables are numbered in a `LoopSpace`: the target
loop and the loops above it are *outer* (kept symbolic), the loops below it *inner* (relaxed to
their ranges). An access index becomes an `index.Lin` over loop numbers, split into a base (the
outer terms) plus a constant interval (the inner terms):

    Y[vi, vj]  with vi = i, vj = j_0*4 + j_1, target j_0   ->   dim0: i + [0, 0]
                                                                 dim1: j_0*4 + [0, 3]

An iter var stored (compute_at) or loaded (reverse_compute_at) with that index then ranges over
that interval; `cover` turns the per-iter-var intervals into the loops to generate. A term that
mixes outer and inner loops (a non-constant extent) is rejected with RegionError.
"""

import math
from dataclasses import dataclass
from typing import Callable, Dict, List, Optional, Sequence

from mlir import ir

from tir_mlir.analysis.shapes import buffer_shape
from tir_mlir.ir.affine_exprs import dims_of
from tir_mlir.analysis.symbolic import (
    Int,
    SymExpr,
    prove_le,
    prove_lt,
    show,
    smax,
    smin,
    substitute,
)
from tir_mlir.dialect.ops import Block, Loop, _const_result
from tir_mlir.analysis import index
from tir_mlir.analysis import structure as analysis
from tir_mlir.analysis.structure import op_of
from tir_mlir.analysis.buffer_util import NotAffine, buffer_name, buffer_scope, to_affine
from tir_mlir.analysis.linear import linear
from tir_mlir.analysis.index import Lin
from tir_mlir.analysis.read_inverse import NotInvertible, read_groups


def is_size(v: ir.Value) -> bool:
    """Whether `v` is a size of its function (docs/symbolic.md): an index argument, or an
    index value computed at the top level of the body."""
    if not isinstance(v.type, ir.IndexType):
        return False
    owner = v.owner
    if isinstance(owner, ir.Block):
        return owner.owner is not None and owner.owner.operation.name == "func.func"
    parent = owner.operation.parent
    return parent is not None and parent.operation.name == "func.func"


class RegionError(Exception):
    """The region cannot be described as base + constant interval (caller adds context)."""


@dataclass(frozen=True)
class Interval:
    """base + [lo, hi] (inclusive), base a Lin over outer loop numbers; lo and hi are ints,
    or SymExprs where an inner loop runs over a symbolic extent (`[0, n - 1]`)."""

    base: Lin
    lo: Int
    hi: Int

    @property
    def extent(self) -> Int:
        return self.hi - self.lo + 1

    def start(self, loop: Callable[[int], ir.AffineExpr]) -> ir.AffineExpr:
        """base + lo, outer loop k read as loop(k): the index of a copy's first element (a
        copy of a region with a symbolic start is refused before it is built)."""
        assert isinstance(self.lo, int), self.lo
        return index.to_affine(self.base, loop) + self.lo

    def union(self, other: "Interval") -> "Interval":
        diff = other.base + self.base.scale(-1)
        if not diff.is_const:
            raise RegionError("the accessed regions differ by a non-constant offset")
        d = diff.const
        return Interval(self.base, _min(self.lo, other.lo + d), _max(self.hi, other.hi + d))


def _min(a: Int, b: Int) -> Int:
    if isinstance(a, int) and isinstance(b, int):
        return min(a, b)
    got = smin(a, b)
    if got is None:
        raise RegionError(f"cannot tell which of {show(a)} and {show(b)} is smaller")
    return got


def _max(a: Int, b: Int) -> Int:
    if isinstance(a, int) and isinstance(b, int):
        return max(a, b)
    got = smax(a, b)
    if got is None:
        raise RegionError(f"cannot tell which of {show(a)} and {show(b)} is larger")
    return got


class LoopSpace:
    """Numbers loop IVs; the first `n_outer` (registered at creation) are the outer loops.
    `fold_unit_loops`: a region term over unit-extent outer loops becomes its constant."""

    fold_unit_loops = True

    def __init__(self, outer_loops: Sequence[ir.Operation]):
        self.values: List[ir.Value] = []
        self._positions: Dict[ir.Value, int] = {}  # value -> its number (values' index)
        self.ranges: index.Ranges = {}
        self.exact: Dict[int, tuple] = {}  # number -> (lo, hi) of a symbolic loop
        # function-level sizes an index uses (`A[n - 1 - vi]`): symbol k of the "x" atoms
        self.symbols: List[ir.Value] = []
        self.threads = {}  # outer loop number -> its thread tag, if thread-bound
        for lp in outer_loops:
            k = self.num(Loop(lp).iv)
            if Loop(lp).thread:
                self.threads[k] = Loop(lp).thread
        self.n_outer = len(self.values)
        self.relaxed = frozenset()  # outer loops counted as inner (see relax_for)
        self.bounding = False  # may a region be relaxed to a bounding one (compute_at)

    def relax_for(self, scope: str):
        """TVM relaxes the region compute_at computes over the thread-bound outer loops whose
        threads share the buffer's storage (a "shared" buffer is computed for all threadIdx
        of a block, a "warp" one for all threadIdx.x; global buffers are not relaxed): those
        loops then count as inner."""
        self.relaxed = frozenset(
            k for k, tag in self.threads.items() if _shared_by_threads(scope, tag)
        )

    def num(self, iv: ir.Value) -> int:
        pos = self._positions
        if len(pos) != len(self.values):  # (compute_at appends its new loops directly)
            pos.clear()
            pos.update((v, k) for k, v in reversed(list(enumerate(self.values))))
        k = pos.get(iv)
        if k is not None:
            return k
        owner = iv.owner
        if not isinstance(owner, ir.Block) or owner.owner.operation.name != Loop.OP_NAME:
            raise RegionError("a block binding uses a value that is not a loop variable")
        a = owner.owner.attributes
        lo, end = _const_result(a["lowerBoundMap"]), _const_result(a["upperBoundMap"])
        if lo is None or end is None:  # (Loop's accessors explain why they are not)
            lp = Loop(owner.owner)
            lo, end = lp.min, lp.min + lp.extent
        self.values.append(iv)
        k = pos[iv] = len(self.values) - 1
        if isinstance(lo, int) and isinstance(end, int):
            self.ranges[k] = (lo, end - 1)
        else:  # `range(n)`: simplification sees an open range, regions the exact one
            self.ranges[k] = (
                lo if isinstance(lo, int) else -index.UNKNOWN,
                end - 1 if isinstance(end, int) else index.UNKNOWN,
            )
            self.exact[k] = (lo, end - 1)
        return k

    def symbol_lin(self, v: ir.Value) -> Lin:
        """A size of the function (`n`), as the "x" atom of its symbol."""
        k = next((k for k, s in enumerate(self.symbols) if s == v), None)
        if k is None:
            self.symbols.append(v)
            k = len(self.symbols) - 1
        return index.symbol(k)

    def block_bindings(self, block: Block) -> list:
        """The block's binding expressions, their symbols renumbered as this space's."""
        results = list(block.bindings.results)
        syms = block.symbols
        if not syms:
            return results
        pos = [
            ir.AffineSymbolExpr.get(
                self.symbols.index(v) if any(v == s for s in self.symbols) else self._add_symbol(v)
            )
            for v in syms
        ]
        dims = [ir.AffineDimExpr.get(k) for k in range(len(block.dims))]
        return [substitute(e, dims, pos) for e in results]

    def _add_symbol(self, v: ir.Value) -> int:
        self.symbols.append(v)
        return len(self.symbols) - 1

    def _exact_atom(self, atom: tuple):
        """(lo, hi) of an atom this space knows exactly (a symbolic loop, a size), else None."""
        if atom[0] == "v" and atom[1] in self.exact:
            return self.exact[atom[1]]
        if atom[0] == "s":
            k: int = atom[1]
            value = SymExpr.symbol(self.symbols[k])
            return value, value
        if atom[0] == "x" and not dims_of(atom[1]):
            value = SymExpr.from_affine(atom[1], self.symbols)
            return value, value
        return None

    def bounds(self, e: Lin) -> tuple:
        """(lo, hi) of `e`: ints, or SymExprs over the symbolic loops' exact ranges and the
        sizes it uses."""
        if not (self.exact or self.symbols) or all(self._exact_atom(a) is None for a, _ in e.terms):
            return index.bounds(e, self.ranges)
        lo = hi = e.const
        rest = []
        for atom, c in e.terms:
            known = self._exact_atom(atom)
            if known is not None:
                alo, ahi = known
                lo, hi = (lo + c * alo, hi + c * ahi) if c > 0 else (lo + c * ahi, hi + c * alo)
            else:
                rest.append((atom, c))
        rlo, rhi = index.bounds(Lin(tuple(rest)), self.ranges)
        if abs(rlo) >= index.UNKNOWN or abs(rhi) >= index.UNKNOWN:
            raise RegionError("the region of a symbolic loop is not bounded")
        return lo + rlo, hi + rhi

    def is_outer(self, k: int) -> bool:
        return k < self.n_outer and k not in self.relaxed

    def binding_lins(self, block: Block) -> List[Lin]:
        """Each iter var's binding as a Lin over loop numbers."""
        dims = [index.var(self.num(d)) for d in block.dims]
        try:
            return [index.from_affine(e, dims, self.ranges) for e in self.block_bindings(block)]
        except ValueError as e:
            raise RegionError(str(e)) from None

    def split(self, e: Lin) -> Interval:
        """base (outer terms) + constant interval (inner terms)."""
        plain = self._split_plain(e)
        return plain if plain is not None else self._split_terms(e)

    def _split_terms(self, e: Lin) -> Interval:
        base, inner, relaxed_extra = Lin(), Lin((), e.const), []
        for atom, c in e.terms:
            vs = _vars(atom)
            term = Lin(((atom, c),))
            if all(self.is_outer(v) for v in vs):
                lo, hi = self.bounds(term)
                # a term over unit-extent loops is a constant (TVM: `vn = T.axis.spatial(1, 0)`)
                fold = lo == hi and isinstance(lo, int) and self.fold_unit_loops
                base = base + (index.const(lo) if fold else term)
            elif not any(self.is_outer(v) for v in vs):
                inner = inner + term
            elif not self.bounding:
                raise RegionError("the region extent depends on the outer loops")
            else:  # the extent depends on the outer loops: TVM's bounding region
                b, lo, hi = self._relax_mixed(atom, c)
                base, inner = base + b, inner + index.const(lo)
                relaxed_extra.append(hi - lo)
        lo, hi = self.bounds(inner)
        return Interval(base, lo, hi + sum(relaxed_extra))

    def _split_plain(self, e: Lin) -> Optional[Interval]:
        """`split` of a sum of plain loop variables (the common case), without its Lin
        arithmetic; None for any other Lin."""
        base, inner, const = [], [], 0
        ranges = self.ranges
        for atom, c in e.terms:
            if atom[0] != "v" or not c:
                return None
            if self.is_outer(atom[1]):
                lo, hi = ranges.get(atom[1], (-(1 << 40), 1 << 40))
                if lo == hi and self.fold_unit_loops and atom[1] not in self.exact:
                    const += c * lo
                else:
                    base.append((atom, c))
            else:
                inner.append((atom, c))
        lo, hi = self.bounds(Lin(tuple(inner), e.const))
        return Interval(Lin(tuple(base), const), lo, hi)

    def _relax_mixed(self, atom, c: int):
        """A term mixing outer and inner loops, as (base over the outer loops, lo, hi):
        `k * ((Xo + Xi) // d)` starts at `k * ((Xo + min Xi) // d)` and spans at most
        ceil((max Xi - min Xi) / d) + 1 values; any other term its whole range."""
        if atom[0] == "div" and c > 0 and all(a[0] == "v" for a, _ in atom[1].terms):
            x, d = atom[1], atom[2]
            xo = Lin(tuple((a, k) for a, k in x.terms if self.is_outer(a[1])), x.const)
            xi = Lin(tuple((a, k) for a, k in x.terms if not self.is_outer(a[1])))
            if all(k > 0 for _, k in xi.terms):
                ilo, ihi = index.bounds(xi, self.ranges)
                g = math.gcd(x.const, *(k for _, k in xo.terms))
                if d % g == 0 and 0 <= ilo and ihi < g:
                    # xo is a multiple of g and d: xi never carries into the next quotient
                    # (`(i_0 * 8 + i_1) // 16` with i_1 < 8 is `i_0 // 2`), as TVM finds
                    xg = Lin(tuple((a, k // g) for a, k in xo.terms), xo.const // g)
                    return index.floordiv(xg, d // g, self.ranges).scale(c), 0, 0
                # xo = d * q + r: where every r gives the same first quotient, the start is
                # q plus a constant and the span is exact over r's range (TVM's
                # `(c_o * 360 + c_i) // 16` over c_o < 2 starts at `c_o * 22`, 23 values)
                q = Lin(tuple((a, k // d) for a, k in xo.terms if k // d), xo.const // d)
                r = Lin(tuple((a, k % d) for a, k in xo.terms if k % d), xo.const % d)
                rlo, rhi = index.bounds(r, self.ranges)
                if (
                    isinstance(rlo, int)
                    and isinstance(rhi, int)
                    and (rlo + ilo) // d == (rhi + ilo) // d
                ):
                    first = (rlo + ilo) // d
                    return (q + index.const(first)).scale(c), 0, c * ((rhi + ihi) // d - first)
                start = index.floordiv(xo + index.const(ilo), d, self.ranges).scale(c)
                return start, 0, c * (-(-(ihi - ilo) // d))
        lo, hi = index.bounds(Lin(((atom, c),)), self.ranges)
        return Lin(), lo, hi

    def outer_bounds(self, e: Lin):
        return self.bounds(e)


# runtime::StorageRank and ThreadScope rank, as TVM orders them
_STORAGE_RANK = (("global", 0), ("shared", 1), ("warp", 2), ("local", 3))
_THREAD_RANK = (("blockIdx", 0), ("threadIdx", 1), ("vthread", 1))


def _shared_by_threads(scope: str, tag: str) -> bool:
    srank = next((r for p, r in _STORAGE_RANK if scope.startswith(p)), 4)
    trank = next((r for p, r in _THREAD_RANK if tag.startswith(p)), None)
    if trank is None or srank == 0:
        return False
    if srank == 2:  # warp memory: only threadIdx.x
        return tag == "threadIdx.x"
    return srank <= trank


def _vars(atom) -> set:
    if atom[0] == "v":
        return {atom[1]}
    if atom[0] == "x":
        return set(dims_of(atom[1]))
    if atom[0] == "s":
        return set()
    out = set()
    for a, _ in atom[1].terms:
        out |= _vars(a)
    return out


def access(op: ir.Operation):
    """(buffer, index values) of a memref.load / memref.store."""
    op = op_of(op)
    ops = list(op.operands)
    return (ops[0], ops[1:]) if op.name == "memref.load" else (ops[1], ops[2:])


def iter_var_of(block: Block, value: ir.Value) -> Optional[int]:
    """The iter var number when `value` is an iter var of `block` (body or init copy)."""
    owner = value.owner
    if isinstance(owner, ir.Block) and op_of(owner.owner) == block.op:
        return ir.BlockArgument(value).arg_number
    return None


def index_lins(
    space: LoopSpace,
    block: Block,
    op: ir.Operation,
    lenient: bool = False,
    bind: Optional[List[Lin]] = None,
) -> list:
    """The indices of an access inside `block`, as Lins over loop numbers (`bind`: the
    block's `space.binding_lins`, when the caller has it)."""
    bind = space.binding_lins(block) if bind is None else bind

    def leaf_lin(leaf):
        k = iter_var_of(block, leaf)
        if k is None and is_size(leaf):
            return space.symbol_lin(leaf)
        if k is None and isinstance(space, NestedSpace):
            return space.value_lin(leaf)  # a nested block's iter var (or a loop's)
        if k is None:
            raise RegionError("an index uses a value that is not an iter var of the block")
        return bind[k]

    return lins_of(op, leaf_lin, space.ranges, lenient)


def lins_of(op: ir.Operation, leaf_lin, ranges: index.Ranges, lenient: bool = False) -> list:
    """The indices of a load/store as Lins, each leaf value (loop or iter var) given by
    `leaf_lin`; `lenient`: None for an index that is not affine (its whole dimension)."""
    out = []
    for v in access(op)[1]:
        leaves: list = []
        try:
            expr = to_affine(v, leaves)
        except NotAffine as e:
            if lenient:
                out.append(None)
                continue
            raise RegionError(str(e)) from None
        subs = [leaf_lin(leaf) for leaf in leaves]
        try:
            out.append(index.from_affine(expr, subs, ranges))
        except ValueError as e:
            raise RegionError(str(e)) from None
    return out


def accesses_of(block: Block, buffers: Sequence[ir.Value], kind: str) -> List[ir.Operation]:
    """The block's memref loads ("load") or stores ("store") of any of `buffers`."""
    name = "memref." + kind
    out = []

    def visit(o):
        if o.name == name and any(access(o)[0] == b for b in buffers):
            out.append(o)
        return ir.WalkResult.ADVANCE

    block.op.walk(visit, ir.WalkOrder.PRE_ORDER)
    return out


def touched_region(
    space: LoopSpace, blocks: Sequence[Block], buffer: ir.Value, kind: str
) -> Optional[List[Interval]]:
    """Union over the blocks' loads/stores of `buffer`: one Interval per buffer dim, relaxed
    over the thread loops sharing the buffer's scope for what loads read (compute_at)."""
    space.relax_for(buffer_scope(buffer) if kind == "load" else "global")
    # what consumers read may be over-approximated (the producer computes more); what
    # producers wrote may not (the consumer would read what is not written yet)
    space.bounding = kind == "load"
    region = None
    for blk in blocks:
        given = _annotated(space, blk, buffer, kind)
        if given is not None:  # annotate_buffer_access's region stands for the reads
            region = given if region is None else [a.union(b) for a, b in zip(region, given)]
            continue
        shape = buffer_shape(buffer)
        ops = accesses_of(blk, [buffer], kind)
        bind = space.binding_lins(blk) if ops else None
        for op in ops:
            # what a load reads may be over-approximated: a non-affine index (`T.Cast("int32",
            # T.floor(...))`) reads anywhere in its dimension, as TVM relaxes it
            dims = [
                Interval(Lin(), 0, shape[d] - 1) if e is None else space.split(e)
                for d, e in enumerate(index_lins(space, blk, op, kind == "load", bind))
            ]
            region = dims if region is None else [a.union(b) for a, b in zip(region, dims)]
    return region


def _annotated(space: LoopSpace, blk: Block, buffer: ir.Value, kind: str):
    """The block's explicit region of `buffer` (annotate_buffer_access), as Intervals, or
    None. TVM's compute_at reads a consumer's region from its T.reads, so it follows it."""
    from tir_mlir.ir import region_overrides as overrides

    which = "read" if kind == "load" else "write"
    if f"explicit_{which}_region" not in blk.annotations:  # (loop_partition's: printing only)
        return None
    ranges = overrides.explicit(blk.op, which).get(buffer_name(buffer))
    if ranges is None:
        return None
    bind = space.binding_lins(blk)
    out = []
    for lo, ext in ranges:
        iv = space.split(index.from_affine(lo, bind, space.ranges))
        out.append(Interval(iv.base, iv.lo, iv.hi + ext - 1))
    return out


class NestedSpace(LoopSpace):
    """A LoopSpace where an index or a binding may use the iter vars of any block around it
    (a blockized block's too): each stands for its binding."""

    def binding_lins(self, block: Block) -> List[Lin]:
        """Each iter var's binding over loop numbers, through the iter vars of the blocks
        around it (a blockized block's)."""
        dims = [self.value_lin(d) for d in block.dims]
        try:
            return [index.from_affine(e, dims, self.ranges) for e in self.block_bindings(block)]
        except ValueError as e:
            raise RegionError(str(e)) from None

    def value_lin(self, v: ir.Value) -> index.Lin:
        """A loop variable, or an iter var of a block (in its body or its init) as its
        binding."""
        pos = self._positions
        k = pos.get(v) if len(pos) == len(self.values) else None
        if k is not None:  # a loop variable already numbered
            return Lin(((("v", k), 1),))
        owner = v.owner
        op = owner.owner.operation if isinstance(owner, ir.Block) else None
        if is_size(v):
            return self.symbol_lin(v)
        if op is None or op.name != Block.OP_NAME:
            return Lin(((("v", self.num(v)), 1),))
        blk = Block(op)
        dims = [self.value_lin(d) for d in blk.dims]
        try:
            return index.from_affine(
                self.block_bindings(blk)[ir.BlockArgument(v).arg_number], dims, self.ranges
            )
        except ValueError as e:
            raise RegionError(str(e)) from None


def access_region(space: "NestedSpace", ops) -> List[Interval]:
    """The union over the accesses `ops` of what they touch in one iteration of the outer
    loops: one Interval per buffer dimension."""
    region: Optional[List[Interval]] = None
    for op in ops:
        dims = [space.split(e) for e in lins_of(op, space.value_lin, space.ranges)]
        region = dims if region is None else [a.union(b) for a, b in zip(region, dims)]
    if region is None:
        raise RegionError("there is no access to describe")
    return region


def region_inside(space: "NestedSpace", region: List[Interval], shape) -> bool:
    """Whether `region` (from `access_region` over `space`) provably lies inside a buffer of
    `shape` over every value of the outer loops (over sizes: `n - 1 < n`)."""
    for iv, n in zip(region, shape):
        lo, hi = space.outer_bounds(iv.base)
        if not (prove_le(0, lo + iv.lo) and prove_lt(hi + iv.hi, n)):
            return False
    return True


def iter_var_intervals(
    block: Block,
    regions: Dict[ir.Value, List[Interval]],
    kind: str,
    conflicts_ok: bool,
    space: Optional[LoopSpace] = None,
) -> Dict[int, Interval]:
    """Spread buffer regions (buffer -> one Interval per dim) onto the block's iter vars
    through its accesses (`kind`) of those buffers. An index is a plain iter var, or (given
    `space`) the access is a bijective fusion / split of iter vars (read_inverse.py) whose
    region is a box of each fused iterator."""
    out: Dict[int, Interval] = {}
    for buf, region in regions.items():
        ops = accesses_of(block, [buf], kind)
        if any(_block_of(op) != op_of(block.op) for op in ops):
            # a blockized block: its accesses are its inner blocks'; its own region of the
            # buffer (its T.writes / T.reads) is what maps onto its iter vars
            per_op = [_region_intervals(block, buf, kind, region, space)]
        else:
            per_op = [_access_intervals(block, op, region, space) for op in ops]
        for found in per_op:
            for k, iv in found.items():
                if k in out and out[k] != iv:
                    if not conflicts_ok:
                        raise RegionError(
                            f"iter var {block.iter_names[k]} is bound to two different regions"
                        )
                    iv = out[k].union(iv)
                out[k] = iv
    return out


def _block_of(op) -> ir.Operation:
    p = op.parent
    while not analysis.is_block(p):
        p = p.parent
    return op_of(p)


def _region_intervals(
    block: Block, buf, kind: str, region: List[Interval], space: Optional["LoopSpace"]
) -> Dict[int, Interval]:
    """Iter var intervals from the block's own region of `buf` (TVM's view of a blockized
    block): each dimension `c * v + off` of extent at most c (disjoint tiles, one per value of
    iter var v) or a constant; the needed `region` picks the tiles it meets."""
    from tir_mlir.ir.regions import block_regions

    regs = block_regions(block.op)
    entry = next(r for r in (regs.writes if kind == "store" else regs.reads) if r.buffer == buf)
    n = len(block.iter_types)
    out: Dict[int, Interval] = {}
    for (mn, ext), need in zip(entry.ranges, region):
        lin = linear(mn)
        if lin is None or any(d >= n for d in lin.terms) or len(lin.terms) > 1:
            raise RegionError(
                f"its region of the buffer is not one iter var's tiles "
                f"({mn} of extent {ext}), so its iteration domain cannot be "
                f"derived"
            )
        if not lin.terms:
            continue
        ((k, c),) = lin.terms.items()
        if c <= 0 or ext > c or space is None:
            raise RegionError(
                f"its region of the buffer ({mn} of extent {ext}) is not "
                f"disjoint tiles of an iter var, so its iteration domain cannot "
                f"be derived"
            )
        # the tiles met by start + [0, size): from start // c, as many more as the largest
        # start % c (a multiple of g, the gcd of c and start's coefficients, plus a rest)
        # lets the region reach
        if not isinstance(need.lo, int):
            raise RegionError(f"the region needed of the buffer starts at {need.lo}")
        start = need.base + index.const(need.lo - lin.const)
        g = math.gcd(c, *(x for _, x in start.terms))
        more = (c - g + start.const % g + need.hi - need.lo) // c
        f = math.gcd(g, start.const)  # (a * f) // (c * f) = a // c
        first = Lin(tuple((a, x // f) for a, x in start.terms), start.const // f)
        iv = Interval(index.floordiv(first, c // f, space.ranges), 0, more)
        if k in out and out[k] != iv:
            raise RegionError(f"iter var {block.iter_names[k]} is bound to two different regions")
        out[k] = iv
    return out


def _access_intervals(block: Block, op, region: List[Interval], space) -> Dict[int, Interval]:
    ks = [iter_var_of(block, v) for v in access(op)[1]]
    plain = [k for k in ks if k is not None]
    if len(plain) == len(ks):
        return dict(zip(plain, region))
    d = ks.index(None)
    if space is None:
        raise RegionError(
            f"index {d} of its access to the buffer is not a plain iter var, so "
            f"its iteration domain cannot be derived"
        )
    args = list(block.body.arguments)
    leaves = list(args)
    mins, extents = zip(*block.domains)
    try:
        exprs = [to_affine(v, leaves) for v in access(op)[1]]
        if len(leaves) > len(args):
            raise NotAffine("it depends on a value other than the iter vars")
        groups = read_groups(
            exprs, mins, extents, block.iter_names, all_used=False, constants_ok=True
        )
    except (NotAffine, NotInvertible) as e:
        raise RegionError(
            f"its access to the buffer is not a bijective affine map of its "
            f"iter vars ({e}), so its iteration domain cannot be derived"
        ) from None
    out = {}
    for g in groups:
        out.update(_group_intervals(g, region, mins, space))
    return out


def _group_intervals(g, region, mins, space) -> Dict[int, Interval]:
    """The iter vars of one fused iterator F whose digits (pieces) span `region`."""
    digits = []
    for p in g.pieces:  # digit value = index - off (or off - index when reversed)
        r = region[p.dim]
        digits.append(
            Interval(r.base, r.lo - p.off, r.hi - p.off)
            if p.sign == 1
            else Interval(r.base.scale(-1), p.off - r.hi, p.off - r.lo)
        )
    # the lowest digits are whole, then one ranges, the ones above it are single values
    k0 = 0
    while (
        k0 < len(digits) - 1
        and digits[k0].base.is_const
        and (digits[k0].lo, digits[k0].hi) == (0, g.span(g.pieces[k0]) - 1)
    ):
        k0 += 1
    if any(x.lo != x.hi for x in digits[k0 + 1 :]):
        raise RegionError("the region is not a box of the fused iterator its access reads")
    base, lo, hi = Lin(), 0, g.pieces[k0].div - 1
    for p, x in list(zip(g.pieces, digits))[k0:]:
        base = base + x.base.scale(p.div)
        lo, hi = lo + x.lo * p.div, hi + x.hi * p.div
    order = sorted(g.coeffs, key=g.coeffs.get)
    if len(order) == 1:
        k = order[0]
        return {k: Interval(base, lo + mins[k], hi + mins[k])}
    # the iter vars below some j are whole, j takes `count` values, those above one value
    size, extents = hi - lo + 1, [g.coeffs[k] for k in order[1:]] + [g.extent]
    for j, k in enumerate(order):
        step, top = g.coeffs[k], j == len(order) - 1
        count = size // step
        if (
            size % step == 0
            and (top or count <= extents[j] // step)
            and lo % step == 0
            and base.const % step == 0
            and all(c % step == 0 for _, c in base.terms)
        ):
            break
    else:
        raise RegionError("the region is not a box of the fused iterator its access reads")
    q = Lin(tuple((a, c // step) for a, c in base.terms), base.const // step) + index.const(
        lo // step
    )
    out = {}
    for pos in range(j, len(order)):
        k = order[pos]
        c = g.coeffs[k] // step
        f = math.gcd(c, q.const, *(x for _, x in q.terms))  # (a * f) // c = a // (c/f)
        v = index.floordiv(
            Lin(tuple((t, x // f) for t, x in q.terms), q.const // f), c // f, space.ranges
        )
        if pos < len(order) - 1:
            e = extents[pos] // g.coeffs[k]
            f = math.gcd(e, v.const, *(c for _, c in v.terms))  # (a * f) % e = a % (e/f) * f
            v = index.mod(
                Lin(tuple((t, c // f) for t, c in v.terms), v.const // f), e // f, space.ranges
            ).scale(f)
            if pos == j and index.bounds(v, space.ranges)[1] + count > e:
                raise RegionError(
                    "the region wraps around a digit of the fused iterator its access reads"
                )
        n = count if pos == j else 1
        out[k] = Interval(Lin(v.terms), v.const + mins[k], v.const + mins[k] + n - 1)
    return out


@dataclass
class IterCover:
    """How one iter var is covered: binding = base + lo + (new loop, if `loop`)."""

    base: Lin
    lo: Int
    extent: Int
    loop: bool
    lower_check: bool = False  # needs predicate binding >= domain min
    upper_check: bool = False  # needs predicate binding <= domain max


def cover(
    space: LoopSpace,
    block: Block,
    intervals: Dict[int, Interval],
    preserve_unit_loops: bool,
    reverse: bool = False,
) -> List[IterCover]:
    """The loops to generate: reduction iter vars and those no region constrains take their
    full domain; spatial ones the interval (reverse_compute_at: reduction ones too, as TVM
    does: the consumer reduces in each iteration over what the producers wrote in it). Like TVM, a constant interval is clipped to the
    domain; one moving with the outer loops is kept whole, a predicate guarding what the domain
    does not contain (`ax0` over 8 with `T.where(i_0 * 8 + ax0 < 4)`)."""
    out = []
    types = block.iter_types
    for k, (dmin, dext) in enumerate(block.domains):
        iv = intervals.get(k)
        if types[k] not in ("SR" if reverse else "S") or iv is None:
            iv = Interval(Lin(), dmin, dmin + dext - 1)
        elif iv.base.is_const:
            c = iv.base.const
            iv = Interval(Lin(), _max(dmin, c + iv.lo), _min(dmin + dext - 1, c + iv.hi))
            if prove_lt(iv.hi, iv.lo):
                raise RegionError(
                    f"the region needed of iter var {block.iter_names[k]} lies outside its domain"
                )
        blo, bhi = space.outer_bounds(iv.base)
        out.append(
            IterCover(
                iv.base,
                iv.lo,
                iv.extent,
                iv.extent != 1 or preserve_unit_loops,
                not prove_le(dmin, blo + iv.lo),
                not prove_le(bhi + iv.hi, dmin + dext - 1),
            )
        )
    return out
