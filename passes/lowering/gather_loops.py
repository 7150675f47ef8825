"""Stage `gather-loops` (CPU, scf level): a serial loop whose loads mostly jump at least a
vector register's width of elements from one iteration to the next gets `vectorize disable`.

    scf.for %y = 0 to 8 {                          (the same loop)
      %a = memref.load %A[%c, 2 * %y, %x]    =>    {loop_annotation = #llvm.loop_annotation<
      ...                                            vectorize = <disable = true>>}

LLVM's loop vectorizer takes the innermost loop once its small inner loops are unrolled. Over
such a loop every vector lane comes from another row: each vector load becomes one scalar load
and one insert per lane (the X86 targets that matter prefer no hardware gather). A 2x2 max
pool tile (8 output rows around 2 x 2 x 2 small loops) got 16-lane vectors of rows, 64 scalar
loads and 48 inserts per 16 outputs; with the loop left scalar, LLVM's SLP vectorizer packs the
unrolled window along its contiguous columns instead (two 4-float loads and 4 shuffles per two
outputs, TVM's code), in less time (benchmarks/README.md, "session 9, stage figures"). The
target's vector width (cpu_model.py) sets the jump: loads closer together than a register's
lanes may share one (LLVM's interleaved groups), and stores are left to LLVM's judgement (a
transpose's scattered stores follow contiguous loads).
A loop with as many near loads as far ones (an unscheduled matmul's `k`: A's row, B's column)
keeps LLVM's choice, and so does one whose arithmetic pays for its gathers: vectorized, each
op on varying values does one register's lanes at once, while each gathered load (or
scattered store) costs what LLVM's cost model charges to build (take apart) a register lane by
lane (lane_costs.py). Per iteration, the loop stays LLVM's when

    sum (1 - 1/lanes) over its varying arithmetic and near loads
        > sum build(lanes) / lanes over its gathered loads + split(lanes) / lanes over its
          scattered stores

An erf (~44 ops) on a column of 4 rows 4 KiB apart, as a GELU walks down its columns: one
gathered load and one scattered store against ~44 ops; vectorized by LLVM 4 lanes at a time
(TVM's code), in half the time; the max pool tile above, about one max per
gathered element, stays scalar.

A loop qualifies when it is a `scf.for` without a loop annotation (a schedule's `vectorize` or
`unroll` keeps its own); it holds no vector access, copy or call (what it does is not all
scalar loads and stores); the index of every load in it is a linear form of its IV (no
division, no loaded index) on a memref of static strides; of its loads that move with it,
each counted as often as it runs per iteration, more jump at least the lanes of their element
type than not; and its arithmetic does not pay for those gathers (above).
"""

import math
from typing import Optional

from mlir import ir

from tir_mlir.analysis.linear import Linear, value_linear
from tir_mlir.ir.ir_walk import walk_all
from tir_mlir.passes.lowering.common import (
    ancestors,
    functions,
    loop_iv,
    scalar_bits,
    trip_count,
)
from tir_mlir.passes.lowering.cpu_model import VECTOR_BITS, cpu_model
from tir_mlir.passes.lowering.cpu_target import CpuTarget, cpu_target
from tir_mlir.passes.lowering.lane_costs import element_name, lane_costs

ANNOTATION = "#llvm.loop_annotation<vectorize = <disable = true>>"
# Ops whose memory accesses this stage does not read (a loop holding one is left alone).
OPAQUE_PREFIXES = ("vector.", "func.call", "llvm.", "memref.copy")


