"""Stage `affine-to-scf`: affine loops -> scf loops that honour the TensorIR loop kind.

Upstream `lower-affine` drops the discardable `tir.kind` attribute, so this stage lowers the
affine ops itself (they are few: constant-bound `affine.for`, `affine.apply`, `affine.if`):

    tir.kind      becomes
    serial        scf.for
    parallel      scf.parallel (OpenMP later, see scf_to_llvm)
    vectorized    (what `vectorize-loops` left a loop) scf.for + #llvm.loop_annotation<
                  vectorize = <disable = false, width = W>, unroll = <disable = true>>
                  (W fills the target's widest vector register, cpu_model.py: zmm code with
                  AVX-512, ymm with AVX2; without
                  `unroll disable` LLVM fully unrolls a short loop first and it stays scalar)
    unroll        scf.for + #llvm.loop_annotation<unroll = <full = true>>

Float mul/add/sub get fastmath `contract` so LLVM forms FMAs (as TVM builds with fp-contract=fast),
except an add/sub that updates an accumulator carried by a loop around it (inside that loop, a
tile of accumulators: one chain per element and register) when that loop
carries fewer such chains than the target's FMA units need to stay busy (cpu_model.py:
FMA latency over throughput in LLVM's model, 8 on most cores; a chain whose loops are short
counts the chains of the runs after it that the core's scheduler queue holds) and the added
terms come from L2 at worst (chain_footprint.py: the lines the chain's loads touch over the
whole reduction nest fit the target's L2 sets and ways): there the loop runs at the latency of the chain, and mul +
add (the add alone on the chain: 2-3 cycles on recent cores) beats an FMA (4 cycles); see
`_latency_bound_updates`. Loads that miss L1 but hit L2 overlap with the chain: a matmul tile
of two vector<4> accumulators over k, whose column of B (rows 1 KiB apart) fills only 4 L1
sets, ran faster with mul + add on a Sapphire Rapids core; over a column that misses L2 both
took the same time (benchmarks/README.md, "session 9, stage figures"). Functions get
`llvm.emit_c_interface` (the runtime calls `_mlir_ciface_<name>`) and, with `tir.noalias`,
`llvm.noalias` on their memref arguments. All remaining `tir.*` attributes are dropped.
"""

import math
from typing import Optional

from mlir import ir
from mlir.dialects import scf

from tir_mlir.dialect.ops import Loop, integer_set
from tir_mlir.ir.same_value import same_value
from tir_mlir.passes.lowering.buffer_roots import declared_noalias
from tir_mlir.passes.lowering.common import (
    affine_to_arith,
    ancestors,
    build_error,
    constant_extent,
    constant_loop,
    functions,
    index_const,
    loop_iv,
    move_body,
    set_to_arith,
    value_bits,
    walk,
)
from tir_mlir.passes.lowering.chain_footprint import (
    chain_loops,
    depends_on,
    feeding_loads,
    misses_cache,
)
from tir_mlir.passes.lowering.cpu_model import DEFAULT_FMA_QUEUE, VECTOR_BITS, cpu_model, named_l2

CONTRACT_OPS = ("arith.mulf", "arith.addf", "arith.subf")
# Independent accumulation chains an innermost loop needs before FMAs pay off, without a CPU
# target: FMA latency (4) x FMA units (2); with fewer, the loop waits on the chain and the
# shorter add latency wins. A CPU target's come from LLVM's scheduling model (cpu_model.py).
FMA_CHAINS = 8


