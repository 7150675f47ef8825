"""Stage `sink-inits` (CPU, affine level, right before `affine-to-scf`): a reduction's init
nest that sweeps a block of a buffer before the reduction nest reads it back runs instead at
the start of the reduction nest's tile loops, each tile's init right before its reduction:

    for i2, j2 in 64 x 4:                        for i2, j2 in 64 x 4:
      for i3 in 0..8:                              for i3 in 0..8:
        C[8 i2 + i3, 32 j2 : +32] = 0      =>        C[8 i2 + i3, 32 j2 : +32] = 0
    for i2, j2 in 64 x 4:                          for k in 0..1024:
      for k in 0..1024:                              for i3 in 0..8:
        for i3 in 0..8:                                C[8 i2 + i3, 32 j2 : +32] += ...
          C[8 i2 + i3, 32 j2 : +32] += ...

`decompose_reduction` at the outermost reduction loop (MetaSchedule's `RewriteReductionBlock`,
and TVM refuses a loop below a reduction loop of extent 1) gives the left form whenever the
tile loops lie inside that reduction loop: the BLAS point's `k` 1 x 1024 zeroes its task's
512 x 128 block of C (256 KiB, beyond L1) in a pass of its own, and every 8 x 32 tile then loads
its accumulators back from L2. Sunk, a tile's zeros are stored into lines its reduction loads
at once (scalar replacement's carried accumulators start from them).

The init nest is a perfect nest of constant loops whose innermost body stores a value computed
without reading memory (its constants, index arithmetic) into one buffer, the init's buffer,
and does nothing else. The reduction nest is the first op after it (in the same block, or in
the body of an extent-1 loop after it: `k_0` of a whole-`k` tile) that touches that buffer:
- it loads the buffer (a nest that only stores it is another init: the copies of an unrolled
  init, which would only fuse);
- its outer loops and the init's match, one for one (constant bounds, same step), as far as
  the reduction's loops form a perfect chain; at least one matches;
- every access of the buffer in it and the init's store are loads and stores of known index
  forms (linear in the loop variables, divisions of outer variables as atoms), and, for each
  matched loop, some buffer dimension reads `c * iv + G + H` in every one of them, with the
  same `c > 0` and the same outer part `G` (no loop variable of the nest in it) and an inner
  part `H` (inner loops, constants, a vector's lanes) within `[0, c)`: tiles of different
  iterations are disjoint, so no earlier tile's reduction sees a later tile's init;
- the ops skipped on the way read and write other buffers only (function arguments of a
  `tir.noalias` function, allocations), and call nothing.
The init's loops below the matched ones (or its body when all match) then move to the start of
the innermost matched reduction loop, its variables replaced by the reduction's; its nest goes.
"""

from typing import Optional

from mlir import ir

from tir_mlir.analysis.linear import (
    Linear,
    division_atom,
    division_reads,
    linear,
    through_applies,
    value_linear,
)
from tir_mlir.dialect.ops import Loop, body_ops
from tir_mlir.ir.ir_walk import walk_all
from tir_mlir.passes.lowering.buffer_roots import noalias_args, root
from tir_mlir.passes.lowering.common import constant_loop, functions
from tir_mlir.passes.lowering.memory_ops import ACCESSES, AFFINE_ACCESSES, no_effects

# every access of the affine level with a known address
_ACCESSES = ACCESSES | AFFINE_ACCESSES


class SinkInits:
    name = "sink-inits"

    def __call__(self, module: ir.Module):
        for f in functions(module):
            noalias = noalias_args(f)
            heads = [op for op in walk_all(f) if op.name == "affine.for" and _is_top_init(op)]
            for op in heads:  # (a sink moves the loops below the head's match, erases the rest)
                plan = _plan(op, noalias)
                if plan is not None:
                    _sink(op, *plan)


def _chain(op) -> list:
    """The loops of the perfect chain from affine.for `op` down: each body holds only the next
    loop."""
    loops = [op]
    while True:
        ops = body_ops(Loop(loops[-1]).body)
        if len(ops) != 1 or ops[0].name != "affine.for":
            return loops
        loops.append(ops[0])


def _is_top_init(op) -> bool:
    """Whether `op` heads an init nest (not a loop inside one)."""
    parent = op.parent
    return not (parent.name == "affine.for" and len(body_ops(Loop(parent).body)) == 1)


