"""Stage `scalar-replace` (CPU, scf level): buffer elements that a serial loop reads and writes at
the same loop-invariant address are carried in registers across the loop (scalar replacement).

    scf.for %k = 0 to 128 {                      %c0 = vector.load %C[%i, %j]
      %c = vector.load %C[%i, %j]                %r = scf.for %k = 0 to 128 iter_args(%c = %c0) {
      %s = FMA(A[%i, %k], B[%k, %j], %c)   =>      %s = FMA(A[%i, %k], B[%k, %j], %c)
      vector.store %s, %C[%i, %j]                  scf.yield %s
    }                                            }
                                                 vector.store %r, %C[%i, %j]

Without it every reduction step loads and stores the accumulator tile, and LLVM cannot keep it in
registers: after OpenMP outlining it cannot tell the buffers apart (see `alias-scopes`), and it
cannot prove the tile's vectors disjoint from each other either.

A group (one buffer, one address, one type) is carried when, in a serial `scf.for` with constant
bounds and at least two iterations, no vectorize hint, no op of unknown memory effect and at most
MAX_ACCESSES memory accesses:
- its indices are affine (`arith` add/sub/mul by constant) in values defined outside the loop;
- its accesses sit directly in the loop body or in result-less `scf.if`s there, nested or not
  (such an if then yields the value: a reduction's init `if k == 0: C = 0`; a version guard
  around the copies of an unrolled `k1` of a non-dividing split, each copy of its else under
  its own guard), one of them is a store, and one runs at every iteration or at an iteration
  the loop's bounds prove (the conditions around it compare linear forms of the loop's IV
  alone and hold together at one of its values): the address is valid to load before the
  loop;
- every other access of the same buffer in the loop is provably disjoint from it (its indices
  differ by a constant at least the extent of the access in some dimension). Buffers are told
  apart by their root: an `memref.alloc(a)`, or a function argument marked `llvm.noalias`;
  other arguments may alias each other. Indices are compared on the root itself, or on the one
  view of an allocation nothing else uses (`storage-pad`'s padded tile: every access goes
  through it); through other views an access may alias any of its root's.
Loops of one iteration are replaced by their bodies first. A small nest of inner serial loops
(constant bounds, no vectorize hint) whose stores become loop-invariant once unrolled is fully
unrolled first (LLVM would unroll it anyway, too late to carry the values): on a copy, kept
when more values are carried. Such a nest may sit in result-less `scf.if`s of the body too: a
version guard of a split that does not divide holds the lane loop of an rfactor in its else
(each step's lanes were otherwise loaded and stored at every step). Loops in the nest that already carry values stay loops (one per
copy), and then all the values must fit, or, when those loops have at most SHORT_LOOP steps and
the values take less than twice the register file, as many as fit are carried: the 2x2 tiles around a carried `k1` are unrolled so that `k0` carries
their 16 accumulators too.
The carried values of a loop must fit in the target's vector registers (less FREE_REGISTERS);
when not all groups do, those accessed most often are carried, as many as fit with PARTIAL_SPARE
more registers free, and the others stay in memory. The scalar lanes of one vector (loads that
become one `vector.from_elements`: a vectorized accumulator at a strided address) count as that
vector and are carried all or none, as `carry-vectors` carries them afterwards.
"""

import itertools
import math
from typing import Callable, Optional

from mlir import ir
from mlir.dialects import memref, scf, vector

from tir_mlir.analysis.expr_tree import erase_unused
from tir_mlir.analysis.linear import Linear, value_linear
from tir_mlir.ir.ir_walk import walk_all
from tir_mlir.passes.lowering.buffer_roots import VIEW_OPS, noalias_args, root
from tir_mlir.passes.lowering.common import (
    ancestors,
    constant_int,
    else_block,
    functions,
    Bounds,
    index_const,
    iterations,
    loop_iv,
    move_body,
    scalar_bits,
    scf_bounds,
    value_bits,
    walk,
)
from tir_mlir.passes.lowering.cpu_model import cpu_model
from tir_mlir.passes.lowering.memory_ops import (
    ACCESSES,
    NO_EFFECT_PREFIXES,
    OTHER_ACCESSES,
    STORES,
    known_effects,
    no_effects,
)

# Body copies of an inner nest unrolled so that its values can be carried.
MAX_UNROLLED = 32
# Loops of at most this many steps that carry values: unrolled around them, the outer loop may
# carry only some of their values.
SHORT_LOOP = 4
# Vector registers a loop's carried values leave free: one for a broadcast operand, one for a
# loaded one. More carried values than registers are spilled by LLVM, every step (the 32 zmm
# row of a parallel-vectorized 512 matmul ran 10% slower than TVM's memory accumulators).
FREE_REGISTERS = 2
# When only some of a loop's values fit, this many more registers are left free for the loads
# and stores of the others.
PARTIAL_SPARE = 4
# A loop holding more memory accesses is left alone: the at most ~30 registers' worth of
# loads and stores carrying would save per iteration are noise next to its body, and
# analysing the huge unrolled bodies some tuner candidates have took most of their build.
MAX_ACCESSES = 4096


