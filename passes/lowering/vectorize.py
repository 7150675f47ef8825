"""Stage `vectorize-loops` (affine level, after `unroll-loops`): a `T.vectorized` loop becomes
one copy of its body on `vector<W x T>` values (W = the extent), run once.

    for v in T.vectorized(16):                   %c = vector.load %C[%i, %j0]
        if k == 0:                               affine.if (k == 0) {          // same on all lanes
            C[i, j0 + v] = 0               =>        vector.store %zeros, %C[%i, %j0] }
        if j0 + v < 1000:                        %m = (j0 + [0..15] < 1000)    // varies: a mask
            C[i, j0 + v] = A[i, j0 + v]          scf.if (any lane of %m) {
                                                     %a = vector.maskedload %A[%i, %j0], %m
                                                     vector.maskedstore %C[%i, %j0], %m, %a }

What each value is across lanes and whether the rewrite is legal comes from `vectorize_plan`
(see there). Then:
- an index value stays scalar: its value at lane 0 (the IV replaced by the lower bound); where
  lanes need it as data it is `base + stride * [0, 1, ..]`;
- a load or store whose indices are all uniform stays scalar (a store of a varying value keeps
  the last lane's); a contiguous one is `vector.load/store` (masked under a varying condition);
  any other linear one is one scalar access per lane (+ `vector.from_elements` / `extract`);
- an elementwise arith/math op on a varying operand is the same op on vectors;
- an `affine.if`, `scf.if` or `affine.for` whose condition and bounds are uniform stays scalar
  around its vectorized body; an if whose condition varies becomes a lane mask, its branches run
  masked when some lane takes them, and its results (`T.if_then_else`) are selected per lane.
A loop longer than MAX_LANES, or longer than a register and not a power of two (56 lanes: LLVM
widens `vector<56xf32>` and its masks to 64 lanes and shuffles them lane by lane), first becomes
register-wide vectorized chunks (`_strip_mine`); when its body holds a serial loop (a reduction
the lanes run side by side, each chunk's accumulators carried along it) and no lane is
gathered, chunks of as many registers as the CPU's FMA chains (`_chunk`).
A loop the plan refuses stays a loop, left to LLVM's loop vectorizer (the hint added by
`affine-to-scf`), so this stage never changes what a program computes. In-bounds vector
loads/stores and values kept in vector registers are what fast CPU code needs (docs:
MLIR_NOTES, "What fast CPU code needs").
"""

from typing import Optional

from mlir import ir
from mlir.dialects import affine, arith, memref, scf, vector

from tir_mlir.dialect.ops import Loop, integer_set
from tir_mlir.passes.lowering.affine_to_scf import element_bits
from tir_mlir.passes.lowering.common import (
    affine_to_arith,
    constant_extent,
    constant_loop,
    constant_min,
    else_block,
    functions,
    index_const,
    scalar_bits,
    walk,
)
from tir_mlir.passes.lowering.cpu_model import VECTOR_BITS, cpu_model
from tir_mlir.passes.lowering.cpu_target import CpuTarget, cpu_target
from tir_mlir.passes.lowering.gather_width import gather_lanes
from tir_mlir.passes.lowering.lane_ops import lane_ops
from tir_mlir.passes.lowering.unroll import unroll
from tir_mlir.passes.lowering.vectorize_plan import DIVISIONS, Plan, contiguous, expr_form

MAX_LANES = 64
# Integer widenings a uniform operand is broadcast through (see _Vectorizer._vector).
_WIDENINGS = ("arith.extsi", "arith.extui")