def _init_store(loops) -> Optional[ir.Operation]:
    """The one store of an init nest's innermost body, when the body reads no memory."""
    if not all(constant_loop(Loop(lp)) for lp in loops):
        return None
    ops = body_ops(Loop(loops[-1]).body)
    stores = [o for o in ops if o.name in _ACCESSES and _ACCESSES[o.name][2]]
    others = [o for o in ops if not no_effects(o)]
    return stores[0] if len(stores) == 1 and others == stores else None


def _buffer(op) -> ir.Value:
    return op.operands[_ACCESSES[op.name][0]]


def _plan(init, noalias):
    """(the reduction's matched loops, the init's matched loops), or None."""
    loops = _chain(init)
    store = _init_store(loops)
    if store is None:
        return None
    buffer = _buffer(store)
    (broot, _), direct = root(buffer, noalias)
    if broot is None or not direct:  # (a view's indices are not the buffer's)
        return None
    red = _reduction_after(init, broot, noalias)
    if red is None:
        return None
    matched = _matched(loops, _chain(red))
    if not matched:
        return None
    accesses = _accesses(red, broot)
    if accesses is None or not any(not _ACCESSES[o.name][2] for o in accesses):
        return None  # (a nest that only stores: another init, not the reduction)
    if not _disjoint(store, loops, accesses, matched):
        return None
    return [m for _, m in matched], [i for i, _ in matched]


def _touches(op, broot, noalias) -> Optional[bool]:
    """Whether `op` (with its nested ops) uses the buffer `broot`; None when it may touch it
    unseen (a call, an access of a buffer that may alias it)."""
    touched = False
    for o in [op] + walk_all(op):
        if o.name in ("func.call", "llvm.call"):
            return None
        for v in o.operands:
            if not isinstance(v.type, ir.MemRefType):
                continue
            (r, shared), _ = root(v, noalias)
            if r is None or (shared and r != broot):
                return None
            touched = touched or r == broot
    return touched


def _reduction_after(init, broot, noalias) -> Optional[ir.Operation]:
    """The first op after `init` that touches the buffer, looking into the bodies of extent-1
    loops; None when that op is not a loop or something on the way may touch it."""
    ops = _following(init)
    while ops:
        op = ops.pop(0)
        touched = _touches(op, broot, noalias)
        if touched is None:
            return None
        if not touched:
            continue
        if op.name != "affine.for" or not constant_loop(Loop(op)):
            return None
        if Loop(op).extent == 1:
            ops = body_ops(Loop(op).body)
            continue
        return op
    return None


def _following(op) -> list:
    """The ops after `op` in its block, the terminator excepted."""
    ops = body_ops(op.operation.block) if op.parent.name == "affine.for" else None
    if ops is None:
        ops = [o.operation for o in op.operation.block.operations]
        ops = [o for o in ops if o.name not in ("func.return", "affine.yield")]
    index = [o == op for o in ops].index(True)
    return ops[index + 1 :]


def _same_bounds(a, b) -> bool:
    la, lb = Loop(a), Loop(b)
    return (
        constant_loop(la)
        and constant_loop(lb)
        and la.min == lb.min
        and la.extent == lb.extent
        and la.step == lb.step
    )


def _matched(init_loops, red_loops) -> list:
    """[(init loop, reduction loop)] matched from the outside: same bounds, one for one."""
    pairs = []
    for a, b in zip(init_loops, red_loops):
        if not _same_bounds(a, b):
            break
        pairs.append((a, b))
    return pairs


def _accesses(red, broot) -> Optional[list]:
    """Every access of the buffer in `red`; None when some use of it is not a known access."""
    out = []
    for o in walk_all(red):
        uses = [v for v in o.operands if isinstance(v.type, ir.MemRefType) and _root_of(v) == broot]
        if not uses:
            continue
        if o.name not in _ACCESSES or len(uses) != 1 or _buffer(o) != uses[0]:
            return None
        if uses[0] != broot:  # (a view: its indices are not the buffer's)
            return None
        out.append(o)
    return out


def _root_of(v):
    (r, _), _ = root(v, [])
    return r


def _forms(op) -> Optional[list]:
    """The index forms of an access, one per buffer dimension; None when one is not linear."""
    leaf = through_applies(division_atom)
    first = _ACCESSES[op.name][1]
    if op.name.startswith("affine."):
        amap = ir.AffineMapAttr(op.attributes["map"]).value
        operands = [value_linear(v, leaf) for v in list(op.operands)[first:]]
        if any(f is None for f in operands):
            return None
        dims, symbols = operands[: amap.n_dims], operands[amap.n_dims :]
        forms = [linear(e, dims, symbols, division=division_atom) for e in amap.results]
    else:
        forms = [value_linear(v, leaf) for v in list(op.operands)[first:]]
    return None if any(f is None for f in forms) else forms


