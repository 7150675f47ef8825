"""Stage `forward-copies` (CPU, affine level, before `auto-vectorize`): a stack tile that a
copy nest fills from a buffer nothing writes, and that is then read once per element where it
was filled, is read from that buffer instead; the copy and the tile go.

    for k0 in 0..128:                            for k0 in 0..128:
      for a, b in 4 x 4:                           for k1 in 0..4:
        T[a, b] = A[r + a, 4 k0 + b]      =>         for i2 in 0..4:
      for k1 in 0..4:                                  C[r + i2] += A[r + i2, 4 k0 + k1] * ...
        for i2 in 0..4:
          C[r + i2] += T[i2, k1] * ...

`cache_read(..., "local")` at a loop whose body reads each element of the tile once gives this
shape. The copy buys nothing there (every element is loaded from the buffer once either way)
and costs more than its own loads: the nest around the reads is no longer perfect, so the
stages that take a perfect nest (`auto-vectorize`'s rule that leaves an integer dot's rows as
carried sums, `coalesce-loops`) leave it, and the rows become lanes gathered from the tile one
byte at a time (an int8 dot 1024 x 512 with `cache_read` at `k0` of a split `k`, several times
slower than the same schedule without the cache step: benchmarks/README.md, "session 11, int8").
TVM's LLVM reaches the same code when it can promote the tile (SROA of its 16 bytes).

A `cache_read(..., "global")` at the outer loop of a split reduction gives the same shape
with more to it: a conv2d NHWC's 16 channels of A copied at `rc0` (the tile also spans the
window's rows and columns, indexed by loops outside the copy) and read by `rc1 * 2 + rc2`, with
the output columns unrolled around it, one copy nest and one read per unrolled copy of the body
(0631 of seed 1021720963: the copies stored a zmm and the reads took single floats from it).

Every store of a `memref.alloca` tile must be a copy and every load must read one:
- a copy stores the value of a `memref.load`; its nest is the loops around the store whose
  variables index the tile, up to the first whose body holds more than the next loop (an
  `affine.if` may lie between: a guarded copy);
- a read reads the nearest copy nest before it in an enclosing block (no other copy nest runs
  between them).

A read is forwarded when its copy can go:
- the copy's buffer is read-only (every use of it reads it: nothing changes it between the
  copy and the read), its nest is perfect and unguarded, its innermost body holds only the
  load, the store, `affine.apply`s and constants, and each of its loops (constant bounds from
  0, step 1) is the whole variable part of one tile dim (coefficient 1, one loop per dim);
- the loops between the copy's block and its reads read no more elements than the copy wrote,
  all its reads together (else the copy is a reused tile and stays: four unrolled copies of a
  matmul's column loop each reading a cached row of A whole); `affine.if`s may skip some; a
  read in the same block as an earlier one at an index of the same forms reads nothing more
  (SiLU's `X * sigmoid(X)` loads each element twice), nor does a window sliding along the tile
  (loops that all move the read: a depthwise conv's `T[i2, i3 + i5]`), whose overlap is loaded
  again from lines the read has just loaded;
- each tile index of the read is the copy's with, for a copy loop, a linear form of the reading
  loops' variables in its place whose range lies within the copy loop's (so each element read
  is one the copy wrote); the outer terms cancel;
- no vectorized reading loop would move the forwarded load by more than one element a step,
  unless its lanes are rows of integer sums that gather another buffer already (`_integer_rows`:
  an int8 dot's 4 vectorized rows reading A's bytes from a `cache_read` tile filled at `k` and
  B's from B itself); forwarded, the nest is perfect and `rows-outside` runs them as scalar
  rows, each row's `k` vectorized by LLVM over contiguous bytes.

The read then loads the buffer at the copy's index with each copy variable replaced by its
form at the read (the copy's `affine.apply`s and constants are cloned there). A copy goes when
all its reads forward, the tile when every copy goes; a guarded copy keeps its reads and the
tile (a version's tail), while the other versions' copies go.
"""

from typing import NamedTuple, Optional

from mlir import ir
from mlir.dialects import affine, memref

from tir_mlir.analysis.linear import (
    Linear,
    division_atom,
    division_reads,
    through_applies,
    value_linear,
)
from tir_mlir.dialect.ops import Loop, body_ops
from tir_mlir.ir.ir_walk import walk_all
from tir_mlir.passes.lowering.auto_vectorize import _strides
from tir_mlir.passes.lowering.common import (
    constant_extent,
    constant_loop,
    constant_min,
    defined_outside,
    functions,
    iv_range,
)
from tir_mlir.passes.lowering.storage_align import ALIGN_ATTR

