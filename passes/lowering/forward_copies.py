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

A tile qualifies when:
- it is a `memref.alloca` whose only uses are one `memref.store` (the copy) and one
  `memref.load` (the read);
- the copy stores the value of a `memref.load` of a buffer whose every use reads it (no store,
  view or call: nothing changes it between the copy and the read), in the innermost body of a
  perfect nest of loops (constant bounds from 0, step 1), one loop per dim of the tile, each
  indexing its dim (the variable itself or an identity `affine.apply` of it); that body holds
  only the load, the store and `affine.apply`s of the nest's variables and values from outside
  it;
- the read is in an op after the copy nest in the same block, and the loops between that block
  and the read are one per dim of the tile, each indexing its dim and of the extent the copy
  loop of that dim has (so each element the copy wrote is read once, in the same pass);
  `affine.if`s between them may skip some.

The read then loads the buffer at the copy's index with each copy variable replaced by the
reader's loop of the same dim (the copy's `affine.apply`s are cloned at the read).
"""

from typing import NamedTuple, Optional

from mlir import ir
from mlir.dialects import memref

from tir_mlir.analysis.linear import value_linear
from tir_mlir.dialect.ops import Loop, body_ops
from tir_mlir.ir.ir_walk import walk_all
from tir_mlir.passes.lowering.auto_vectorize import _atom
from tir_mlir.passes.lowering.common import constant_loop, constant_min, defined_outside, functions

# Uses of a buffer that only read it.
_READS = ("memref.load", "vector.load", "vector.transfer_read", "vector.gather", "affine.load")


class _Plan(NamedTuple):
    tile: ir.Operation
    nest: ir.Operation  # the copy nest's outermost loop
    source: ir.Operation  # the copy's load of the buffer
    read: ir.Operation  # the tile's one load
    to_reader: dict  # copy loop variable -> the reader's loop variable of its dim


class ForwardCopies:
    name = "forward-copies"

    def __call__(self, module: ir.Module):
        for f in functions(module):
            plans = [_plan(o) for o in walk_all(f) if o.name == "memref.alloca"]
            for plan in plans:
                if plan is not None:
                    _forward(plan)


def _plan(tile) -> Optional[_Plan]:
    users = [u.owner for u in tile.result.uses]
    stores = [u for u in users if u.name == "memref.store" and u.operands[1] == tile.result]
    loads = [u for u in users if u.name == "memref.load"]
    if len(stores) != 1 or len(loads) != 1 or len(users) != 2:
        return None
    store, read = stores[0].operation, loads[0].operation
    source = store.operands[0].owner
    if isinstance(source, ir.Block):
        return None
    source = source.operation
    if source.name != "memref.load" or source.parent != store.parent:
        return None
    if len(list(source.result.uses)) != 1 or not _read_only(source.operands[0]):
        return None
    copy_loops = _index_loops(list(store.operands)[2:], store)
    if copy_loops is None or not _copy_body(store, source, copy_loops):
        return None
    nest = _outermost(copy_loops)
    read_loops = _index_loops(list(read.operands)[1:], read)
    if read_loops is None or not _after(read, nest) or _reread(_outermost(read_loops), nest):
        return None
    if any(Loop(a).extent != Loop(b).extent for a, b in zip(copy_loops, read_loops)):
        return None
    if any(_gathered(source, a, b) for a, b in zip(copy_loops, read_loops)):
        return None
    to_reader = {_iv(a): _iv(b) for a, b in zip(copy_loops, read_loops)}
    if not all(_forwardable(v, nest, to_reader) for v in list(source.operands)[1:]):
        return None
    return _Plan(tile, nest, source, read, to_reader)


def _read_only(buffer: ir.Value) -> bool:
    return all(u.owner.name in _READS and u.owner.operands[0] == buffer for u in buffer.uses)


def _index_loops(indices: list, access) -> Optional[list]:
    """The loop indexing each dim of `access` (dim order), when the loops enclosing it, up to
    the first one indexing no dim, are exactly these (an `affine.if` may lie between); each
    from 0, constant bounds, step 1."""
    ivs = [_as_iv(i) for i in indices]
    if any(v is None for v in ivs) or len({id(_iv_owner(v)) for v in ivs}) != len(ivs):
        return None
    owners = [_iv_owner(v) for v in ivs]
    found = 0
    p = access.operation.parent
    while found < len(owners):
        if p is None:
            return None
        if p.name == "affine.for":
            if not any(o == p for o in owners):
                return None
            found += 1
        elif p.name != "affine.if":
            return None
        p = p.parent
    for o in owners:
        loop = Loop(o)
        if not constant_loop(loop) or constant_min(loop) != 0 or loop.step != 1:
            return None
    return owners


def _as_iv(index: ir.Value) -> Optional[ir.Value]:
    """The loop variable `index` is (itself, or an identity `affine.apply` of it)."""
    owner = index.owner
    if isinstance(owner, ir.Block):
        return index if owner.owner.name == "affine.for" else None
    if owner.name != "affine.apply" or len(owner.operands) != 1:
        return None
    amap = ir.AffineMapAttr(owner.attributes["map"]).value
    if amap.n_dims != 1 or amap.n_symbols or str(amap) != "(d0) -> (d0)":
        return None
    return _as_iv(owner.operands[0]) if isinstance(owner.operands[0].owner, ir.Block) else None


def _iv_owner(iv: ir.Value) -> ir.Operation:
    block = iv.owner
    assert isinstance(block, ir.Block)
    return block.owner.operation


def _iv(loop) -> ir.Value:
    return loop.regions[0].blocks[0].arguments[0]


def _outermost(loops: list):
    """The loop of `loops` that encloses the others."""
    for loop in loops:
        if all(o == loop or _encloses(loop, o) for o in loops):
            return loop
    raise AssertionError("the loops of an access form one chain")


def _encloses(outer, op) -> bool:
    p = op.parent
    while p is not None:
        if p == outer:
            return True
        p = p.parent
    return False


def _copy_body(store, source, loops: list) -> bool:
    """Whether the copy nest is perfect (each loop's body the next loop) and its innermost
    body holds only the load, the store and `affine.apply`s."""
    inner = store.parent
    if inner.name != "affine.for":
        return False
    for o in body_ops(inner.regions[0].blocks[0]):
        o = o.operation
        if o.name != "affine.apply" and o != store and o != source:
            return False
    p = inner
    while p.parent is not None and any(o == p.parent for o in loops):
        if len(body_ops(p.parent.regions[0].blocks[0])) != 1:
            return False
        p = p.parent
    return True


def _after(read, nest) -> bool:
    """Whether `read` is in an op after `nest` in `nest`'s block."""
    p = read
    # (an Operation compared with None raises: the bindings' __eq__ takes operations only)
    while p is not None and (p.parent is None or p.parent != nest.parent):
        p = p.parent
    return p is not None and p != nest and nest.is_before_in_block(p)


def _reread(outer, nest) -> bool:
    """Whether a loop lies between the reading loops (`outer` the outermost) and the copy's
    block: it would read every element again."""
    p = outer.parent
    while p is not None and p != nest.parent:
        if p.name != "affine.if":
            return True
        p = p.parent
    return p is None


def _gathered(source, copy_loop, read_loop) -> bool:
    """Whether `read_loop` is vectorized and the forwarded load would move by more than one
    element per step of it: the copy then serves as a transpose (a tile read across its rows
    by a vector), and forwarded, each vector gathers lanes from rows of the buffer, one cache
    set apart when the rows are 4 KiB (a 32 x 32 float tile of a transpose ran 2x slower)."""
    if Loop(read_loop).kind != "vectorized":
        return False
    strides = ir.MemRefType(source.operands[0].type).get_strides_and_offset()[0]
    iv, step = _iv(copy_loop), 0
    for index, stride in zip(list(source.operands)[1:], strides):
        form = value_linear(index, _atom)
        if form is None:
            return True
        step += form.terms.get(iv, 0) * stride
    return abs(step) > 1


def _forwardable(index: ir.Value, nest, to_reader: dict) -> bool:
    """Whether the copy's load index `index` can be computed at the read: a copy variable, a
    value from outside the nest, or an `affine.apply` of those."""
    if any(index == k for k in to_reader) or defined_outside(index, nest):
        return True
    owner = index.owner
    if isinstance(owner, ir.Block) or owner.name != "affine.apply":
        return False
    return all(any(v == k for k in to_reader) or defined_outside(v, nest) for v in owner.operands)


def _forward(plan: _Plan):
    with ir.InsertionPoint(plan.read), plan.read.location:
        indices = [_at_read(v, plan) for v in list(plan.source.operands)[1:]]
        new = memref.LoadOp(plan.source.operands[0], indices).result
    plan.read.result.replace_all_uses_with(new)
    bindings = {}
    for v in list(plan.read.operands)[1:]:
        if not isinstance(v.owner, ir.Block) and v.owner.name == "affine.apply":
            bindings[id(v.owner.operation)] = v.owner.operation
    plan.read.erase()
    # the tile's index bindings, now unused: any user of a loop variable keeps coalesce-loops off
    for op in bindings.values():
        if not list(op.result.uses):
            op.erase()
    plan.nest.erase()
    plan.tile.erase()


def _at_read(index: ir.Value, plan: _Plan) -> ir.Value:
    for k, v in plan.to_reader.items():
        if index == k:
            return v
    if defined_outside(index, plan.nest):
        return index
    apply = index.owner.clone(ip=ir.InsertionPoint(plan.read))
    for j, v in enumerate(list(apply.operands)):
        for k, r in plan.to_reader.items():
            if v == k:
                apply.operands[j] = r
    return apply.result