class ScalarReplace:
    name = "scalar-replace"

    def __init__(self, registers=32, register_bits=512):
        self.registers, self.budget = registers, registers - FREE_REGISTERS
        self.register_bits = register_bits

    @classmethod
    def for_target(cls, target):
        """The target's vector register file (cpu_model.py: 32 x 512 bits with AVX-512, 16 x
        256 with AVX, 16 x 128 with SSE only), from the features LLVM gives its `-mcpu`."""
        model = cpu_model(target)
        return cls(model.vector_registers, model.vector_bits)

    def __call__(self, module: ir.Module):
        for f in functions(module):
            _inline_single_iterations(f)
            noalias = noalias_args(f)
            # Innermost loops first: an inner loop's carried values leave loads and stores
            # around it that an outer loop may carry in turn.
            # Linear forms of index values, shared by the loops until the IR changes (a key
            # could otherwise be a freed value's address reused by a new one).
            memo = {}
            for loop in reversed([o for o in walk(f) if o.name == "scf.for"]):
                if _carry(loop, noalias, self, memo):
                    memo.clear()
            _memory_inits(f, noalias)

    def _fits(self, groups, spare=0) -> bool:
        """Whether the carried values of `groups` fit in the registers left free (and `spare`
        more)."""
        return sum(regs for _, regs in self.units(groups)) + spare <= self.budget

    def units(self, groups) -> list:
        """[(groups, registers they take)]: the groups carried together or not at all. The
        scalar lanes of one vector (a vectorized accumulator at a strided address: a load per
        lane, then `vector.from_elements`) take one vector's registers, as `carry-vectors`
        carries them later; counted one register a lane, only some lanes of an 8-lane
        accumulator tile fit, and those carried apart from the others are taken apart and
        rebuilt at every step."""
        lanes, out = {}, []
        for g in groups:
            lane = _lane(g)
            if lane is None:
                out.append(([g], self.register_count([_value_type(g[0])])))
            else:
                lanes.setdefault(lane[0], {}).setdefault(lane[1], []).append(g)
        for build, by_lane in lanes.items():
            members = [g for gs in by_lane.values() for g in gs]
            whole = len(by_lane) == len(build.operands) == len(members)
            if whole:
                out.append((members, self.register_count([build.results[0].type])))
            else:
                out += [([g], self.register_count([_value_type(g[0])])) for g in members]
        return out

    def register_count(self, types) -> int:
        """Registers the values of `types` take (a scalar: one)."""
        regs = 0
        for t in types:
            bits = (
                scalar_bits(t.element_type) * math.prod(t.shape)
                if isinstance(t, ir.VectorType)
                else 0
            )
            regs += max(1, -(-bits // self.register_bits))
        return regs


class _Access:
    """One memory access: its buffer root (None: unknown, may alias anything), whether that root
    may alias other `shared` roots, its indices as linear forms (None: not analysed), the extent
    it covers per dimension, and whether it writes."""

    def __init__(self, op, root, index=None, extent=None, store=False):
        self.op, self.store = op, store
        self.buffer, self.shared = root
        self.index, self.extent = index, extent


def _carry(loop, noalias, regs, memo) -> bool:
    """Carry what `loop` allows (`regs`: the register file); whether the IR changed."""
    if not _plain_serial(loop) or not _may_carry(loop):
        return False
    accesses = _accesses(loop, noalias, memo)
    if accesses is None:
        return False
    fits = regs._fits
    groups = _groups(loop, accesses)
    changed = False
    nests = _unrollable(loop, accesses)
    # Copies of loops that already carry values keep theirs live at once: then all of the loop's
    # must fit. Or, when those loops are short (at most SHORT_LOOP steps: little work per load and
    # store of their values) and their values take less than twice the register file, as many as fit
    # (the rest stay in memory): a tuner's 16x2 tile of 2-lane accumulators around a 2-step k_1, 32
    # registers, ran several times faster carried by k_0. Around longer loops, which amortize the
    # loads and stores, that lost, and with 64 registers and more, LLVM's allocator shuffled and
    # spilled them (benchmarks/README.md, "stage figures"). A nest past that is not     # tried
    # (unrolling the 16 rows around a carried 4x64 tile analysed 1,024 accesses for nothing).
    live, whole, steps = 0, False, 0
    for n in nests:
        loops = [o for o in walk_all(n) if o.name == "scf.for" and len(o.results)]
        carried = [r.type for o in loops for r in o.results]
        whole = whole or bool(carried)
        steps = max([steps] + [_trip_count(o) for o in loops])
        live += regs.register_count(carried) * math.prod(_trip_count(o) for o in _nest(n))
    partial = whole and steps <= SHORT_LOOP and regs.budget < live < 2 * regs.registers
    if whole and live > regs.budget and not partial:
        nests = []
    if nests:
        # Unroll a copy; keep it only if it lets more values be carried.
        trial = loop.clone(ip=ir.InsertionPoint(loop))
        _unroll(_unrollable(trial, _accesses(trial, noalias, {})))
        trial_accesses = _accesses(trial, noalias, {})
        trial_groups = [] if trial_accesses is None else _groups(trial, trial_accesses)
        more = _fitting(trial_groups, regs)
        # (A copy whose values take more than twice the register file's bits is not kept: the
        # ones left in memory sit at addresses the loop does not move, LLVM's promotion carries
        # them too, and spills and shuffles most of them at every step.)
        bits = sum(value_bits(_value_type(g[0])) for g in trial_groups)
        few = bits <= 2 * regs.registers * regs.register_bits
        if len(_fitting(groups, regs)) < len(more) and (
            fits(trial_groups) or (partial if whole else few)
        ):
            loop.erase()
            loop, groups = trial, more
            changed = True
        else:
            trial.erase()  # (the loop's values, and their linear forms, stay valid)
    groups = _fitting(groups, regs)
    if groups:
        _rewrite(loop, groups)
        changed = True
    return changed


def _may_carry(loop) -> bool:
    """Whether `loop` has a store where a carried group needs one: directly in its body, in
    result-less `scf.if`s there, or in a nest `_unrollable` may unroll. Else the analysis of
    every access nested in it (an outer loop of a tile: hundreds) cannot carry anything."""
    for op in _body_ops(loop):
        if op.name in STORES:
            return True
        if op.name == "scf.for":
            nest = _small_nest(op)
            if nest and any(
                o.operation.name in STORES for n in nest for o in n.regions[0].blocks[0].operations
            ):
                return True
    return False


def _fitting(groups, regs):
    """The groups to carry: all when they fit in the registers, else as many as fit (whole
    `units`), those accessed most often first; the others stay in memory. (A 2x2x16 scalar
    tile of the tuner, 64 values over `k`: none carried ran several times slower than 26
    carried.)"""
    units = regs.units(groups)
    free = regs.budget - PARTIAL_SPARE
    if sum(n for _, n in units) <= regs.budget:
        return groups
    chosen, used = set(), 0
    for members, n in sorted(units, key=lambda u: sum(map(len, u[0])), reverse=True):
        if used + n <= free:
            chosen |= {id(g) for g in members}
            used += n
    return [g for g in groups if id(g) in chosen]


def _lane(group):
    """(`vector.from_elements` op, lane) that a value loaded by `group` becomes, directly or
    through the init of an inner loop that carries it and a reduction init there (an
    `arith.select`, or an `scf.if` yielding it: the same lane, a loop further out); None when it
    becomes none."""
    for a in group:
        if not a.store:
            lane = _lane_of(a.op.results[0])
            if lane is not None:
                return lane
    return None


def _lane_of(value):
    uses = list(value.uses)
    if len(uses) != 1:
        return None
    use = uses[0]
    op = use.owner.operation
    if op.name == "vector.from_elements":
        return op, use.operand_number
    if op.name == "arith.select" and use.operand_number in (1, 2):
        return _lane_of(op.results[0])
    if op.name == "scf.for" and use.operand_number >= 3:
        return _lane_of(op.regions[0].blocks[0].arguments[use.operand_number - 2])
    if op.name == "scf.yield" and op.parent.name == "scf.if":
        return _lane_of(op.parent.results[use.operand_number])
    return None


def _inline_single_iterations(f):
    """Replace each result-less loop of one iteration by its body (the tuner's tiles have
    many): it carries nothing, but its accesses, left inside it, could not be carried by the
    loop around it."""
    for op in [o for o in walk(f) if o.name == "scf.for" and not len(o.results)]:
        bounds = scf_bounds(op)
        if bounds is None or not bounds[0] < bounds[1] <= bounds[0] + bounds[2]:
            continue
        lo = bounds[0]
        body = op.regions[0].blocks[0]
        with ir.InsertionPoint(op):
            body.arguments[0].replace_all_uses_with(index_const(lo, op.location))
        move_body(body, op)
        op.erase()


def _plain_serial(loop) -> bool:
    annotation = loop.attributes["loop_annotation"] if "loop_annotation" in loop.attributes else ""
    if "vectorize" in str(annotation):
        return False
    bounds = scf_bounds(loop)
    # (one iteration: carrying would only move its load and store around the loop)
    return bounds is not None and bounds[2] > 0 and bounds[0] + bounds[2] < bounds[1]


def _accesses(loop, noalias, memo):
    """The memory accesses nested in `loop`, or None when some op there has unknown effects
    or there are more than MAX_ACCESSES (`memo`: linear forms already computed)."""
    out = []
    for op in walk_all(loop):
        name = op.name
        if len(out) > MAX_ACCESSES:
            return None
        if name in ACCESSES:
            m, first, store = ACCESSES[name]
            base = op.operands[m]
            buffer_root, direct = root(base, noalias)
            direct = direct or _sole_view(base)
            analysed = direct and _disjoint_rows(ir.MemRefType(base.type))
            index = [linear(v, memo) for v in list(op.operands)[first:]] if analysed else None
            shape = (
                list(ir.VectorType(op.operands[0].type).shape)
                if name == "vector.store"
                else list(ir.VectorType(op.results[0].type).shape)
                if name == "vector.load"
                else []
            )
            rank = ir.MemRefType(base.type).rank
            extent = [1] * (rank - len(shape)) + shape
            out.append(_Access(op, buffer_root, index, extent, store))
        elif name in OTHER_ACCESSES:
            for m, store in OTHER_ACCESSES[name]:
                out.append(_Access(op, root(op.operands[m], noalias)[0], store=store))
        elif not known_effects(op):
            return None
    return out


def _sole_view(base) -> bool:
    """Whether `base` is the one view of an allocation that nothing else uses (each value from
    the allocation to `base` has that one use): every access of the allocation then goes
    through `base`, and its indices tell the elements apart as a direct access's do. The padded
    tile of `storage-pad` (a `memref.reinterpret_cast` of a flat allocation) is one."""
    value = base
    while not isinstance(value.owner, ir.Block) and value.owner.operation.name in VIEW_OPS:
        source = value.owner.operation.operands[0]
        if not _one_use(source):
            return False
        value = source
    return (
        value is not base
        and not isinstance(value.owner, ir.Block)
        and value.owner.operation.name in ("memref.alloc", "memref.alloca")
    )


def _one_use(value) -> bool:
    return len(list(value.uses)) == 1


def _disjoint_rows(mtype) -> bool:
    """Whether distinct in-bounds indices of the layout address distinct elements (row-major
    with static strides, each at least the span of the dimensions inside it): then indices
    that differ in one dimension mean different elements, which `_disjoint` relies on."""
    strides, _ = mtype.get_strides_and_offset()
    span = 1
    for stride, size in reversed(list(zip(strides, mtype.shape))):
        if stride < span or size < 0:  # dynamic strides and sizes are negative
            return False
        span = stride * size
    return True


def linear(value, memo=None):
    """An index value as (constant, {atom: coefficient}): its linear form
    (tir_mlir/analysis/linear.py) with `_atom`s for leaves; `memo` (value -> form, valid while
    the IR is unchanged) shares the forms of common subterms."""
    form = value_linear(value, lambda v: Linear({_atom(v, memo): 1}), memo)
    return form.const, form.terms


def same_index(a, b) -> bool:
    """Whether two index lists are the same values: equal, or of equal linear forms (unrolled
    copies compute equal indices apart; constants)."""
    return len(a) == len(b) and all(x == y or linear(x) == linear(y) for x, y in zip(a, b))


def _atom(value, memo):
    """A value as a term of a linear form: an `arith` op by structure (unrolled copies of a
    `floordiv` are one atom), anything else (a loop IV, a loaded index) by identity."""
    owner = value.owner
    if not isinstance(owner, ir.Block):
        op = owner.operation
        if op.name.startswith("arith.") and len(op.results) == 1:
            return (
                op.name,
                tuple((a, str(op.attributes[a])) for a in op.attributes),
                tuple(_frozen(linear(v, memo)) for v in op.operands),
            )
    return value


def _frozen(form):
    return form[0], frozenset(form[1].items())


def leaves(index):
    """The values (loop IVs, function arguments, opaque results) an index depends on."""
    for _, terms in index:
        for atom in terms:
            if isinstance(atom, tuple):
                yield from leaves([(c, dict(t)) for c, t in atom[2]])
            else:
                yield atom


def _inside(value, loop) -> bool:
    owner = value.owner
    op = (owner.owner if isinstance(owner, ir.Block) else owner).operation
    return op == loop or any(p.operation == loop for p in ancestors(op))


def _invariant(access, loop) -> bool:
    return (
        access.index is not None
        and not _inside(_base(access), loop)
        and not any(_inside(v, loop) for v in leaves(access.index))
    )


def _base(access):
    return access.op.operands[1 if access.store else 0]


def _address(a) -> tuple:
    """A key equal for accesses of one root at one address with one value type."""
    return a.buffer, tuple((c, frozenset(t.items())) for c, t in a.index), _value_type(a)


def _disjoint(a, b) -> bool:
    """Whether two accesses of one buffer never touch the same element: in some dimension their
    indices differ by a constant at least the extent of the lower one."""
    if a.index is None or b.index is None or len(a.index) != len(b.index):
        return False
    for (ca, ta), (cb, tb), ea, eb in zip(a.index, b.index, a.extent, b.extent):
        if ta == tb and (ca - cb >= eb or cb - ca >= ea):
            return True
    return False


def _groups(loop, accesses):
    """[[accesses of one carried group, in program order]]. Other accesses are looked up by
    buffer root and constant offset (`_Bucket`), not compared pair by pair: a loop unrolled
    for carrying holds a thousand accesses of one tile, and the pairs made a tuner
    candidate's build take a second."""
    by_root, by_address, unknown, shared = {}, {}, 0, 0
    for b in accesses:
        if b.buffer is None:
            unknown += 1
        else:
            by_root.setdefault(b.buffer, []).append(b)
            shared += bool(b.shared)
            if b.index is not None:
                by_address.setdefault(_address(b), []).append(b)
    buckets = {}
    groups, grouped = [], set()
    for a in accesses:
        if a.buffer is None or id(a) in grouped or not _invariant(a, loop):
            continue
        members = by_root[a.buffer]
        same = by_address[_address(a)]  # the accesses at a's address
        slots = [_slot(b, loop) for b in same]
        # Some access runs (at every iteration, or at one the loop's bounds prove): the address
        # is valid to load before the loop.
        if not (
            any(b.store for b in same)
            and all(s is not None for s in slots)
            and any(s == b.op or _runs_once(b, loop) for s, b in zip(slots, same))
        ):
            continue
        # No other access may touch the element: none of unknown root, none of this root
        # not provably disjoint, none of another root when both roots may alias (shared).
        ids = {id(b) for b in same}
        bucket = buckets.get(a.buffer)
        if bucket is None:
            bucket = buckets[a.buffer] = _Bucket(members)
        if (
            unknown
            or bucket.overlaps(a, ids)
            or (a.shared and shared - sum(bool(b.shared) for b in members))
        ):
            continue
        groups.append(same)
        grouped |= ids
    return groups


class _Bucket:
    """The accesses of one buffer root, by index terms (per dimension) and then by constant
    offsets, to find those that may overlap an access without comparing every pair."""

    def __init__(self, accesses):
        self.accesses = accesses
        self.opaque = (
            any(b.index is None for b in accesses) or len({len(b.index) for b in accesses}) > 1
        )
        self.terms = {}  # terms per dim -> ({offsets: [accesses]}, max extent per dim, all)
        if not self.opaque:
            for b in accesses:
                offsets, span, members = self.terms.setdefault(
                    _terms(b), ({}, [1] * len(b.index), [])
                )
                offsets.setdefault(tuple(c for c, _ in b.index), []).append(b)
                span[:] = [max(x, e) for x, e in zip(span, b.extent)]
                members.append(b)

    def overlaps(self, a, excluded) -> bool:
        """Whether an access not in `excluded` (ids) is not `_disjoint` from `a`."""

        def hit(bs):
            return any(id(b) not in excluded and not _disjoint(a, b) for b in bs)

        if self.opaque:
            return hit(self.accesses)
        mine = _terms(a)
        for terms, (offsets, span, members) in self.terms.items():
            if terms != mine:
                if hit(members):
                    return True
                continue
            # same terms in every dimension: b overlaps a only when, in each dimension,
            # a's offset - b's extent < b's offset < a's offset + a's extent
            ranges = [range(c - s + 1, c + e) for (c, _), s, e in zip(a.index, span, a.extent)]
            if math.prod(len(r) for r in ranges) > len(members):
                if hit(members):
                    return True
            elif any(hit(offsets.get(o, ())) for o in itertools.product(*ranges)):
                return True
        return False


def _terms(access) -> tuple:
    return tuple(frozenset(t.items()) for _, t in access.index)


def _slot(access, loop):
    """The op of the loop body that runs `access`: the access itself, or the result-less scf.if
    holding it, directly or in result-less scf.ifs (a version guard's branches: copies of an
    unrolled body, each in its own guard in the tail's branch); None: in another region."""
    op = access.op
    parent = op.parent.operation
    while parent != loop:
        if parent.name != "scf.if" or len(parent.results):
            return None
        op, parent = parent, parent.parent.operation
    return op


def _runs_once(access, loop) -> bool:
    """Whether `access`, in result-less scf.ifs of `loop`'s body, runs at some iteration: the
    conditions of the ifs around it hold (or fail, in an else) together at one value of the
    loop's IV, each condition a comparison of linear forms of that IV alone (a version guard's
    `k0 * -12 + 244 >= 0`)."""
    path, op = [], access.op
    while op.parent.operation != loop:
        block, parent = op.parent, op.parent.operation
        path.append((parent.operands[0], block == parent.regions[0].blocks[0]))
        op = parent
    iv = loop.regions[0].blocks[0].arguments[0]
    lo, hi, step = _constant_bounds(loop)
    tests = [(_condition(cond, iv), taken) for cond, taken in path]  # (read once per if)
    return any(all(test(k) is taken for test, taken in tests) for k in range(lo, hi, step))


# arith.cmpi predicates (eq, ne, slt, sle, sgt, sge) on the difference of the two sides
_PREDICATES = {
    0: lambda d: d == 0,
    1: lambda d: d != 0,
    2: lambda d: d < 0,
    3: lambda d: d <= 0,
    4: lambda d: d > 0,
    5: lambda d: d >= 0,
}


def _condition(cond, iv) -> Callable[[int], Optional[bool]]:
    """The value of the i1 `cond` as a function of `iv`'s value k: a signed `arith.cmpi` of
    linear forms of `iv` alone, or `arith.andi` / `arith.ori` of such; None when it is not
    one. The forms are read once: a fused loop of 10^5 iterations is then tried in Python
    arithmetic, not in IR walks."""
    owner = cond.owner
    if isinstance(owner, ir.Block):
        return lambda k: None
    op = owner.operation
    if op.name in ("arith.andi", "arith.ori"):
        a, b = (_condition(v, iv) for v in op.operands)
        both = op.name == "arith.andi"
        return lambda k: _combine(a(k), b(k), both)
    if op.name != "arith.cmpi":
        return lambda k: None
    predicate = _PREDICATES.get(ir.IntegerAttr(op.attributes["predicate"]).value)

    def leaf(v):
        return Linear({0: 1}) if v == iv else None

    a, b = (value_linear(v, leaf) for v in op.operands)
    if predicate is None or a is None or b is None:
        return lambda k: None
    d = a - b
    const, coef = d.const, d.terms.get(0, 0)
    return lambda k: predicate(const + coef * k)


def _combine(a: Optional[bool], b: Optional[bool], both: bool) -> Optional[bool]:
    if a is None or b is None:
        return None
    return (a and b) if both else (a or b)


def _value_type(a):
    return a.op.operands[0].type if a.store else a.op.results[0].type


def _unrollable(loop, accesses):
    """Small nests of serial loops directly in `loop` (at most MAX_UNROLLED body copies) holding
    a store whose address is invariant in `loop` but not in the nest: unrolled, they leave
    stores at addresses invariant in `loop`. Those in result-less `scf.if`s count in a loop of
    more than SHORT_LOOP steps (over a few steps the guarded copies cost more than the loads
    and stores they save)."""
    out = []
    direct = [o.operation for o in loop.regions[0].blocks[0].operations]
    for op in _body_ops(loop) if _trip_count(loop) > SHORT_LOOP else direct:
        nest = _small_nest(op) if op.name == "scf.for" else None
        if not nest:
            continue
        ivs = [loop_iv(o) for o in nest]
        stores = [
            a
            for a in accesses
            if a.store and a.index is not None and any(_loop_of(a.op) == o for o in nest)
        ]
        if any(
            all(any(v == iv for iv in ivs) or not _inside(v, loop) for v in leaves(a.index))
            and any(v == iv for v in leaves(a.index) for iv in ivs)
            for a in stores
        ):
            out.append(op)
    return out


def _body_ops(loop) -> list:
    """The ops of `loop`'s body and of the result-less `scf.if`s there, nested or not (a
    version guard's partial branch: the guarded loop of a split that does not divide)."""
    out, blocks = [], [loop.regions[0].blocks[0]]
    while blocks:
        for op in blocks.pop().operations:
            op = op.operation
            out.append(op)
            if op.name == "scf.if" and not len(op.results):
                blocks += [b for r in op.regions for b in r.blocks]
    return out


def _loop_of(op):
    """The innermost `scf.for` around `op` (a store of an unrolled nest may sit in its guard)."""
    return next((p for p in ancestors(op) if p.name == "scf.for"), None)


def _small_nest(op):
    """`_nest(op)` when it is plain serial loops of at most MAX_UNROLLED body copies, else
    None."""
    nest = _nest(op)
    if (
        any(o.name != "scf.for" or len(o.results) or not _plain_serial(o) for o in nest)
        or math.prod(_trip_count(o) for o in nest) > MAX_UNROLLED
    ):
        return None
    return nest


def _nest(op):
    """`op` and the loops nested in it, outermost first, except loops that already carry
    values (results: an inner reduction this pass rewrote) and what they hold: those stay
    loops, one per unrolled copy. So the 2x2 tiles around a carried `k_1` loop unroll, and
    the loads and stores of their accumulators around it can be carried by the outer `k_0`
    loop too (LLVM did that on its own only when it could tell the tiles' addresses apart)."""
    out = [op]
    for region in op.regions:
        for block in region.blocks:
            for child in block.operations:
                child = child.operation
                if child.name == "scf.for" and len(child.results):
                    continue
                inner = _nest(child)
                out += (
                    inner if child.name in ("scf.for", "scf.while", "scf.parallel") else inner[1:]
                )
    return out


def _constant_bounds(loop) -> Bounds:
    """(lower bound, upper bound, step) of an scf.for whose bounds are constants."""
    bounds = scf_bounds(loop)
    assert bounds is not None, "a loop of constant bounds"
    return bounds


def _trip_count(loop) -> int:
    return iterations(_constant_bounds(loop))


def _unroll(nests):
    """Replace each loop of the nests by one copy of its body per iteration, its IV a constant
    (innermost loops first)."""
    for op in [o for n in nests for o in reversed(_nest(n))]:
        for value in range(*_constant_bounds(op)):
            copy = op.clone(ip=ir.InsertionPoint(op))
            body = copy.regions[0].blocks[0]
            with ir.InsertionPoint(copy):
                const = index_const(value, op.location)
            body.arguments[0].replace_all_uses_with(const)
            move_body(body, copy)
            copy.erase()
        op.erase()


def _rewrite(loop, groups):
    """Carry each group's value through the loop: load before it, store after it."""
    loc = loop.location
    n_old = len(loop.results)
    inits, addresses = [], []
    with ir.InsertionPoint(loop), loc:
        for g in groups:
            first = g[0]
            base = _base(first)
            index = [_hoist(v, loop) for v in _indices(first)]
            addresses.append((base, index))
            t = _value_type(first)
            if isinstance(t, ir.VectorType):
                inits.append(vector.load(t, base, index))
            else:
                inits.append(memref.load(base, index))
        lo, hi, step = list(loop.operands)[:3]
        new = scf.ForOp(lo, hi, step, list(list(loop.operands)[3:]) + inits)
    for name in loop.attributes:  # (iterating an attribute map gives the names)
        if name != "operandSegmentSizes":
            new.operation.attributes[name] = loop.attributes[name]
    old_body, body = loop.regions[0].blocks[0], new.body
    for old, arg in zip(old_body.arguments, body.arguments):
        old.replace_all_uses_with(arg)
    old_yield = list(old_body.operations)[-1].operation
    current = list(body.arguments)[1 + n_old :]
    slots = [(_slot(a, loop), n, a) for n, g in enumerate(groups) for a in g]
    for op in list(old_body.operations):
        op = op.operation
        mine = [(n, a) for slot, n, a in slots if slot == op]
        if mine and op.name == "scf.if":
            _carry_through_if(op, mine, current)
            continue
        for n, a in mine:
            _step(a, n, current)
    with ir.InsertionPoint(body), loc:
        term = scf.YieldOp(list(old_yield.operands) + current)
    move_body(old_body, term.operation)
    for a in [a for g in groups for a in g]:
        a.op.erase()
    old_yield.erase()
    for i in range(n_old):
        loop.results[i].replace_all_uses_with(new.results[i])
    with ir.InsertionPoint.after(new.operation), loc:
        for (base, index), result in zip(addresses, list(new.results)[n_old:]):
            if isinstance(result.type, ir.VectorType):
                vector.store(result, base, index)
            else:
                memref.store(result, base, index)
    loop.erase()
    _first_iteration_inits(new, n_old)


def _first_iteration_inits(loop, n_old):
    """A carried value's reduction init (`if k == lo: C = 0`, a branch per value and
    iteration once in LLVM) becomes the value the loop starts with: the init of an `scf.if`
    that can hold at the first iteration only (`_first_only`), computes its values without
    effects from values defined outside the loop, and otherwise passes the carried values on,
    is hoisted before the loop, and the if is dropped (the loop runs at least once:
    `_plain_serial`). When the test at the first iteration still depends on loops outside (a
    split k: `k0 * 64 + k1 == 0` tested in k1's loop), the hoisted init is an `scf.if` on the
    test at k1 = lo that passes the loop's old start values on otherwise: the loop around it
    hoists that one in turn when it carries the values too."""
    body = loop.body
    carried = list(body.arguments)[1 + n_old :]
    iv = body.arguments[0]
    lo, step = (constant_int(v) for v in list(loop.operands)[:3:2])
    if lo is None or step is None:
        return
    for op in list(body.operations):
        op = op.operation
        if op.name != "scf.if" or not op.results:
            continue
        at_first = _first_only(op.operands[0], iv, lo, step)
        if at_first is None:
            continue
        then, other = (op.regions[k].blocks[0] for k in (0, 1))
        if len(list(other.operations)) != 1:
            continue
        # (the address of a store that carrying dropped, left in an init's then-block, of a
        # constant IV that unrolling defined in the loop, would keep the init from being hoisted)
        erase_unused([o.operation for o in reversed(list(then.operations)[:-1])], no_effects)
        found = [
            next((n for n, a in enumerate(carried) if a == v), None)
            for v in list(other.operations)[0].operands
        ]
        passed = [n for n in found if n is not None]
        inner = [o.operation for o in then.operations]
        if len(passed) != len(found) or not _hoistable(inner, loop):
            continue
        olds = [loop.operands[3 + n_old + n] for n in passed]
        if at_first:
            values = [_hoist(v, loop) for v in inner[-1].operands]
        else:
            values = _hoisted_if(op, loop, iv, lo, olds)
        for k, n in enumerate(passed):
            loop.operands[3 + n_old + n] = values[k]
            op.results[k].replace_all_uses_with(carried[n])
            init = olds[k]
            owner = init.owner
            if (
                not isinstance(owner, ir.Block)
                and owner.operation.name in ("vector.load", "memref.load")
                and not list(init.uses)
            ):
                owner.operation.erase()
        op.erase()


def _hoisted_if(if_op, loop, iv, lo, olds) -> list:
    """Before `loop`, a copy of the init `if_op` testing its condition at `iv = lo` whose else
    yields `olds` (the loop's start values); its results."""
    loc = if_op.location
    with ir.InsertionPoint(loop), loc:
        first = index_const(lo, loc)
    cond = _hoist(if_op.operands[0], loop, {iv: first})
    with ir.InsertionPoint(loop), loc:
        new = scf.IfOp(cond, [v.type for v in olds], has_else=True)
    with ir.InsertionPoint(else_block(new)), loc:
        scf.YieldOp(olds)
    then = if_op.regions[0].blocks[0]
    term = list(then.operations)[-1].operation
    with ir.InsertionPoint(new.then_block), loc:
        new_term = scf.YieldOp(list(term.operands))
    move_body(then, new_term.operation)
    term.erase()
    return list(new.results)


def _first_only(cond, iv, lo, step) -> Optional[bool]:
    """Whether `cond` can hold at the loop's first iteration only: it is `e == 0` (`arith.cmpi
    eq`) of a linear form e whose terms (`iv` and the IVs of loops around, each at least 0 and
    stepping up) all have the sign of its value at the first iteration, or 0 there, so every
    later step moves it away from 0; or an `arith.andi` one of whose operands is such (the
    init of a reduction over several loops, `if c == 0 and kh == 0 and kw == 0`, tested in the
    innermost one). True: it holds at the first iteration whatever the loops around; False: it
    depends on them there; None: it may hold later too."""
    owner = cond.owner
    if isinstance(owner, ir.Block):
        return None
    if owner.operation.name == "arith.andi":
        parts = [_first_only(v, iv, lo, step) for v in owner.operation.operands]
        if all(p is None for p in parts):
            return None
        return all(p or _constant_eq(v) for p, v in zip(parts, owner.operation.operands))
    if owner.operation.name != "arith.cmpi":
        return None
    cmp = owner.operation
    if ir.IntegerAttr(cmp.attributes["predicate"]).value != 0:  # eq
        return None
    a, b = cmp.operands
    form = value_linear(a, _leaf) - value_linear(b, _leaf)
    if form.terms.get(iv, 0) == 0:
        return None
    first = form.const + form.terms[iv] * lo
    sign = 1 if form.terms[iv] * step > 0 else -1
    if first * sign < 0:
        return None
    for atom, c in form.terms.items():
        if atom != iv and (c * sign < 0 or not _counts_up_from_zero(atom)):
            return None
    return first == 0 and len(form.terms) == 1


def _constant_eq(cond) -> bool:
    """`cond` is `arith.cmpi eq` of equal constants (a test an outer loop's hoisted init left
    at the inner loop's first iteration: `0 == 0`)."""
    owner = cond.owner
    if isinstance(owner, ir.Block) or owner.operation.name != "arith.cmpi":
        return False
    cmp = owner.operation
    if ir.IntegerAttr(cmp.attributes["predicate"]).value != 0:
        return False
    a, b = (constant_int(v) for v in cmp.operands)
    return a is not None and a == b


def _leaf(value):
    return Linear({value: 1})


def _counts_up_from_zero(value) -> bool:
    """`value` is the IV of an `scf.for` or `scf.parallel` with constant lower bounds at least
    0 and positive steps (so it is never negative)."""
    owner = value.owner
    if not isinstance(owner, ir.Block):
        return False
    op = owner.owner.operation
    args = list(owner.arguments)
    if op.name == "scf.for":
        if value != args[0]:
            return False
        bounds = [constant_int(op.operands[0])], [constant_int(op.operands[2])]
    elif op.name == "scf.parallel":
        n = len(args)
        if not any(value == a for a in args):
            return False
        ops = list(op.operands)
        bounds = [constant_int(v) for v in ops[:n]], [constant_int(v) for v in ops[2 * n : 3 * n]]
    else:
        return False
    lows, steps = bounds
    return all(x is not None and x >= 0 for x in lows) and all(
        s is not None and s > 0 for s in steps
    )


def _hoistable(block_ops, loop) -> bool:
    """A then-block (its ops, then its yield) of ops without effects or regions whose operands,
    and the values it yields, come from outside `loop` or from the block's own ops."""
    made = []
    for op in block_ops:
        if op is not block_ops[-1] and (op.regions or not known_effects(op)):
            return False
        if any(_inside(v, loop) and not any(v == m for m in made) for v in op.operands):
            return False
        made += list(op.results)
    return True


def _step(access, n, current):
    """In program order, a load reads the value carried so far; a store replaces it."""
    if access.store:
        current[n] = access.op.operands[0]
    else:
        access.op.results[0].replace_all_uses_with(current[n])


def _carry_through_if(if_op, mine, current):
    """Rebuild an scf.if holding accesses `mine` [(group, access)], directly or in result-less
    scf.ifs in it (rebuilt the same way), so that it yields the values of the groups it touches
    (unchanged on a path that does not store them)."""
    touched = sorted({n for n, _ in mine})
    with ir.InsertionPoint(if_op), if_op.location:
        new = scf.IfOp(if_op.operands[0], [current[n].type for n in touched], has_else=True)
    by_op = {}  # op of a branch -> the accesses it is or holds
    for n, a in mine:
        by_op.setdefault(_child_of(a.op, if_op), []).append((n, a))
    for region, block in ((0, new.then_block), (1, else_block(new))):
        local = list(current)
        old = if_op.regions[region].blocks[0] if len(if_op.regions[region].blocks) else None
        for o in list(old.operations) if old is not None else []:
            o = o.operation
            held = by_op.get(o, [])
            if held and held[0][1].op != o:
                _carry_through_if(o, held, local)
                continue
            for n, a in held:
                _step(a, n, local)
        with ir.InsertionPoint(block), if_op.location:
            term = scf.YieldOp([local[n] for n in touched])
        if old is not None:
            move_body(old, term.operation)
    if_op.erase()
    for k, n in enumerate(touched):
        current[n] = new.results[k]


def _child_of(op, ancestor):
    """The op directly in a region of `ancestor` that is or holds `op`."""
    while op.parent.operation != ancestor:
        op = op.parent.operation
    return op


def _indices(access):
    first = 2 if access.store else 1
    return list(access.op.operands)[first:]


def _hoist(value, loop, subst=None):
    """`value` (computed from values defined outside `loop`, and the keys of `subst`, which
    it replaces by their values) available before `loop`: the arith ops inside the loop that
    compute it are cloned before it."""
    if subst:
        for old, new in subst.items():
            if value == old:
                return new
    if not _inside(value, loop):
        return value
    op = value.owner.operation
    operands = [_hoist(v, loop, subst) for v in op.operands]
    clone = op.clone(ip=ir.InsertionPoint(loop))
    for i, v in enumerate(operands):
        clone.operands[i] = v
    return clone.results[list(op.results).index(value)] if len(op.results) > 1 else clone.result


def _memory_inits(f, noalias):
    """A reduction init left on a value in memory (`%v = if k0 == 0 { 0 } else { load C }`: the
    loop `k0` could not carry C, its tail's accesses nested in loops under a version guard)
    becomes a store of the init before the loop, and the if the load (`_memory_init`). As an
    `arith.select` on the accumulator the init is a data dependence of each accumulation on
    the one before it (LLVM's masked move merges the old value), so the latency-bound chains
    of consecutive outputs ran one after the other instead of overlapping."""
    for op in [o for o in walk(f) if o.name == "scf.if" and len(o.results)]:
        plan = _memory_init(op, noalias)
        if plan is None:
            continue
        loop, loads = plan
        then = op.regions[0].blocks[0]
        with ir.InsertionPoint(loop), op.location:
            values = [_hoist(v, loop) for v in list(then.operations)[-1].operands]
            for value, load in zip(values, loads):
                base = load.operands[0]
                index = [_hoist(v, loop) for v in list(load.operands)[1:]]
                if load.name == "vector.load":
                    vector.store(value, base, index)
                else:
                    memref.store(value, base, index)
        for result, load in zip(op.results, loads):
            result.replace_all_uses_with(load.results[0])
        op.erase()


def _memory_init(op, noalias):
    """(the loop, the loads) when the `scf.if` `op` is such an init: its condition holds at the
    first iteration of the `scf.for` around it only (`_first_only`), with nothing but
    `scf.if`s in between that the loop's first iteration enters (`_condition`); its then-block
    computes its values from values defined outside the loop; its else-block yields loads, in
    the if's block, at addresses defined outside the loop of an alloc or a `noalias` argument;
    nothing before the if in the loop's body writes memory; and a store of the same address
    follows each load in the if's block with no access to the buffer between (so the store
    before the loop changes no value that the loop or the code after it reads). None
    otherwise."""
    other = op.regions[1].blocks[0] if len(op.regions[1].blocks) else None
    if other is None or len(list(other.operations)) != 1:
        return None
    loop, path = op, []
    while loop.parent.operation.name == "scf.if":
        parent = loop.parent.operation
        path.append((parent.operands[0], loop.block == parent.regions[0].blocks[0]))
        loop = parent
    loop = loop.parent.operation
    bounds = scf_bounds(loop) if loop.name == "scf.for" else None
    if bounds is None or iterations(bounds) < 1:
        return None
    lo, _, step = bounds
    iv = loop_iv(loop)
    if _first_only(op.operands[0], iv, lo, step) is not True or not all(
        _condition(cond, iv)(lo) is taken for cond, taken in path
    ):
        return None
    then = [o.operation for o in op.regions[0].blocks[0].operations]
    if not _hoistable(then, loop):
        return None
    yielded = list(other.operations)[0].operands
    loads = [x for x in (_init_load(v, op, loop, noalias) for v in yielded) if x is not None]
    if len(loads) != len(yielded) or _writes_before(op, loop):
        return None
    return loop, loads


def _init_load(value, if_op, loop, noalias):
    """The `memref.load` / `vector.load` that yields `value`, when it fits `_memory_init`."""
    owner = value.owner
    if isinstance(owner, ir.Block) or owner.operation.name not in ("memref.load", "vector.load"):
        return None
    load = owner.operation
    base, index = load.operands[0], list(load.operands)[1:]
    (buffer, shared), _ = root(base, noalias)
    if (
        load.block != if_op.block
        or buffer is None
        or shared
        or _inside(base, loop)
        or not all(_pure_outside(v, loop) for v in index)
        or not _reused_by_next_run(base, index, loop)
    ):
        return None
    ops = [o.operation for o in if_op.block.operations]
    for o in ops[ops.index(if_op) + 1 :]:
        if o.name == ("vector.store" if load.name == "vector.load" else "memref.store") and (
            o.operands[1] == base and same_index(list(o.operands)[2:], index)
        ):
            return load
        if any(_touches(a, buffer, noalias) for a in [o, *walk_all(o)]):
            return None
    return None


def _reused_by_next_run(base, index, loop) -> bool:
    """Whether the serial `scf.for` around `loop` runs it again on the same element (its
    address does not depend on that loop): LLVM then keeps the element in a register across
    the runs, where a select of the init would make each run's sum wait for the last one's.
    Elsewhere each run starts from a load of its own element, off any chain."""
    outer = next((p for p in ancestors(loop) if p.name == "scf.for"), None)
    return (
        outer is not None
        and not _inside(base, outer)
        and all(_pure_outside(v, outer) for v in index)
    )


def _touches(op, buffer, noalias) -> bool:
    """Whether `op` may access `buffer` (a root): a memory access of it, or of an unknown
    root, or an op of unknown effects."""
    if op.name in ACCESSES:
        (other, _), _ = root(op.operands[ACCESSES[op.name][0]], noalias)
        return other is None or other == buffer
    return op.name in OTHER_ACCESSES or not known_effects(op)


def _writes_before(op, loop) -> bool:
    """Whether an op before `op` in the loop's body (or before an if around it) may write."""
    while op != loop:
        ops = [o.operation for o in op.block.operations]
        for o in ops[: ops.index(op)]:
            if any(_may_write(a) for a in [o, *walk_all(o)]):
                return True
        op = op.parent.operation
    return False


def _may_write(op) -> bool:
    """Whether `op` may write memory: a store, an access not analysed here, or an op of
    unknown effects."""
    return (
        op.name in STORES
        or op.name in OTHER_ACCESSES
        or not (op.name in ACCESSES or known_effects(op))
    )


def _pure_outside(value, loop) -> bool:
    """Whether `value` is defined outside `loop` or computed in it by pure ops from such."""
    if not _inside(value, loop):
        return True
    owner = value.owner
    if isinstance(owner, ir.Block):
        return False
    op = owner.operation
    return op.name.startswith(NO_EFFECT_PREFIXES) and all(
        _pure_outside(v, loop) for v in op.operands
    )