# Uses of a buffer that only read it.
_READS = ("memref.load", "vector.load", "vector.transfer_read", "vector.gather", "affine.load")


class _Copy(NamedTuple):
    nest: ir.Operation  # the copy nest's outermost loop
    source: ir.Operation  # the copy's load of the buffer
    store: ir.Operation  # the copy's store into the tile
    loops: list  # the copy loops, outermost first
    exact: bool  # whether it is a copy that can go (else its reads keep it)


class _Pair(NamedTuple):
    copy: _Copy
    read: ir.Operation  # a load of the tile after the copy nest
    to_reader: Optional[dict]  # copy variable -> its form over the reading loops' variables


class _Plan(NamedTuple):
    tile: Optional[ir.Operation]  # None when a copy stays (the tile with it)
    copies: list  # the copies that go
    pairs: list  # the reads forwarded


class ForwardCopies:
    name = "forward-copies"
    tiles = ("memref.alloca",)  # the buffers it looks at

    def __call__(self, module: ir.Module):
        for f in functions(module):
            plans = [_plan(o) for o in walk_all(f) if o.name in self.tiles and self.takes(o)]
            for plan in plans:
                if plan is not None:
                    _forward(plan)

    def takes(self, tile) -> bool:
        """Whether the stage looks at buffer `tile` (of `tiles`)."""
        return True


class ForwardBufferCopies(ForwardCopies):
    """`forward-copies` before `spatial-out` and `loop-interchange`, on the function's buffers
    as `tir-to-affine` left them (a `cache_read`'s buffer is the whole buffer there, a
    `memref.alloc`, or a `memref.alloca` when small): a copy nest `compute_at` inside a
    reduction band keeps the band imperfect, and `loop-interchange` takes perfect bands only."""

    name = "forward-buffer-copies"
    tiles = ("memref.alloc", "memref.alloca")

    def takes(self, tile) -> bool:
        """Not a buffer the schedule aligned (`storage_align`): its layout is `storage-pad`'s,
        after `compact-buffers`, and the copy is `forward-copies`' to judge there."""
        return ALIGN_ATTR not in tile.attributes


def _plan(tile) -> Optional[_Plan]:
    """The copies that go and the reads they forward, when every store of the tile is a copy
    nest and each load reads the nearest copy nest before it (one copy per unrolled copy of a
    loop body is usual). A copy goes when all its reads forward; the tile, when all copies go."""
    users = [u.owner.operation for u in tile.result.uses if u.owner.name != "memref.dealloc"]
    stores = [u for u in users if u.name == "memref.store" and u.operands[1] == tile.result]
    loads = [u for u in users if u.name == "memref.load"]
    if not stores or not loads or len(stores) + len(loads) != len(users):
        return None
    copies = [c for c in map(_copy, stores) if c is not None]
    if len(copies) != len(stores):
        return None
    pairs = []
    for read in loads:
        copy = _copy_of(read, copies)
        if copy is None:
            return None
        pairs.append(_Pair(copy, read, _forwarding(read, copy) if copy.exact else None))
    kept = {id(p.copy) for p in pairs if p.to_reader is None}
    # (the reads of one copy together read no more elements than it wrote: an unrolled body's
    # copies of the read each walking the whole tile make it a reused tile)
    for copy in copies:
        reads = _distinct([p for p in pairs if p.copy is copy and p.to_reader is not None])
        if sum(_elements_read(p, copy) for p in reads) > _trips(copy.loops):
            kept.add(id(copy))
    read = {id(p.copy) for p in pairs}
    gone = [c for c in copies if id(c) not in kept and (id(c) in read or not kept)]
    pairs = [p for p in pairs if id(p.copy) not in kept]
    if not pairs:
        return None
    return _Plan(None if kept else tile, gone, pairs)


def _distinct(reads: list) -> list:
    """`reads` less each that loads what one before it loads, in the same block at an index of
    the same forms (`X * sigmoid(X)` inlined loads X twice per element: one read of it)."""
    out, seen = [], []
    for p in reads:
        forms = _forms(list(p.read.operands)[1:])
        key = None if forms is None else [f.key() for f in forms]
        if key is None or not any(b == p.read.parent and k == key for b, k in seen):
            out.append(p)
            seen.append((p.read.parent, key))
    return out