class AffineToScf:
    name = "affine-to-scf"

    def __init__(
        self,
        target_kinds=("serial", "parallel", "vectorized", "unroll"),
        vector_bits=VECTOR_BITS,
        fma_chains=lambda bits: FMA_CHAINS,
        cache=None,
        fma_queue=DEFAULT_FMA_QUEUE,
    ):
        self.kinds, self.vector_bits = target_kinds, vector_bits
        self.fma_chains = fma_chains  # value bits -> FMA chains that fill the units
        self.fma_queue = fma_queue  # FMAs waiting for operands the core holds
        # (sets, ways, line bytes) of the cache a latency-bound chain's loads must fit: L2
        self.cache = cache or named_l2("")

    @classmethod
    def for_target(cls, target):
        if str(target).split()[0] in ("cuda", "nvptx"):
            return cls()
        model = cpu_model(target)
        return cls(
            vector_bits=model.vector_bits,
            fma_chains=model.fma_chains,
            cache=(model.l2_sets, model.l2_ways, model.line_bytes),
            fma_queue=model.fma_queue,
        )

    def __call__(self, module: ir.Module):
        for f in functions(module):
            no_contract = _latency_bound_updates(
                f, self.fma_chains, self.cache, self.vector_bits, self.fma_queue
            )
            # Only the ops acted on: erasing an affine.if frees its yields (reading a freed
            # op's name crashes the process).
            for op in [
                o
                for o in walk(f)
                if o.name in ("affine.apply", "affine.if")
                or o.name in CONTRACT_OPS
                and o not in no_contract
            ]:
                if op.name == "affine.apply":
                    _lower_apply(op)
                elif op.name == "affine.if":
                    _lower_if(op)
                else:
                    op.attributes["fastmath"] = ir.Attribute.parse("#arith.fastmath<contract>")
            # Innermost loops first, so each loop's element type is known for vector widths.
            for op in reversed([o for o in walk(f) if o.name == "affine.for"]):
                self.lower_for(op)
            for op in walk(f):
                if op.name.startswith("affine."):
                    raise build_error(op, "cannot lower this affine op")
            function_attrs(f)
        for a in [a for a in module.operation.attributes if a.startswith("tir.")]:
            del module.operation.attributes[a]

    def lower_for(self, op):
        """An `affine.for` (its body already free of affine ops that need its IV as a dim) as
        the scf loop of its kind, in place."""
        kind = Loop(op).kind
        if kind not in self.kinds:
            raise build_error(op, f"loop kind '{kind}' is not supported by this target")
        step = Loop(op).step
        loc = op.location
        old_body = op.regions[0].blocks[0]
        with ir.InsertionPoint(op), loc:
            lo, hi = (_bound(op, b, loc) for b in (Loop(op).lower_bound, Loop(op).upper_bound))
            st = index_const(step, loc)
            if kind == "parallel":
                new = scf.ParallelOp([], [lo], [hi], [st], [], loc=loc)
                body = new.regions[0].blocks.append(ir.IndexType.get())
                with ir.InsertionPoint(body):
                    term = scf.ReduceOp([], 0, loc=loc)
            else:
                new = scf.ForOp(lo, hi, st, loc=loc)
                body = new.body
                with ir.InsertionPoint(body):
                    term = scf.YieldOp([], loc=loc)
                annotation = _annotation(kind, old_body, self.vector_bits)
                if annotation:
                    new.operation.attributes["loop_annotation"] = ir.Attribute.parse(annotation)
        old_body.arguments[0].replace_all_uses_with(body.arguments[0])
        move_body(old_body, term.operation)
        op.erase()


