"""Stage `compact-buffers` (affine level, after `unroll-loops`): TVM's CompactBufferAllocation.

An intermediate buffer (`T.alloc_buffer`, cache_read/cache_write) is shrunk to the region one
iteration of the innermost loop around all its accesses (their LCA) touches, like TVM does:

    C_local = alloc (1024, 1024)            C_local = alloca (4, 64)      // per thread
    for j0 (parallel), i0:                  for j0 (parallel), i0:
      ... C_local[i0*4 + c, j0*64 + v] =>     ... C_local[c, v]

so a small tile indexed by unrolled loop vars gets constant indices and LLVM keeps it in
registers. Conditions (else the buffer is left alone): only memref.load/store use it; every
index is a linear function of loop IVs, constants and their floordivs/mods by constants (terms
the divisor divides taken out: `(32 * bx + t) // 32` is `bx + t // 32`); a compact tile over
ALLOCA_LIMIT is compacted only if the buffer was on the heap already, and stays there (a tuner's 256
x 128 cache_write tile of a 1024 x 1024 buffer: rows 4 KiB apart, all in the same L1 sets, ran
several times slower left whole). Per dimension, the part that depends on the LCA and outer loops is
the tile's origin; a term of it that the accesses weigh differently in that dimension spans its
range there. The range of the rest is exact when it divides and its loops take few values together
(a sum of divisions that cancel spans nothing). As in TVM, no value flows through the buffer from
one iteration of the LCA to another. The new buffer
is allocated at the start of the innermost parallel loop around the LCA (one per thread), or of
the function; a heap tile is freed at the end of that block. A buffer that does not shrink (the
whole input cache_read at a parallel loop that does not index it) moves into that parallel loop
all the same when its uses lie in one iteration of it and some store to it does not read the
loop's variable: one copy for all threads was rewritten by each of them (a race). One whose
iterations each write a part of their own stays shared, as before.

Versioned nests (version-guards runs first): the copies of one loop in the two versions of a
versioned loop count as one loop when finding the LCA (only one of them runs per iteration of
the versioned loop), each access's tile origin over the IVs of its own copies. A conv whose
channel split leaves a `T.where` is versioned at its parallel loop, its row loop and its
channel loop; taken apart, the accesses' LCA was the parallel loop: a 4-output accumulator
became 4 x 28 (gathered and scattered) and the input window not compacted at all. The copies
of a versioned parallel loop get a tile each.

On GPU targets loops bound to threads follow TVM's relaxation by scope: a `shared` buffer spans
the threadIdx loops around the LCA too (one tile per thread block: 2x16 KB for a 256x256
matmul's 64x64 tiles instead of 2x256 KB), a `local` one keeps every thread loop in its origin
(one tile per thread), a `global` one spans all thread loops (one copy for the grid). Loops
bound to the same thread tag are one id.
"""

import itertools
import math

from mlir import ir
from mlir.dialects import affine, memref

from tir_mlir.analysis.linear import Linear, linear, value_linear
from tir_mlir.dialect.ops import Loop
from tir_mlir.passes.lowering.common import ancestors, depends_on, functions, iv_range, walk
from tir_mlir.passes.lowering.fold_views import fold_views
from tir_mlir.passes.lowering.gpu_scopes import address_space
from tir_mlir.passes.lowering.stack_budget import to_heap
from tir_mlir.passes.lowering.tir_to_affine import ALLOCA_LIMIT
from tir_mlir.passes.lowering.version_guards import COPY, VERSIONED

# A division term whose IVs take at most this many values together gets its exact range.
ENUMERATED_POINTS = 4096


class CompactBuffers:
    name = "compact-buffers"

    def __call__(self, module: ir.Module):
        for f in functions(module):
            fold_views(f)  # (accesses through a T.match_buffer view count as accesses)
            for op in [o for o in walk(f) if o.name in ("memref.alloca", "memref.alloc")]:
                if not _compact(f, op):
                    _privatize(f, op)
            for op in walk(f):  # (the copy ids are for this stage only)
                if op.name == "affine.for" and COPY in op.attributes:
                    del op.attributes[COPY]