def _copy(store) -> Optional[_Copy]:
    """`store` as a copy nest: the value of a load, stored in the loops that index the tile
    (an `affine.if` may guard it). It can go (`exact`) when the load's buffer is read-only, the
    nest is perfect and unguarded, and each of its loops (constant bounds from 0, step 1) is the
    whole variable part of one tile dim (coefficient 1, one loop per dim)."""
    source = store.operands[0].owner
    if isinstance(source, ir.Block) or source.operation.name != "memref.load":
        return None
    source = source.operation
    forms = _forms(list(store.operands)[2:])
    if forms is None:
        return None
    loops, guarded, p = [], False, store.parent
    while p is not None and (not loops or _only_op(p, loops[0])):
        if _indexing(p, forms):
            loops.insert(0, p)
        elif p.name == "affine.if" and p.parent is not None and _indexing(p.parent, forms):
            guarded = True
        else:
            break
        p = p.parent
    # (a copy over symbolic sizes, a dynamic kernel's, stays: the plan counts the elements)
    if not loops or not all(constant_loop(Loop(loop)) for loop in loops):
        return None
    exact = (
        not guarded
        and source.parent == store.parent
        and len(list(source.result.uses)) == 1
        and _read_only(source.operands[0])
        and _copy_body(store, source, loops)
        and all(_unit_loop(loop, forms) for loop in loops)
        and not any(sum(_iv(loop) in f.terms for loop in loops) > 1 for f in forms)
        and not any(_in_division(_iv(loop), forms) for loop in loops)
    )
    return _Copy(loops[0], source, store, loops, exact)


def _only_op(op, inner) -> bool:
    """Whether `inner` is all of `op`'s body (its terminator aside)."""
    ops = body_ops(op.regions[0].blocks[0])
    return len(ops) == 1 and ops[0].operation == inner


def _indexing(op, forms: list) -> bool:
    return op.name == "affine.for" and any(_iv(op) in f.terms for f in forms)


def _unit_loop(loop, forms: list) -> bool:
    """Whether `loop` runs from 0 by 1 over integer bounds and indexes one dim, by 1."""
    dims = [f.terms[_iv(loop)] for f in forms if _iv(loop) in f.terms]
    lp = Loop(loop)
    return dims == [1] and constant_loop(lp) and constant_min(lp) == 0 and lp.step == 1


def _copy_of(read, copies: list) -> Optional[_Copy]:
    """The copy `read` reads: the nearest copy nest before it in an enclosing block; None when
    another copy runs between them."""
    before = [c for c in copies if _after(read, c.nest)]
    if not before:
        return None
    copy = max(before, key=lambda c: (_depth(c.nest), _order(c.nest)))
    reader = _ancestor_in(read, copy.nest.operation.block)
    for other in copies:
        at = _ancestor_in(other.nest, copy.nest.operation.block)
        if other is not copy and at is not None and copy.nest.is_before_in_block(at):
            if at == reader or at.is_before_in_block(reader):
                return None
    return copy


def _forwarding(read, copy: _Copy) -> Optional[dict]:
    """Copy variable -> its form at `read`, when the read can load the buffer itself: the
    loops between the copy's block and the read read no more elements than the copy wrote
    (`_elements_read`; else the copy is a reused tile), each element read is one the copy
    wrote, and no vectorized reading loop would gather across the buffer's rows."""
    reading = _reading_loops(read, copy.nest.parent)
    if reading is None:
        return None
    to_reader = _to_reader(copy, read, reading)
    if to_reader is None or _gathered(copy, to_reader, reading):
        return None
    if _elements_read(_Pair(copy, read, to_reader), copy) > _trips(copy.loops):
        return None
    if not all(_forwardable(v, copy.nest, to_reader) for v in list(copy.source.operands)[1:]):
        return None
    return to_reader


def _elements_read(pair: _Pair, copy: _Copy) -> int:
    """The elements of the tile `pair`'s read takes over its loops: each pass of the loops that
    do not move it (reading the tile again) takes the elements that the loops moving it reach,
    at most the tile's. A window sliding along the tile (`T[i2, i3 + i5]` under `i5, i2, i3`,
    a depthwise conv's 8 x 10 row tile read by its 3 x 8 x 8 window steps) reads a neighbour
    again from the lines the same loops have just loaded: from the buffer as cheap as from the
    tile, where the copy stores pieces (a ymm and 8 bytes per 10-float row) that the shifted
    vector loads each straddle, so they wait for the stores to retire instead of forwarding."""
    assert pair.to_reader is not None, "a read's elements are counted once it has its forms"
    reading = _reading_loops(pair.read, copy.nest.parent) or []
    moving = {v for form in pair.to_reader.values() for v in form.terms}
    inside = [r for r in reading if _iv(r) in moving]
    again = [r for r in reading if _iv(r) not in moving]
    return _trips(again) * min(_trips(inside), _trips(copy.loops))