def _lanes(op) -> int:
    """How many elements along the last dimension one access covers."""
    if op.name.startswith("vector."):
        value = op.results[0] if not _ACCESSES[op.name][2] else op.operands[0]
        shape = ir.VectorType(value.type).shape
        return shape[-1] if len(shape) == 1 else 0
    return 1


def _iv_loop(atom) -> Optional[ir.Operation]:
    """The affine.for whose variable `atom` is, or None."""
    if not isinstance(atom, ir.Value) or not isinstance(atom.owner, ir.Block):
        return None
    parent = atom.owner.owner.operation
    return parent if parent.name == "affine.for" else None


def _inside(op, loop) -> bool:
    """Whether `op` is `loop` or nested in it."""
    loop, p = loop.operation, op.operation
    while p is not None and p.name != "func.func":
        if p == loop:
            return True
        p = p.parent.operation if p.parent is not None else None
    return False


def _split(form: Linear, iv, tops) -> Optional[tuple]:
    """(c, G, (lo, hi)) of `form` = c * iv + G + H: H's terms are the variables of loops inside
    the nests `tops` (other than `iv`) and the constant, with their range; G the rest. None
    when a loop of the nests other than a constant one is in H or one is read in G."""
    c = form.terms.get(iv, 0)
    g, lo, hi = {}, form.const, form.const
    for atom, k in form.terms.items():
        if atom == iv:
            continue
        loop = _iv_loop(atom)
        if loop is None or not any(_inside(loop, t) for t in tops):
            if isinstance(atom, tuple) and _mentions_nest(atom, tops):
                return None
            g[atom] = k
            continue
        if not constant_loop(Loop(loop)):
            return None
        first, last = Loop(loop).iv_range()
        lo, hi = lo + min(k * first, k * last), hi + max(k * first, k * last)
    return c, Linear(g).key(), (lo, hi)


def _mentions_nest(atom, tops) -> bool:
    """Whether a division atom reads a loop variable of the nests `tops`."""
    loops = [_iv_loop(a) for a in division_reads(atom)]
    return any(lp is not None and any(_inside(lp, t) for t in tops) for lp in loops)


def _disjoint(store, init_loops, accesses, matched) -> bool:
    """Whether, for every matched loop, some dimension puts each iteration's accesses (the
    init's store, with its variables read as the reduction's, and the reduction's) in its own
    block of `c` indices."""
    rename = {Loop(a).iv: Loop(b).iv for a, b in matched}
    init_forms = _forms(store)
    if init_forms is None:
        return False
    init_forms = [_renamed(f, rename) for f in init_forms]
    red_top = matched[0][1]
    all_forms = [(init_forms, _lanes(store), (init_loops[0], red_top))]
    for o in accesses:
        forms = _forms(o)
        if forms is None:
            return False
        all_forms.append((forms, _lanes(o), (red_top, red_top)))
    if any(lanes == 0 for _, lanes, _ in all_forms):
        return False
    for _, red_loop in matched:
        iv = Loop(red_loop).iv
        if not any(_blocks(all_forms, d, iv) for d in range(len(init_forms))):
            return False
    return True


def _renamed(form: Linear, rename: dict) -> Linear:
    return Linear({rename.get(a, a): k for a, k in form.terms.items()}, form.const)


def _blocks(all_forms, d, iv) -> bool:
    """Whether dimension `d` reads c * iv + G + H with H in [0, c) in every form."""
    keys = set()
    last = len(all_forms[0][0]) - 1
    for forms, lanes, tops in all_forms:
        parts = _split(forms[d], iv, tops)
        if parts is None:
            return False
        c, g, (lo, hi) = parts
        hi += lanes - 1 if d == last else 0
        if c <= 0 or lo < 0 or hi >= c:
            return False
        keys.add((c, g))
    return len(keys) == 1


def _sink(init, red_loops, init_loops):
    """Move the init's loops below the matched ones (its body when all match) to the start of
    the innermost matched reduction loop, then erase the init nest."""
    target = Loop(red_loops[-1]).body
    first = body_ops(target)[0]
    inner = Loop(init_loops[-1]).body
    moved = body_ops(inner)
    for o in moved:
        o.operation.move_before(first)
    for a, b in zip(init_loops, red_loops):
        Loop(a).iv.replace_all_uses_with(Loop(b).iv)
    init.operation.erase()