class VectorizeLoops:
    name = "vectorize-loops"

    def __init__(
        self, vector_bits=VECTOR_BITS, target: Optional[CpuTarget] = None, fma_chains: int = 1
    ):
        self.vector_bits = vector_bits  # a long loop is cut into vectors this wide
        self.target = target  # a CPU's: its cost model weighs gathered lanes (gather_width.py)
        self.fma_chains = fma_chains  # independent accumulations that keep the FMA units busy

    @classmethod
    def for_target(cls, target):
        model = cpu_model(target)
        return cls(model.vector_bits, cpu_target(target), model.fma_chains(model.vector_bits))

    def __call__(self, module: ir.Module):
        for f in functions(module):
            chunks = []  # the vectorized loops a long loop was cut into
            for op in [o for o in walk(f) if o.name == "affine.for"]:
                loop = Loop(op)
                # A loop over a size (`range(n)`) or bounded by outer loops stays a loop with
                # LLVM's vectorize hint: LLVM adds the remainder loop any width leaves.
                if not constant_loop(loop):
                    continue
                if loop.kind != "vectorized" or loop.step != 1:
                    continue
                width = self.vector_bits // element_bits(loop.body)
                n = constant_extent(loop)
                if n > MAX_LANES or (n > width and n & (n - 1)):
                    chunks += _strip_mine(loop, self._chunk(loop, n, width))
                elif self.target is not None and n > 1:
                    self._narrow_gathers(loop, n)
            # Innermost first: an outer vectorized loop then holds vector code and is refused.
            for op in reversed([o for o in walk(f) if o.name == "affine.for"]):
                loop = Loop(op)
                if (
                    loop.kind == "vectorized"
                    and constant_loop(loop)
                    and loop.step == 1
                    and 1 < constant_extent(loop) <= MAX_LANES
                ):
                    plan = Plan(loop)
                    if plan.ok:
                        one_register = not any(op == c for c in chunks)
                        _Vectorizer(loop, plan, self.vector_bits, one_register).run()
                    elif constant_extent(loop) < self.vector_bits // element_bits(loop.body):
                        # Shorter than a register, LLVM's loop vectorizer cannot fill one and
                        # its hint (unroll disable) would keep a rolled loop of scalar code:
                        # serial, as TVM scalarizes a loop it cannot vectorize, LLVM unrolls it
                        # whole and its SLP vectorizer packs the copies it can.
                        loop.set(kind="serial")
            if self.target is not None:
                lane_ops(f, self.target, self.vector_bits)

    def _chunk(self, loop: Loop, n: int, width: int) -> int:
        """Lanes per vector when a long loop is cut: a register's, or, when the body holds a
        serial loop (which then runs once per chunk, each lane's values carried along it, as a
        reduction's accumulators) and every access that differs across lanes is a vector
        load/store, enough registers for the accumulations that keep the FMA units busy: one
        register per chunk would be one chain of dependent steps. (Gathered lanes are bound by
        their inserts, not by the chain: wider chunks only add registers.)"""
        if not any(o.name == "affine.for" for o in walk(loop.op)):
            return width
        plan = Plan(loop)
        if not plan.ok or any(
            any(f.stride for f in index) and not contiguous(mem, [f.stride for f in index])
            for _, mem, index in plan.accesses
        ):
            return width
        lanes = width
        # (whole chunks only: the tail stays what register-wide chunks leave)
        while lanes * 2 <= min(MAX_LANES, width * self.fma_chains) and n % (lanes * 2) == 0:
            lanes *= 2
        return lanes

    def _narrow_gathers(self, loop: Loop, n: int):
        """Cut a loop whose lanes are gathered into vectors of the lanes that cost least
        (gather_width.py), one unrolled copy per vector."""
        plan = Plan(loop)
        if not plan.ok:
            return
        assert self.target is not None
        lanes = gather_lanes(loop.body, plan, n, self.target, self.vector_bits)
        if lanes < n:
            _strip_mine(loop, lanes)
            if Loop(loop.op).kind == "serial":  # (the loop over the vectors)
                unroll(loop.op)