def _to_reader(copy: _Copy, read, reading: list) -> Optional[dict]:
    """Copy loop variable -> its form over the reading loops' variables, where the read's index
    is the copy's with that form in the copy variable's place."""
    stored = _forms(list(copy.store.operands)[2:])
    loaded = _forms(list(read.operands)[1:])
    if stored is None or loaded is None:
        return None
    ivs = {_iv(r): r for r in reading}
    out = {}
    for s, r in zip(stored, loaded):
        mine = [loop for loop in copy.loops if _iv(loop) in s.terms]
        rest = s - Linear({_iv(mine[0]): 1}) if mine else s
        form = r - rest
        if not mine:
            if form.terms or form.const:
                return None
            continue
        if any(v not in ivs for v in form.terms):
            return None
        lo, hi = _span(form, ivs)
        if lo is None or hi is None or lo < 0 or hi >= constant_extent(Loop(mine[0])):
            return None
        out[_iv(mine[0])] = form
    return out


def _forms(indices: list) -> Optional[list]:
    """The linear forms of `indices` over loop variables, a floordiv or mod an atom of its
    own (a fused loop's row and column); None if one is not linear."""
    # (a division is an atom keyed by its operands' forms: equal at the copy and the read, it
    # cancels there as a loop variable outside the copy does)
    forms = [value_linear(v, through_applies(division_atom)) for v in indices]
    return None if any(f is None for f in forms) else forms


def _in_division(iv: ir.Value, forms: list) -> bool:
    """Whether `iv` is read inside a division atom of `forms`."""
    reads = (a for f in forms for t in f.terms for a in division_reads(t))
    return any(isinstance(a, ir.Value) and a == iv for a in reads)


def _span(form: Linear, ivs: dict):
    lo = hi = form.const
    for v, c in form.terms.items():
        span = iv_range(ivs[v])
        if span is None:
            return None, None
        lo += min(c * span[0], c * span[1])
        hi += max(c * span[0], c * span[1])
    return lo, hi


def _reading_loops(read, block_owner) -> Optional[list]:
    """The `affine.for`s between `block_owner`'s body and `read` (`affine.if`s may lie
    between), each over integer bounds; None if another op encloses the read there."""
    loops, p = [], read.parent
    while p is not None and p != block_owner:
        if p.name == "affine.for":
            if not constant_loop(Loop(p)):
                return None
            loops.append(p)
        elif p.name != "affine.if":
            return None
        p = p.parent
    return loops if p is not None else None


def _trips(loops: list) -> int:
    n = 1
    for loop in loops:
        n *= constant_extent(Loop(loop))
    return n


def _depth(op) -> int:
    d, p = 0, op.parent
    while p is not None:
        d, p = d + 1, p.parent
    return d


def _order(op) -> int:
    """The position of `op` in its block."""
    for i, o in enumerate(op.operation.block.operations):
        if o.operation == op:
            return i
    raise AssertionError("an op is in its block")


def _ancestor_in(op, block: ir.Block):
    """The op enclosing `op` (or `op` itself) in `block`; None if none (the block's op may
    have other blocks: an `affine.if`'s else)."""
    p = op
    # (an Operation compared with None raises: the bindings' __eq__ takes operations only)
    while p is not None and p.parent is not None:
        if p.operation.block == block:
            return p
        p = p.parent
    return None


def _read_only(buffer: ir.Value) -> bool:
    return all(u.owner.name in _READS and u.owner.operands[0] == buffer for u in buffer.uses)


def _iv(loop) -> ir.Value:
    return loop.regions[0].blocks[0].arguments[0]


def _copy_body(store, source, loops: list) -> bool:
    """Whether the copy nest is perfect (each loop's body the next loop) and its innermost
    body holds only the load, the store and `affine.apply`s."""
    inner = store.parent
    if inner.name != "affine.for":
        return False
    for o in body_ops(inner.regions[0].blocks[0]):
        o = o.operation
        if o.name not in ("affine.apply", "arith.constant") and o != store and o != source:
            return False
    p = inner
    while p.parent is not None and any(o == p.parent for o in loops):
        if len(body_ops(p.parent.regions[0].blocks[0])) != 1:
            return False
        p = p.parent
    return True


def _after(read, nest) -> bool:
    """Whether `read` is in an op after `nest` in `nest`'s block."""
    p = _ancestor_in(read, nest.operation.block)
    return p is not None and p != nest and nest.is_before_in_block(p)