class GatherLoops:
    name = "gather-loops"

    def __init__(self, vector_bits=VECTOR_BITS, target: Optional[CpuTarget] = None):
        self.vector_bits = vector_bits
        self.target = target  # prices the lanes (without one: one shuffle per lane)

    @classmethod
    def for_target(cls, target):
        return cls(cpu_model(target).vector_bits, cpu_target(target))

    def __call__(self, module: ir.Module):
        for f in functions(module):
            for loop in [o for o in walk_all(f) if o.name == "scf.for"]:
                if "loop_annotation" not in loop.attributes and self.gathers(loop):
                    loop.attributes["loop_annotation"] = ir.Attribute.parse(ANNOTATION)

    def gathers(self, loop) -> bool:
        """Whether the loads in `loop` that move with its IV are mostly gathers: those that
        jump at least a vector register's lanes per iteration are more than the others,
        each counted as often as it runs per iteration (the trip counts of the loops between
        it and `loop`), and its arithmetic does not pay for them (the module's docstring)."""
        iv = loop_iv(loop)
        inside = {o for o in walk_all(loop)}
        memo: dict = {}
        gathered = near = 0
        lane_work = saved = 0.0  # per iteration: building/splitting lanes, vectorizing's gain
        for op in inside:
            name = op.name
            if name.startswith(OPAQUE_PREFIXES):
                return False
            if name == "memref.load":
                step = _element_step(op.operands[0], list(op.operands)[1:], iv, inside, memo)
                if step is None:
                    return False
                if step == 0:
                    continue
                runs = _runs(op, loop)
                lanes = self._lanes(op.results[0].type)
                if abs(step) < lanes:
                    near += runs
                    saved += runs * (1 - 1 / lanes)
                else:
                    gathered += runs
                    lane_work += runs * self._lane_cost(op.results[0].type, lanes, 0) / lanes
            elif name == "memref.store":
                step = _element_step(op.operands[1], list(op.operands)[2:], iv, inside, memo)
                t = op.operands[0].type
                if step != 0 and (step is None or abs(step) >= self._lanes(t)):
                    lanes = self._lanes(t)
                    lane_work += _runs(op, loop) * self._lane_cost(t, lanes, 1) / lanes
            elif _arithmetic(op) and _moves(op.results[0], iv, inside, memo):
                saved += _runs(op, loop) * (1 - 1 / self._lanes(op.results[0].type))
        return gathered > near and lane_work >= saved

    def _lanes(self, t) -> int:
        return max(1, self.vector_bits // _bits(t))

    def _lane_cost(self, t, lanes: int, which: int) -> int:
        """What LLVM charges to build (`which` 0) or take apart (1) a `lanes`-lane vector of
        `t` lane by lane."""
        costs = None
        if self.target is not None and lanes > 1 and isinstance(t, (ir.IntegerType, ir.FloatType)):
            costs = lane_costs(self.target, element_name(t), (lanes,))
        return costs[lanes][which] if costs else lanes


def _runs(op, loop) -> int:
    """How often `op` runs per iteration of `loop`."""
    return math.prod(trip_count(p) or 1 for p in _loops_between(op, loop))


def _arithmetic(op) -> bool:
    """An arith or math op on integers or floats with one result (index arithmetic, and a
    comparison or cast of indices, is addressing)."""
    scalar = (ir.IntegerType, ir.FloatType)
    return (
        op.name.startswith(("arith.", "math."))
        and op.name != "arith.constant"
        and len(op.results) == 1
        and isinstance(op.results[0].type, scalar)
        and all(isinstance(v.type, scalar) for v in op.operands)
    )


def _loops_between(op, loop):
    """The scf.for loops enclosing `op` inside `loop`."""
    out = []
    for p in ancestors(op):
        if p == loop:
            return out
        if p.name == "scf.for":
            out.append(p)
    return out


def _bits(t) -> int:
    return scalar_bits(t) if isinstance(t, (ir.IntegerType, ir.FloatType)) else 64  # index


def _element_step(buffer, indices, iv, inside, memo):
    """Elements an access of `buffer` at `indices` moves per step of `iv` (0: it does not
    move), or None when an index is not a linear form of `iv` or the memref's strides are not
    static."""
    strides, _ = ir.MemRefType(buffer.type).get_strides_and_offset()

    def leaf(v):
        if v == iv:
            return Linear({"iv": 1})
        return None if _moves(v, iv, inside, memo) else Linear()

    step = 0
    for index, stride in zip(indices, strides):
        form = value_linear(index, leaf, memo.setdefault("forms", {}))
        if form is None:
            return None
        coefficient = form.terms.get("iv", 0)
        if coefficient:
            if stride < 0:  # dynamic strides are negative
                return None
            step += coefficient * stride
    return step


def _moves(value, iv, inside, memo) -> bool:
    """Whether `value` may change as `iv` steps: it is `iv`, a value a loop carries
    (iter_args), a load in the loop, or computed from one of those in the loop. Inner loops'
    IVs, the function's arguments and values computed outside the loop stay fixed."""
    known = memo.setdefault("moves", {})
    if value in known:
        return known[value]
    owner = value.owner
    if value == iv:
        moves = True
    elif isinstance(owner, ir.Block):
        parent = owner.owner.name
        moves = not (
            parent in ("func.func", "scf.parallel")
            or (parent == "scf.for" and value.arg_number == 0)
        )
    elif owner.operation not in inside:
        moves = False
    elif owner.operation.name == "memref.load":
        moves = True
    else:
        moves = any(_moves(v, iv, inside, memo) for v in owner.operation.operands)
    known[value] = moves
    return moves