def _compact(f, alloc) -> bool:
    """Shrink `alloc` to its tile; whether it did (`alloc` is erased then)."""
    buf = alloc.results[0]
    mtype = ir.MemRefType(buf.type)
    accesses, deallocs = [], []
    for use in buf.uses:
        user = use.owner.operation if hasattr(use.owner, "operation") else use.owner
        if user.name == "memref.dealloc":
            deallocs.append(user)
        elif (user.name, use.operand_number) in (("memref.load", 0), ("memref.store", 1)):
            accesses.append(user)
        else:
            return False
    if not accesses:
        return False
    chains = [_loops_around(a) for a in accesses]
    depth = _lca_depth(chains)
    if depth == 0:
        return False
    lcas = [c[depth - 1] for c in chains]  # per access: the LCA (or its copy around it)
    lca = lcas[0]
    space = address_space(mtype)
    outer = [lp for c in chains for lp in c[:depth]]
    # the copies of a loop around the LCA are one loop: the first access's
    canon = [(lp, chains[0][k]) for c in chains[1:] for k, lp in enumerate(c[:depth])]
    ivs = []  # dim position -> IV value
    forms = []  # per access, per axis: (coeffs, const)
    for a in accesses:
        indices = list(a.operands)[1 if a.name == "memref.load" else 2 :]
        per_axis = [_linear(v, ivs, canon) for v in indices]
        if any(p is None for p in per_axis):
            return False
        forms.append(per_axis)
    loops = [iv.owner.owner for iv in ivs]  # _linear takes loop IVs only
    outer_ivs = {p for p, lp in enumerate(loops) if _fixed(lp, space, outer)}
    keys = {p for form in forms for coeffs, _ in form for p in coeffs}
    outer_terms = {p for p in keys if all(q in outer_ivs for q in _positions(p))}
    # Per axis, the outer terms all accesses weigh alike make the tile's origin; one they weigh
    # differently (a cooperative fetch fills the tiles of all of a block's virtual threads, each
    # reads its own) spans its range there: a bigger tile.
    outer_pos = [
        {p for p in outer_terms if len({form[axis][0].get(p, 0) for form in forms}) == 1}
        for axis in range(mtype.rank)
    ]
    ranges = [_range(lp, lca) for lp in loops]
    if any(r is None and p not in outer_ivs for p, r in enumerate(ranges)):
        return False  # the tile spans a loop over a symbolic size
    known = {}  # the ranges of the term sums seen so far
    shape, offsets = [], []
    for axis in range(mtype.rank):
        outer_parts = [
            {p: c for p, c in form[axis][0].items() if p in outer_pos[axis]} for form in forms
        ]
        spans = []
        for form in forms:
            coeffs, const = form[axis]
            a_lo, a_hi = _terms_range(
                {p: c for p, c in coeffs.items() if p not in outer_pos[axis]}, ranges, known
            )
            spans.append((a_lo + const, a_hi + const))
        lo, hi = min(s[0] for s in spans), max(s[1] for s in spans)
        if not mtype.is_dynamic_dim(axis):
            if not outer_parts[0]:  # (the accesses lie in the buffer: TVM narrows to it)
                lo, hi = max(lo, 0), min(hi, mtype.shape[axis] - 1)
            if hi - lo + 1 > mtype.shape[axis]:
                return False
        shape.append(hi - lo + 1)
        offsets.append((outer_parts[0], lo))
    if list(shape) == list(mtype.shape):
        return False
    width = getattr(mtype.element_type, "width", 8)
    numel = 1
    for d in shape:
        numel *= d
    heap = max(1, width // 8) * numel > ALLOCA_LIMIT
    if heap and alloc.name != "memref.alloc":
        return False
    _rewrite(f, alloc, lcas, accesses, deallocs, ivs, canon, forms, outer_pos, shape, offsets, heap)
    return True


def _rewrite(
    f, alloc, lcas, accesses, deallocs, ivs, canon, forms, outer_pos, shape, offsets, heap
):
    mtype = ir.MemRefType(alloc.results[0].type)
    new_type = ir.MemRefType.get(shape, mtype.element_type, memory_space=mtype.memory_space)
    # One tile per innermost parallel loop around the LCA (per thread), or per function; the
    # copies of a versioned parallel loop get one each.
    tiles, buffers = [], []  # tiles: (scope, its tile); buffers: per access
    for lca in lcas:
        scope = _thread_scope(lca)
        tile = next((t for s, t in tiles if s == scope), None)
        if tile is None:
            tile = _new_tile(f, alloc, scope, new_type, heap)
            tiles.append((scope, tile))
        buffers.append(tile)
    for a, form, new in zip(accesses, forms, buffers):
        is_load = a.name == "memref.load"
        with ir.InsertionPoint(a), a.location:
            indices = []
            for axis, (coeffs, const) in enumerate(form):
                # only the inner terms remain (the outer part is the tile's origin)
                inner = [p for p in coeffs if p not in outer_pos[axis]]
                used = sorted({q for p in inner for q in _positions(p)})
                dim = {q: ir.AffineDimExpr.get(k) for k, q in enumerate(used)}
                expr = ir.AffineConstantExpr.get(const - offsets[axis][1])
                for p in inner:
                    expr = expr + _key_expr(p, dim) * coeffs[p]
                m = ir.AffineMap.get(len(used), 0, [expr])
                ivs_at = [_iv_at(a, ivs[q], canon) for q in used]
                indices.append(affine.AffineApplyOp(m, ivs_at).result)
            if is_load:
                r = memref.LoadOp(new, indices).result
                a.results[0].replace_all_uses_with(r)
            else:
                memref.StoreOp(a.operands[0], new, indices)
        a.erase()
    for d in deallocs:
        d.erase()
    alloc.erase()


def _thread_scope(lca):
    """The innermost parallel loop around or at `lca` (each thread's tile lives in its body),
    or None."""
    return next(
        (
            p
            for p in [lca, *ancestors(lca)]
            if p.name == "affine.for" and Loop(p).kind == "parallel"
        ),
        None,
    )


def _privatize(f, alloc):
    """Move a buffer that is not compacted (its tile is the whole buffer: a cache_read of all
    of an input at a parallel loop that does not index it) into the parallel loop around the LCA
    of its uses, one per thread as TVM allocates a buffer at that LCA: left at the function's
    start, every thread wrote the one copy (a race, and its cache lines bounced between cores).
    Only a static buffer whose uses all lie in one parallel loop's body."""
    mtype = ir.MemRefType(alloc.results[0].type)
    users = [
        u.owner.operation if hasattr(u.owner, "operation") else u.owner
        for u in alloc.results[0].uses
    ]
    deallocs = [u for u in users if u.name == "memref.dealloc"]
    chains = [_loops_around(u) for u in users if u.name != "memref.dealloc"]
    if not chains or not mtype.has_static_shape:
        return
    depth = _lca_depth(chains)
    if depth == 0:
        return
    scope = _thread_scope(chains[0][depth - 1])
    if scope is None or any(a == scope for a in ancestors(alloc)):
        return
    if any(_thread_scope(c[depth - 1]) != scope for c in chains[1:]):
        return  # (the copies of a versioned parallel loop: not taken)
    iv = Loop(scope).iv
    writes = [u for u in users if _writes(u)]
    if writes and all(any(depends_on(v, iv) for v in w.operands) for w in writes):
        return  # (each iteration writes its own part: no race, and no copy per thread)
    tile = _new_tile(f, alloc, scope, mtype, alloc.name == "memref.alloc")
    for d in deallocs:
        d.erase()
    alloc.results[0].replace_all_uses_with(tile)
    alloc.erase()


def _writes(op) -> bool:
    return op.name in ("memref.store", "vector.store", "affine.store", "vector.transfer_write")


def _new_tile(f, alloc, scope, new_type, heap) -> ir.Value:
    """A tile of `new_type` allocated at the start of `scope` (a loop, or the function when
    None), on the heap (freed at its end) when `heap`."""
    top = scope.regions[0].blocks[0] if scope is not None else f.regions[0].blocks[0]
    with ir.InsertionPoint(list(top.operations)[0].operation):
        new = memref.AllocaOp(new_type, [], [], loc=alloc.location).result
    if heap:
        new = to_heap(new.owner)
    # The notes of later stages go with the buffer: a fragment's scope (gpu-lower-wmma tells
    # them apart by it), storage-align's requests (storage-pad pads the compact tile, as TVM).
    for name in alloc.attributes:
        if name.startswith("tir_mlir.") and name != COPY:
            new.owner.attributes[name] = alloc.attributes[name]
    return new


def _thread(loop) -> str:
    """The thread tag a loop is bound to ('' when it is not)."""
    return (Loop(loop).thread or "") if Loop(loop).kind == "thread_binding" else ""


def _fixed(loop, space: str, outer) -> bool:
    """Whether the tile moves with `loop` (it is part of the tile's origin) rather than
    spanning its range. Loops around the LCA are fixed and loops inside it are not, except for
    GPU thread loops (TVM's relaxation): one copy of a shared buffer serves all threads of a
    block, so threadIdx loops span it; a local buffer is each thread's own, so every thread
    loop is fixed; a global one is one copy for the whole grid, so no thread loop is fixed."""
    tag = _thread(loop)
    if space == "private" and tag:
        return True
    if (space == "workgroup" and tag.startswith("threadIdx")) or (space == "" and tag):
        return False
    return any(loop == lp for lp in outer)


def _range(loop, lca):
    """The IV range of `loop`; a thread loop's id covers all loops bound to its tag under the
    kernel (they are one id)."""
    rng = iv_range(loop)
    tag = _thread(loop)
    if tag and rng is not None:
        first, last = rng
        root = ([lca] + [p for p in ancestors(lca) if p.name == "affine.for"])[-1]
        for other in [root, *walk(root)]:
            if other.name == "affine.for" and _thread(other) == tag:
                other_rng = iv_range(other)
                if other_rng is None:
                    return None
                first, last = min(first, other_rng[0]), max(last, other_rng[1])
        rng = first, last
    return rng


def _iv_at(op, iv, canon):
    """`iv` as seen from `op`: the IV of the loop around `op` bound to the same thread tag, or
    of the copy of its loop around `op` (the one `_linear` met first may be a sibling loop's,
    or the copy in the other version)."""
    loop = iv.owner.owner
    tag = _thread(loop)
    for p in ancestors(op):
        if p.name == "affine.for" and ((tag and _thread(p) == tag) or _canonical(p, canon) == loop):
            return Loop(p).iv
    return iv


def _lca_depth(chains) -> int:
    """How many levels of the loop chains around the accesses (outermost first) are the same
    loop for all of them, or copies of one loop in the versions of a versioned loop
    (version-guards): their innermost is the LCA. It stays outside every vectorized loop (its
    lanes run at once, so each needs its own elements); 0 if some access is outside all
    loops."""
    depth = 0
    for level in zip(*chains):
        distinct = []
        for x in level:
            if not any(x == y for y in distinct):
                distinct.append(x)
        same = all(_copies(x, y) for x, y in itertools.combinations(distinct, 2))
        if not same or Loop(level[0]).kind == "vectorized":
            break
        depth += 1
    return depth


def _copies(a, b) -> bool:
    """Whether loops `a` and `b` are copies of one loop that version-guards made, one in each
    version of a versioned loop: the same COPY id, the same attributes and bound operands, and
    the innermost op around both a versioned `affine.if` with them in its two branches. For
    one iteration of the versioned loop only one of them runs."""
    if COPY not in a.attributes or COPY not in b.attributes:
        return False
    attrs = [{n: str(x.attributes[n]) for n in x.attributes} for x in (a, b)]
    if attrs[0] != attrs[1] or len(a.operands) != len(b.operands):
        return False
    if any(x != y for x, y in zip(a.operands, b.operands)):
        return False
    up_a = [a, *ancestors(a)]
    child_b = b
    for p in ancestors(b):
        at = next((k for k, q in enumerate(up_a) if q == p), None)
        if at is not None:
            child_a = up_a[at - 1]
            versioned = p.name == "affine.if" and VERSIONED in p.attributes
            return versioned and child_a.block != child_b.block
        child_b = p
    return False


def _canonical(loop, canon):
    """The loop that stands for `loop` (a copy of one around the LCA) in the linear forms."""
    return next((c for lp, c in canon if lp == loop), loop)


def _loops_around(op):
    """affine.for ops enclosing `op`, outermost first."""
    return [p for p in ancestors(op) if p.name == "affine.for"][::-1]


def _linear(value, ivs, canon=()):
    """The linear form (tir_mlir/analysis/linear.py) of an index over the IVs of affine.for
    loops, atoms their positions in `ivs` (appended on first sight), or None; a loop listed in
    `canon` counts as the loop it stands for. A floordiv/mod/ceildiv by a constant is linear
    through `_division`."""

    def leaf(v):
        if isinstance(v.owner, ir.Block):
            owner = v.owner.owner
            if owner is None or owner.name != "affine.for":
                return None
            loop = Loop(owner)
            if loop.extent == 1 and isinstance(loop.min, int):  # one iteration: a constant
                return Linear((), loop.min)
            owner = _canonical(owner, canon)
            v = Loop(owner).iv
            for p, iv in enumerate(ivs):  # loops bound to one thread tag are one id
                if iv == v or (_thread(owner) and _thread(iv.owner.owner) == _thread(owner)):
                    return Linear({p: 1})
            ivs.append(v)
            return Linear({len(ivs) - 1: 1})
        op = v.owner.operation
        if op.name in _DIVISIONS:  # TIR's `//` and floormod (a - a // b * b)
            return _division(_DIVISIONS[op.name], *(_linear(x, ivs, canon) for x in op.operands))
        if op.name == "affine.apply":
            m = ir.AffineMapAttr(op.attributes["map"]).value
            args = [_linear(x, ivs, canon) for x in op.operands]
            if m.n_symbols or any(x is None for x in args):
                return None
            return linear(m.results[0], args, division=_division)
        return None

    return value_linear(value, leaf)


_DIVISIONS = {"arith.floordivsi": ir.AffineFloorDivExpr, "arith.ceildivsi": ir.AffineCeilDivExpr}


def _division(kind, lhs, rhs):
    """The linear form of `lhs <kind> rhs`, a division by a positive constant d. A floordiv/
    mod/ceildiv by a constant is a term of its own, keyed by its structure (fused loops index
    tiles by `f floordiv n`); such a term is fine where it depends on outer loops only: it is
    then part of the tile origin. Terms of lhs whose coefficient d divides leave it exactly,
    `(d*a + x) // d = a + x // d` and `(d*a + x) % d = x % d` (a thread block's `co // 32`
    with co = 32 * bx + t is bx + t // 32: its origin, and a term within the tile)."""
    if lhs is None or rhs is None or rhs.terms or rhs.const <= 0:
        return None
    coeffs, const, d = lhs.terms, lhs.const, rhs.const
    whole = {} if kind is ir.AffineModExpr else {p: c // d for p, c in coeffs.items() if c % d == 0}
    rest = {p: c for p, c in coeffs.items() if c % d}
    if not rest:
        return Linear(
            whole,
            {
                ir.AffineFloorDivExpr: const // d,
                ir.AffineCeilDivExpr: -(-const // d),
                ir.AffineModExpr: const % d,
            }[kind],
        )
    return Linear(whole) + Linear({(kind.__name__, frozenset(rest.items()), const, d): 1})


def _key_range(key, ranges):
    """(min, max) of a linear-form key: an IV position, or a floordiv/mod/ceildiv term. Exact
    when its IVs take at most ENUMERATED_POINTS values together: interval arithmetic loses
    that `16 * f - 32 * (f // 2)` (`f % 2 * 16` as the affine forms write it) stays in [0, 16],
    and a conv's `co // 128` of a `co` below 128 then seemed to span 9 rows of the buffer."""
    if not isinstance(key, tuple):
        return ranges[key]
    exact = _enumerated_range({key: 1}, ranges)
    if exact is not None:
        return exact
    kind, coeffs, const, d = key
    lo = hi = const
    for q, c in coeffs:
        qlo, qhi = _key_range(q, ranges)
        lo, hi = lo + min(c * qlo, c * qhi), hi + max(c * qlo, c * qhi)
    if d <= 0:
        raise ValueError("division by a non-positive constant")
    if kind == "AffineFloorDivExpr":
        return lo // d, hi // d
    if kind == "AffineCeilDivExpr":
        return -(-lo // d), -(-hi // d)
    return (lo % d, hi % d) if lo // d == hi // d else (0, d - 1)


def _terms_range(terms, ranges, known):
    """(min, max) of sum(c * key): exact when division keys are among them and their IVs take
    at most ENUMERATED_POINTS values together. A fused loop's `f % 16 * 8 + co` divided by 128
    comes out of the affine forms as `(8 * f + co) // 128 - f // 16`: two terms whose ranges
    add up to rows of a buffer that the difference, always 0, never leaves."""
    key = frozenset(terms.items())
    if key not in known:
        exact = (
            _enumerated_range(terms, ranges) if any(isinstance(p, tuple) for p in terms) else None
        )
        if exact is None:
            lo = hi = 0
            for p, c in terms.items():
                rmin, rmax = _key_range(p, ranges)
                lo, hi = lo + min(c * rmin, c * rmax), hi + max(c * rmin, c * rmax)
            exact = lo, hi
        known[key] = exact
    return known[key]


def _enumerated_range(terms, ranges):
    """(min, max) of sum(c * key) over every value of its IVs, or None when they take more than
    ENUMERATED_POINTS values together."""
    positions = sorted({q for p in terms for q in _positions(p)})
    spans = [range(ranges[q][0], ranges[q][1] + 1) for q in positions]
    if math.prod(len(r) for r in spans) > ENUMERATED_POINTS:
        return None
    values = [
        sum(c * _key_value(p, dict(zip(positions, point))) for p, c in terms.items())
        for point in itertools.product(*spans)
    ]
    return min(values), max(values)


def _key_value(key, env) -> int:
    """The value of a linear-form key with the IV positions set to `env`."""
    if not isinstance(key, tuple):
        return env[key]
    kind, coeffs, const, d = key
    x = const + sum(c * _key_value(q, env) for q, c in coeffs)
    if kind == "AffineFloorDivExpr":
        return x // d
    if kind == "AffineCeilDivExpr":
        return -(-x // d)
    return x % d


def _key_expr(key, dim):
    """The affine expression of a key over the dims `dim` maps positions to."""
    if not isinstance(key, tuple):
        return dim[key]
    kind, coeffs, const, d = key
    e = ir.AffineConstantExpr.get(const)
    for q, c in coeffs:
        e = e + _key_expr(q, dim) * c
    return {
        "AffineFloorDivExpr": ir.AffineExpr.get_floor_div,
        "AffineCeilDivExpr": ir.AffineExpr.get_ceil_div,
        "AffineModExpr": ir.AffineExpr.get_mod,
    }[kind](e, ir.AffineConstantExpr.get(d))


def _positions(key):
    """The IV positions a linear-form key depends on (a position, or a floordiv/mod term)."""
    if isinstance(key, tuple):
        return {p for q, _ in key[1] for p in _positions(q)}
    return {key}