class _Vectorizer:
    def __init__(self, loop: Loop, plan: Plan, vector_bits: int = VECTOR_BITS, whole: bool = True):
        self.loop, self.plan, self.lanes = loop, plan, constant_extent(loop)
        self.vector_bits = vector_bits  # a register's: see _widen_narrow
        self.whole = whole  # the loop is all of a vectorized loop, not one of its chunks
        self.vec = {}  # varying scalar value -> its vector
        self.dead = []  # scalar ops replaced, in program order
        self.guarded = []  # (scf.if on "some lane on", that test) of masked branches

    def run(self):
        op = self.loop.op
        with ir.InsertionPoint(op):
            lb = index_const(constant_min(self.loop), op.location)
        self.plan.forms[lb] = self.plan.forms[self.loop.iv]
        self.loop.iv.replace_all_uses_with(lb)
        ops = [o.operation for o in list(self.loop.body.operations)[:-1]]
        for o in ops:
            o.move_before(op)
        self._ops(ops, None)
        for o in reversed(self.dead):
            o.erase()
        op.erase()
        for branch, test in self.guarded:
            _unguard(branch, test)

    def _ops(self, ops, mask):
        for o in ops:
            name = o.name
            with ir.InsertionPoint(o), o.location:
                if name == "affine.for":
                    self._ops(_body(o.regions[0].blocks[0]), mask)
                elif name == "affine.if":
                    self._affine_if(o, mask)
                elif name == "scf.if":
                    self._scf_if(o, mask)
                elif name == "memref.load":
                    self._load(o, mask)
                elif name == "memref.store":
                    self._store(o, mask)
                elif len(o.results) == 1 and o.results[0] in self.plan.varying:
                    self._lanewise(o, mask)

    def _vtype(self, t):
        return ir.VectorType.get([self.lanes], t)

    def _vector(self, v):
        """`v` on every lane."""
        if v in self.vec:
            return self.vec[v]
        if isinstance(v.type, ir.IndexType) and self.plan.stride(v):
            return self._lane_values(v, self.plan.stride(v))
        if self._widen_narrow(v):
            # Narrow lanes, widened as a vector (as TVM's Cast(Broadcast(x))): a loaded byte
            # is then broadcast from memory and extended in the vector unit; widened first, it
            # is a scalar movsx and a GPR-to-vector move per broadcast, a port x86 has one of
            # (1.5x the time of an int8 matmul's 2- and 8-lane column steps on Zen 4).
            op = v.owner.operation
            narrow = vector.BroadcastOp(self._vtype(op.operands[0].type), op.operands[0]).result
            return ir.Operation.create(
                op.name, results=[self._vtype(v.type)], operands=[narrow]
            ).results[0]
        return vector.BroadcastOp(self._vtype(v.type), v).result

    def _widen_narrow(self, v) -> bool:
        """Whether uniform `v` is an integer widening to broadcast narrow: not from i1 (a
        vector of i1 is a mask register), and only when the whole vectorized loop's wide
        lanes fit one register. Wider, or cut into chunks, one broadcast feeds a product per
        register or chunk: its GPR move is shared, and the extension is not cheaper (int8
        matmuls of 32 and 64 int32 lanes on Zen 4: 0.94-1.06x, most slower; a 256-lane
        rfactor row in 16 chunks, 424113201/0536: 1.44x, LLVM spilled the chunks' sums)."""
        if not self.whole or isinstance(v.owner, ir.Block):
            return False
        if v.owner.operation.name not in _WIDENINGS:
            return False
        narrow = v.owner.operation.operands[0].type
        return scalar_bits(narrow) >= 8 and self.lanes * scalar_bits(v.type) <= self.vector_bits

    def _lane_values(self, base, stride):
        """base + stride * [0, 1, .., lanes - 1] for an index `base`."""
        steps = ", ".join(str(stride * k) for k in range(self.lanes))
        t = self._vtype(ir.IndexType.get())
        const = arith.constant(t, ir.Attribute.parse(f"dense<[{steps}]> : {t}"))
        return arith.addi(vector.BroadcastOp(t, base).result, const)

    def _splat(self, t, value):
        vt = self._vtype(t)
        attr = (
            ir.IntegerAttr.get(t, value)
            if isinstance(t, (ir.IntegerType, ir.IndexType))
            else ir.FloatAttr.get(t, float(value))
        )
        return arith.constant(vt, ir.DenseElementsAttr.get_splat(vt, attr))

    def _lane_index(self, index, strides, lane):
        """The indices of lane `lane` (at the current location)."""
        return [
            v if not s or not lane else arith.addi(v, index_const(s * lane, None))
            for v, s in zip(index, strides)
        ]

    def _load(self, o, mask):
        mem, index = o.operands[0], list(o.operands)[1:]
        strides = [self.plan.stride(v) for v in index]
        if not any(strides):
            return  # the same element on every lane
        t = o.results[0].type
        if contiguous(mem, strides) and mask is None:
            new = vector.LoadOp(self._vtype(t), mem, index).result
        elif contiguous(mem, strides):
            new = vector.MaskedLoadOp(self._vtype(t), mem, index, mask, self._splat(t, 0)).result
        else:
            new = vector.FromElementsOp(
                self._vtype(t),
                [
                    memref.LoadOp(mem, self._lane_index(index, strides, k)).result
                    for k in range(self.lanes)
                ],
            ).result
        self.vec[o.results[0]] = new
        self.dead.append(o)

    def _store(self, o, mask):
        value, mem, index = o.operands[0], o.operands[1], list(o.operands)[2:]
        strides = [self.plan.stride(v) for v in index]
        if not any(strides):
            if value in self.vec:  # lanes store in order: the last one's value stays
                memref.StoreOp(vector.extract(self.vec[value], [], [self.lanes - 1]), mem, index)
                self.dead.append(o)
            return
        data = self._vector(value)
        if contiguous(mem, strides) and mask is None:
            vector.StoreOp(data, mem, index)
        elif contiguous(mem, strides):
            vector.MaskedStoreOp(mem, index, mask, data)
        else:
            for k in range(self.lanes):
                memref.StoreOp(
                    vector.extract(data, [], [k]), mem, self._lane_index(index, strides, k)
                )
        self.dead.append(o)

    def _lanewise(self, o, mask):
        operands = [self._vector(v) for v in o.operands]
        if mask is not None and o.name in DIVISIONS:  # off lanes divide by 1
            divisor = operands[1]
            one = self._splat(ir.VectorType(divisor.type).element_type, 1)
            operands[1] = arith.select(mask, divisor, one)
        new = ir.Operation.create(
            o.name,
            results=[self._vtype(r.type) for r in o.results],
            operands=operands,
            attributes={a: o.attributes[a] for a in o.attributes},
        )
        self.vec[o.results[0]] = new.results[0]
        self.dead.append(o)

    def _affine_if(self, o, mask):
        regions = [r.blocks[0] for r in o.regions if len(r.blocks)]
        if any(o == u for u in self.plan.uniform_ifs):
            for block in regions:
                self._ops(_body(block), mask)
            return
        iset = integer_set(o.attributes["condition"])
        ops, n = list(o.operands), iset.n_dims
        forms = [self.plan.form(v) for v in ops]
        cond = None
        for c in iset.constraints:
            base = affine_to_arith(c.expr, ops[:n], ops[n:], o.location)
            form = expr_form(c.expr, forms[:n], forms[n:], self.lanes)
            assert form is not None, "the plan vectorizes only conditions linear in the lane"
            stride = form.stride
            zero = self._splat(ir.IndexType.get(), 0)
            pred = arith.CmpIPredicate.eq if c.is_eq else arith.CmpIPredicate.sge
            m = arith.cmpi(pred, self._lane_values(base, stride), zero)
            cond = m if cond is None else arith.andi(cond, m)
        self._branch_masks(o, cond, regions, mask)

    def _scf_if(self, o, mask):
        regions = [r.blocks[0] for r in o.regions if len(r.blocks)]
        varying = [r in self.plan.varying for r in o.results]
        if not any(o == u for u in self.plan.uniform_ifs):
            results = self._branch_masks(o, self._vector(o.operands[0]), regions, mask)
            for r, v in zip(o.results, results):
                self.vec[r] = v
            return
        if not any(varying):
            for block in regions:
                self._ops(_body(block), mask)
            return
        # A uniform condition choosing varying values: the same if, on vector results.
        new = scf.IfOp(
            o.operands[0],
            [self._vtype(r.type) if v else r.type for r, v in zip(o.results, varying)],
            has_else=True,
        )
        for block, target in zip(regions, (new.then_block, else_block(new))):
            yielded = list(list(block.operations)[-1].operands)
            with ir.InsertionPoint(target):
                end = scf.YieldOp([])
            self._move_and_vectorize(block, end, mask)
            with ir.InsertionPoint(end):
                scf.YieldOp([self._vector(y) if v else y for y, v in zip(yielded, varying)])
            end.erase()
        for r, n, v in zip(o.results, new.results, varying):
            if v:
                self.vec[r] = n
            else:
                r.replace_all_uses_with(n)
        self.dead.append(o)

    def _branch_masks(self, o, cond, regions, mask):
        """An if whose condition `cond` (vector<i1>) varies: each branch runs masked; the
        results (vectors) pick the branch of each lane."""
        results = [self._vtype(r.type) for r in o.results]
        branches = [
            self._masked(regions[0], cond if mask is None else arith.andi(mask, cond), o, results)
        ]
        if len(regions) == 2:
            off = arith.xori(cond, self._splat(ir.IntegerType.get_signless(1), 1))
            branches.append(
                self._masked(regions[1], off if mask is None else arith.andi(mask, off), o, results)
            )
        self.dead.append(o)
        return [arith.select(cond, a, b) for a, b in zip(*branches)]

    def _masked(self, block, mask, anchor, results):
        """Run `block` (lanes in `mask` on) when some lane is on: uniform loads in it are safe
        (a block of masked accesses and arithmetic only runs unguarded). The values it yields
        come back as vectors of types `results` (zeros if no lane is on)."""
        yielded = list(list(block.operations)[-1].operands)
        with ir.InsertionPoint(anchor):
            any_on = vector.ReductionOp(
                ir.IntegerType.get_signless(1), vector.CombiningKind.OR, mask
            ).result
            new = scf.IfOp(any_on, results, has_else=bool(results))
            with ir.InsertionPoint(new.then_block):
                end = scf.YieldOp([])
            if results:
                with ir.InsertionPoint(else_block(new)):
                    scf.YieldOp([self._splat(ir.VectorType(t).element_type, 0) for t in results])
        self._move_and_vectorize(block, end, mask)
        if results:
            with ir.InsertionPoint(end), anchor.location:
                scf.YieldOp([self._vector(y) for y in yielded])
            end.erase()
        self.guarded.append((new, any_on))
        return list(new.results)

    def _move_and_vectorize(self, block, end, mask):
        ops = _body(block)
        for x in ops:
            x.move_before(end)
        self._ops(ops, mask)