def _latency_bound_updates(f, fma_chains, cache, vector_bits, fma_queue=DEFAULT_FMA_QUEUE):
    """The add/sub ops `x = x + e` (load, add, store of one address, scalar or vector) whose
    address does not depend on a serial loop around them, the chain's loop, in chain loops
    holding fewer than half the chains of `fma_chains(bits)` (the widest of their values' bits):
    a mul + add takes the FMA's latency off the chain but is two ops on the same ports, so with
    half as many chains or more the doubled ops keep the ports busy as long as the FMA chains
    wait (a depthwise 3x3's 4 two-lane accumulators ran faster as FMAs; its fma_chains is 8).
    The loops
    inside the chain's loop that the address depends on make a tile of accumulators, one chain
    per element (a conv tile's 2 rows inside its reduction loops): its chains interleave, so
    an update counts as many chains as the tile has elements, times the registers of
    `vector_bits` its value takes (a vector<32xf64> is 4 zmm chains). An accumulator vectorized
    across rows is read lane by lane into a `vector.from_elements` and stored back through one
    `vector.extract` per lane: its lanes are one update, one vector chain.
    A chain also ends where its loops do (`chain_loops`): the next run (the next tile of a
    depthwise 3x3's 9-tap window) is chains of its own, which the core starts while this one
    waits, as far as its scheduler queue holds their FMAs (`_chains_in_flight`).
    A CPU rule: inside a `gpu.launch` an FMA costs what an add does, so it always contracts."""
    by_loop = []  # [(loop, [(update, chains, address, ops)], [run])]; ops compare with ==
    for op in walk(f):
        if op.name not in ("memref.store", "vector.store"):
            continue
        address = (op.operands[1], list(op.operands)[2:])
        loop, tile = _chain_loop(op, address[1])
        if (
            loop is None
            or Loop(loop).kind != "serial"
            or any(p.name == "gpu.launch" for p in ancestors(loop))
        ):
            continue
        update = _stored_update(op.operands[0])
        if update is None or not any(_loads(v, address) for v in update.operands):
            continue
        iv = loop_iv(loop)
        loops = chain_loops(op)
        misses = misses_cache(update, loops, cache)
        if misses if misses is not None else _strided_loads(update, iv):
            continue
        entry = next((e for e in by_loop if e[0] == loop), None)
        if entry is None:
            by_loop.append(entry := (loop, [], []))
        if any(u == update for u, _, _, _ in entry[1]):
            continue  # another lane of a vector counted already
        # Updates of one address (an unrolled window's taps) extend one chain.
        registers = -(-value_bits(update.results[0].type) // vector_bits)
        known = any(_same_address(a, address) for _, _, a, _ in entry[1])
        entry[1].append((update, 0 if known else tile * registers, address, tile * registers))
        entry[2].append(_run_trips(loops, address[1]))
    return [
        u
        for _, updates, runs in by_loop
        if 2 * _chains_in_flight(updates, runs, fma_queue)
        < fma_chains(max(value_bits(u.results[0].type) for u, _, _, _ in updates))
        for u, _, _, _ in updates
    ]


def _run_trips(loops, indices) -> Optional[int]:
    """Iterations of one run of a chain's loops (`chain_loops`) when the next run is another
    accumulator: the op around them is the function or a loop that `indices` depend on. None
    where one has no constant trip count, or the chain may go on past them (`chain_loops`
    stops at a guard, or at a loop that writes the address elsewhere: the unrolled copies of
    a reduction loop, a tail)."""
    lps = [Loop(op) for op in loops]
    if not lps or not all(constant_loop(lp) for lp in lps):
        return None
    parent = next(ancestors(loops[-1]), None)
    if parent is not None and (
        parent.name != "affine.for"
        or Loop(parent).kind in ("serial", "unroll")
        and not any(depends_on(i, Loop(parent).iv) for i in indices)
    ):
        return None
    return math.prod(constant_extent(lp) for lp in lps)


def _chains_in_flight(updates, runs, fma_queue) -> float:
    """The chains a chain loop's updates keep in flight: its own, or, where a run of the chain
    loops is short, the runs after it the core holds while this one waits: as many FMAs as the
    scheduler queue that keeps them (`fma_queue`) over the updates of one chain in one run (a
    depthwise 3x3 tile: 9 per chain, so 112 / 9 chains of the tiles after it on Sapphire
    Rapids, where one chain of 9 taps is all its loops hold)."""
    chains = sum(n for _, n, _, _ in updates)
    if any(r is None for r in runs):
        return chains
    per_chain = max(runs) * sum(k for _, _, _, k in updates) / chains
    return max(chains, fma_queue / per_chain)


def _chain_loop(store, indices):
    """(the innermost `affine.for` around `store` whose IV its `indices` do not depend on, the
    number of elements the loops inside it address: constant loops, serial or unrolled), or
    (None, 0) when a loop in between is of another kind or has no constant trip count."""
    tile = 1
    for p in ancestors(store):
        if p.name != "affine.for":
            continue
        lp = Loop(p)
        if not any(depends_on(i, lp.iv) for i in indices):
            return p, tile
        if lp.kind not in ("serial", "unroll") or not constant_loop(lp):
            return None, 0
        tile *= constant_extent(lp)
    return None, 0


def _strided_loads(update, iv) -> bool:
    """Whether the term added on the chain loads across rows as `iv` steps (an index other than
    the last depends on it: the unscheduled matmul's B[k, j]). Such a loop waits on its loads, not
    on the chain: the FMA's fewer micro-ops let more loads overlap (an unscheduled matmul), while
    a chain fed from contiguous rows (a direct convolution) runs at the add's latency (figures:
    benchmarks/README.md, "session 9, stage figures")."""
    loads = feeding_loads(update)
    return any(depends_on(i, iv) for load in loads for i in list(load.operands)[1:-1])


def _stored_update(value):
    """The add/sub op whose result a store writes: `value` itself, or a lane of it (a
    `vector.extract` at a constant position: an accumulator vectorized across rows is written
    back lane by lane); None for any other value."""
    owner = value.owner
    if not isinstance(owner, ir.OpView):
        return None
    op = owner.operation
    if op.name == "vector.extract" and len(op.operands) == 1:
        return _stored_update(op.operands[0])
    return op if op.name in ("arith.addf", "arith.subf") else None


def _loads(value, address) -> bool:
    """Whether `value` is loaded from `address`, or is a vector one of whose lanes is (an
    accumulator vectorized across rows is read lane by lane, then `vector.from_elements`)."""
    owner = value.owner
    if not isinstance(owner, ir.OpView):
        return False
    if owner.operation.name == "vector.from_elements":
        return any(_loads(v, address) for v in owner.operation.operands)
    if owner.operation.name not in ("memref.load", "vector.load"):
        return False
    ops = list(owner.operation.operands)
    return _same_address((ops[0], ops[1:]), address)


def _same_address(a, b) -> bool:
    """Whether two (buffer, indices) name one address (each flattened block computes its own
    indices: the same address in other SSA values), or the same addresses over copies of one
    loop (`_copies`: the tile loop of each unrolled step of the chain's loop)."""
    return (
        a[0] == b[0]
        and len(a[1]) == len(b[1])
        and all(same_value(x, y, same_argument=_copies) for x, y in zip(a[1], b[1]))
    )


def _copies(a, b) -> bool:
    """Whether block arguments `a` and `b` are the IVs of two copies of one loop (unrolling
    a loop copies the loops inside it: same name, same constant bounds), which run over the
    same values."""
    loops = [x.owner.owner for x in (a, b)]
    if any(op is None or op.name != "affine.for" for op in loops):
        return False
    la, lb = (Loop(op) for op in loops)
    if la.iv != a or lb.iv != b or not (constant_loop(la) and constant_loop(lb)):
        return False
    names = [op.attributes["tir.name"] if "tir.name" in op.attributes else None for op in loops]
    return (
        names[0] is not None
        and names[0] == names[1]
        and (la.min, la.extent, la.step) == (lb.min, lb.extent, lb.step)
    )


def _annotation(kind, body, vector_bits):
    if kind == "unroll":
        return "#llvm.loop_annotation<unroll = <full = true>>"
    if kind == "vectorized":
        width = vector_bits // element_bits(body)
        # LLVM's full unroll runs before its loop vectorizer and would drop the request.
        return (
            f"#llvm.loop_annotation<vectorize = <disable = false, width = {width} : i32>, "
            "unroll = <disable = true>>"
        )
    return None


def element_bits(body) -> int:
    """Narrowest element type stored in the loop body (32 when it stores nothing)."""
    bits = [
        ir.MemRefType(o.operands[1].type).element_type
        for o in walk(body.owner)
        if o.name == "memref.store"
    ]
    widths = [
        t.width for t in bits if isinstance(t, (ir.IntegerType, ir.FloatType)) and t.width >= 8
    ]
    return min(widths, default=32)


def _bound(op, bound, loc) -> ir.Value:
    """A loop bound as an index value: a constant, or arith on outer loop variables."""
    m, operands = bound
    if len(m.results) != 1:
        raise build_error(op, "only loops with single-expression bounds can be lowered")
    return affine_to_arith(m.results[0], operands[: m.n_dims], operands[m.n_dims :], loc)


def _lower_apply(op):
    m = ir.AffineMapAttr(op.attributes["map"]).value
    operands = list(op.operands)
    with ir.InsertionPoint(op):
        v = affine_to_arith(m.results[0], operands[: m.n_dims], operands[m.n_dims :], op.location)
    op.results[0].replace_all_uses_with(v)
    op.erase()


def _lower_if(op):
    if len(op.results):
        raise build_error(op, "affine.if with results is not supported")
    iset = integer_set(op.attributes["condition"])
    operands = list(op.operands)
    loc = op.location
    has_else = len(op.regions[1].blocks) > 0
    with ir.InsertionPoint(op):
        cond = set_to_arith(iset, operands[: iset.n_dims], operands[iset.n_dims :], loc)
        new = scf.IfOp(cond, has_else=has_else, loc=loc)
    for region_idx, block in ((0, new.then_block), (1, new.else_block if has_else else None)):
        if block is None:
            continue
        with ir.InsertionPoint(block):
            term = scf.YieldOp([], loc=loc)
        move_body(op.regions[region_idx].blocks[0], term.operation)
    op.erase()


def function_attrs(f):
    """`llvm.emit_c_interface` on a function (C callers and the runtime call
    `_mlir_ciface_<name>` with memref descriptors), `llvm.noalias` on its memref arguments when
    it is `tir.noalias`; its `tir.*` attributes dropped."""
    attrs = f.attributes
    noalias = declared_noalias(f)
    for a in [a for a in attrs if a.startswith("tir.")]:
        del attrs[a]
    attrs["llvm.emit_c_interface"] = ir.UnitAttr.get()
    if "arg_attrs" in attrs:
        new = []
        ftype = ir.FunctionType(ir.TypeAttr(attrs["function_type"]).value)
        for t, d in zip(ftype.inputs, ir.ArrayAttr(attrs["arg_attrs"])):
            kept = {x.name: x.attr for x in ir.DictAttr(d) if not x.name.startswith("tir.")}
            if noalias and isinstance(t, ir.MemRefType):
                kept["llvm.noalias"] = ir.UnitAttr.get()
            new.append(ir.DictAttr.get(kept))
        attrs["arg_attrs"] = ir.ArrayAttr.get(new)