def _gathered(copy: _Copy, to_reader: dict, reading: list) -> bool:
    """Whether a reading loop is vectorized and the forwarded load would move by more than one
    element per step of it: the copy then serves as a transpose (a tile read across its rows
    by a vector), and forwarded, each vector gathers lanes from rows of the buffer, one cache
    set apart when the rows are 4 KiB (a 32 x 32 float tile of a transpose ran 2x slower)."""
    vectorized = [r for r in reading if Loop(r).kind == "vectorized"]
    if not vectorized:
        return False
    strides = ir.MemRefType(copy.source.operands[0].type).get_strides_and_offset()[0]
    forms = _forms(list(copy.source.operands)[1:])
    if forms is None:
        return True
    for r in vectorized:
        step = 0
        for form, stride in zip(forms, strides):
            for iv, c in form.terms.items():
                step += c * stride * to_reader.get(iv, Linear()).terms.get(_iv(r), 0)
        if abs(step) > 1 and not _integer_rows(Loop(r), copy.store.operands[1]):
            return True
    return False


def _integer_rows(lanes: Loop, tile: ir.Value) -> bool:
    """Whether `lanes` stores integers only and already gathers a load of another buffer than
    `tile`: its lanes are rows of integer sums (an int8 dot's rows as lanes, `B[r + i1, k]`),
    which `rows-outside` runs as scalar rows once the nest is perfect, the copy gone."""
    ops = list(walk_all(lanes.op))
    stores = [o for o in ops if o.name == "memref.store"]
    if not stores or any(not isinstance(o.operands[0].type, ir.IntegerType) for o in stores):
        return False
    for o in ops:
        if o.name == "memref.load" and o.operands[0] != tile:
            strides = _strides(o, [lanes])
            if strides is not None and abs(strides[0]) > 1:
                return True
    return False


def _forwardable(index: ir.Value, nest, to_reader: dict) -> bool:
    """Whether the copy's load index `index` can be computed at the read: a copy variable, a
    value from outside the nest, a constant, or an `affine.apply` of those."""
    if any(index == k for k in to_reader) or defined_outside(index, nest):
        return True
    owner = index.owner
    if isinstance(owner, ir.Block) or owner.name not in ("affine.apply", "arith.constant"):
        return False
    return all(any(v == k for k in to_reader) or defined_outside(v, nest) for v in owner.operands)


def _forward(plan: _Plan):
    for pair in plan.pairs:
        _forward_read(pair)
    for copy in plan.copies:
        copy.nest.erase()
    if plan.tile is not None:
        for use in list(plan.tile.result.uses):
            use.owner.erase()  # (a dealloc)
        plan.tile.erase()


def _forward_read(pair: _Pair):
    with ir.InsertionPoint(pair.read), pair.read.location:
        assert pair.to_reader is not None, "_plan forwards the reads it has forms for"
        at = {k: _value(form) for k, form in pair.to_reader.items()}
        indices = [_at_read(v, pair, at) for v in list(pair.copy.source.operands)[1:]]
        new = memref.LoadOp(pair.copy.source.operands[0], indices).result
    pair.read.result.replace_all_uses_with(new)
    bindings = {}
    for v in list(pair.read.operands)[1:]:
        if not isinstance(v.owner, ir.Block) and v.owner.name == "affine.apply":
            bindings[id(v.owner.operation)] = v.owner.operation
    pair.read.erase()
    # the tile's index bindings, now unused: any user of a loop variable keeps coalesce-loops off
    for op in bindings.values():
        if not list(op.result.uses):
            op.erase()


def _value(form: Linear) -> ir.Value:
    """`form` (over loop variables) as an index at the insertion point."""
    atoms = list(form.terms)
    if form.const == 0 and len(atoms) == 1 and form.terms[atoms[0]] == 1:
        return atoms[0]
    expr = ir.AffineExpr.get_constant(form.const)
    for k, v in enumerate(atoms):
        expr = expr + ir.AffineExpr.get_dim(k) * form.terms[v]
    return affine.AffineApplyOp(ir.AffineMap.get(len(atoms), 0, [expr]), atoms).result


def _at_read(index: ir.Value, pair: _Pair, at: dict) -> ir.Value:
    for k, v in at.items():
        if index == k:
            return v
    if defined_outside(index, pair.copy.nest):
        return index
    apply = index.owner.clone(ip=ir.InsertionPoint(pair.read))
    for j, v in enumerate(list(apply.operands)):
        for k, r in at.items():
            if v == k:
                apply.operands[j] = r
    return apply.result