# Ops a masked branch may run for lanes that are all off: pure, no trap, or masked accesses
# (an affine.apply divides by positive constants only: compact-buffers' tile indices).
_UNGUARDED_VECTOR_OPS = {
    "affine.apply",
    "vector.maskedload",
    "vector.maskedstore",
    "vector.broadcast",
    "vector.splat",
    "vector.from_elements",
    "vector.extract",
    "vector.insert",
    "vector.shuffle",
    "vector.reduction",
    "vector.fma",
    "vector.bitcast",
    "vector.shape_cast",
    "vector.constant_mask",
    "vector.create_mask",
    "vector.step",
}


def _unguard(branch, test):
    """A masked branch of masked accesses and arithmetic only runs unguarded: masked-off lanes
    are not touched, and its off lanes are not selected (a test and a jump per vector less)."""
    block = branch.then_block
    if _needs_guard(block):
        return
    ops = list(block.operations)
    for x in ops[:-1]:
        x.operation.move_before(branch.operation)
    for r, v in zip(branch.results, list(ops[-1].operands)):
        r.replace_all_uses_with(v)
    branch.operation.erase()
    test.owner.erase()


def _needs_guard(block) -> bool:
    for op in list(block.operations)[:-1]:
        name = op.operation.name
        if name in DIVISIONS or len(op.operation.regions):
            return True
        if not (name.startswith(("arith.", "math.")) or name in _UNGUARDED_VECTOR_OPS):
            return True
    return False


def _strip_mine(loop: Loop, width: int) -> list:
    """A vectorized loop longer than MAX_LANES as vectorized loops of `width` lanes (returned):

        for v in T.vectorized(lo, lo + n):      for o in range(n // width):
            BODY                          =>        for l in T.vectorized(width):
                                                        BODY[v := lo + o * width + l]
                                                for v in T.vectorized(lo + n - n % width, lo + n):
                                                    BODY
    (the lanes of a `fuse`d loop then stay inside one row: see vectorize_plan._divide)."""
    op, n, lo = loop.op, constant_extent(loop), constant_min(loop)
    loc = op.location
    ops = _body(loop.body)
    if not ops:
        return []
    tails = []
    if n % width:
        tail = op.clone(ip=ir.InsertionPoint(op))
        tail.move_after(op)
        _set_bounds(tail, lo + n - n % width, lo + n)
        tails.append(tail.operation)
    uses = [(u.owner, u.operand_number) for u in loop.iv.uses]
    with ir.InsertionPoint(ops[0]):
        inner = Loop.build(
            loop.name, width, kind="vectorized", index_dtype=loop.index_dtype, loc=loc
        )
    for o in ops:
        o.move_before(list(inner.body.operations)[-1].operation)
    with ir.InsertionPoint(ops[0]):
        shift = ir.AffineMap.get(
            2, 0, [ir.AffineExpr.get_dim(0) * width + ir.AffineExpr.get_dim(1) + lo]
        )
        v = affine.AffineApplyOp(shift, [loop.iv, inner.iv], loc=loc).result
    for owner, k in uses:
        owner.operands[k] = v
    _set_bounds(op, 0, n // width)
    loop.set(name=loop.name + "_o", kind="serial")
    return [inner.op] + tails


def _set_bounds(op, lo: int, hi: int):
    for key, value in (("lowerBoundMap", lo), ("upperBoundMap", hi)):
        op.attributes[key] = ir.AffineMapAttr.get(ir.AffineMap.get_constant(value))


def _body(block):
    return [o.operation for o in list(block.operations)[:-1]]
