"""Arithmetic on gathered lanes done lane by lane, before the gather, where that costs less
(vectorize-loops, after it vectorizes a loop).

    %a = vector.from_elements %a0, .., %a11 : vector<12xi8>      %p0 = muli(extsi %a0, extsi %b0)
    %b = vector.from_elements %b0, .., %b11 : vector<12xi8>  =>   ..
    %p = muli(extsi %a, extsi %b) : vector<12xi32>                 %p = vector.from_elements %p0, ..

A vector whose lanes come from scalar loads (rows apart) is built one insert per lane: the
product of two such vectors builds two. Multiplied lane by lane first, one build of the
product remains, as in TVM's code for the same loop (scalar loads and products, one insert
each). Each tree of single-use elementwise `arith` ops over gathered lanes is priced both ways,
as (inserts, ops):

    vector(v) = (build(v), 0)                                 v gathered (from_elements)
              = cheaper of sum(vector(operands)) + (0, registers(v))    the op on vectors
                       and lanes(v) + (build(v), 0)                     the op per lane
    lanes(v)  = sum(lanes(operands)) + (0, n)                 (gathered or uniform: (0, 0))

build(v) is what the target's cost model charges for inserting v's lanes (lane_costs.py), one
128-bit register at a time plus a shuffle per register joined; an extension of a loaded integer
lane costs nothing (it is the load: x86 movsx, AArch64 ldrsb). Inserts run on the shuffle unit,
ops on the ALUs beside it: the cheaper is the one whose busier side is less busy (ties: the
vector op). Only a result beside whose ops the target has one shuffle per cycle is weighed
(cpu_model.shuffles_per_cycle, from LLVM's scheduling model): there the inserts have one
shuffle port, as the cost model assumes. Sapphire Rapids and Zen 4 have two beside ymm and xmm
ops (per lane measured slower there: 4 and 8 int8 products) and one beside zmm ops; Skylake
server and x86-64-v3 one at every width. Int8 dot
products of 11 rows (Sapphire Rapids; 12 rows are first cut into 6 + 6, gather_width.py):
two <11 x i8> cost (22, 3), eleven products and one <11 x i32> (13, 11): per lane. A column
times a uniform value keeps its vector op: per lane it builds as much and adds n ops.
"""

import math
from typing import Dict, List, NamedTuple, Optional

from mlir import ir
from mlir.dialects import arith, vector

from tir_mlir.analysis.expr_tree import erase_unused
from tir_mlir.ir.ir_walk import walk
from tir_mlir.passes.lowering.common import scalar_bits
from tir_mlir.passes.lowering.cpu_model import shuffles_per_cycle
from tir_mlir.passes.lowering.cpu_target import CpuTarget
from tir_mlir.passes.lowering.lane_costs import element_name, lane_costs
from tir_mlir.passes.lowering.memory_ops import no_effects

# The register a lane is inserted into (x86 pinsr*/insertps, AArch64 ins write 128 bits).
PIECE_BITS = 128
# Extensions that fold into the load of their lane (x86 movsx/movzx, AArch64 ldrsb/ldrb).
_EXTENSIONS = ("arith.extsi", "arith.extui")


def lane_ops(root: ir.Operation, target: CpuTarget, vector_bits: int) -> None:
    """Rewrite each tree of elementwise ops over gathered lanes nested in `root` into its
    cheaper form (see the module docstring)."""
    ops = [o for o in walk(root) if _elementwise(o)]
    for op in ops:
        if not _inner(op):
            _Tree(target, vector_bits).rewrite(op)


def _elementwise(op: ir.Operation) -> bool:
    if not op.name.startswith("arith.") or op.name == "arith.constant":
        return False
    if len(op.results) != 1 or len(op.regions) or not len(op.operands):
        return False
    t = op.results[0].type
    if not isinstance(t, ir.VectorType) or ir.VectorType(t).rank != 1:
        return False
    if isinstance(ir.VectorType(t).element_type, ir.IndexType):  # (lane offsets, folded later)
        return False
    shape = ir.VectorType(t).shape
    return all(
        isinstance(v.type, ir.VectorType) and ir.VectorType(v.type).shape == shape
        for v in op.operands
    )


def _single_user(v: ir.Value) -> Optional[ir.Operation]:
    users = [_operation(u.owner) for u in v.uses]
    return users[0] if len(users) == 1 else None


def _inner(op: ir.Operation) -> bool:
    """An op whose only user is another op of its tree."""
    user = _single_user(op.results[0])
    return user is not None and _elementwise(user)


def _owner(v: ir.Value) -> Optional[ir.Operation]:
    return _operation(v.owner)


def _operation(x) -> Optional[ir.Operation]:
    """The operation of an op or op view (None for a block: a block argument's owner)."""
    if isinstance(x, ir.OpView):
        return x.operation
    return x if isinstance(x, ir.Operation) else None


class _Cost(NamedTuple):
    """Work for the shuffle unit (inserts) and for the ALUs (ops): they run side by side, the
    busier bounds the loop."""

    inserts: float = 0.0
    ops: float = 0.0

    def __add__(self, other):  # type: ignore[override]
        return _Cost(self.inserts + other.inserts, self.ops + other.ops)

    def bound(self) -> float:
        return max(self.inserts, self.ops)


_NO_LANES = _Cost(math.inf, math.inf)


class _Tree:
    def __init__(self, target: CpuTarget, vector_bits: int):
        self.target, self.vector_bits = target, vector_bits
        self.vec_cost: Dict[ir.Value, _Cost] = {}
        self.lane_cost: Dict[ir.Value, _Cost] = {}
        self.per_lane: Dict[ir.Value, bool] = {}  # node -> its vector is built from its lanes

    def rewrite(self, root: ir.Operation):
        v = root.results[0]
        self._vector(v)
        if not any(self.per_lane.values()):
            return
        old = self._tree_ops(v)
        new = self._realize(v)
        if new != v:
            v.replace_all_uses_with(new)
        erase_unused(old, no_effects)

    # -- costs ---------------------------------------------------------------------------

    def _build(self, t: ir.Type) -> float:
        """What inserting the lanes of `t` costs: one 128-bit register at a time (LLVM's cost
        model, lane_costs.py), then one shuffle per register joined to the others (LLVM's
        code builds a wide vector so; its cost model prices each insert into the wide vector
        alone: 28 for `<12 x i32>` against 3 * 4 + 2)."""
        vt = ir.VectorType(t)
        n, bits = vt.shape[0], scalar_bits(vt.element_type)
        piece = max(1, min(n, PIECE_BITS // bits))
        pieces = math.ceil(n / piece)
        last = n - (pieces - 1) * piece
        costs = lane_costs(self.target, element_name(vt.element_type), tuple(sorted({piece, last})))
        if costs is None:
            return math.inf
        return (pieces - 1) * costs[piece][0] + costs[last][0] + (pieces - 1)

    def _node(self, v: ir.Value) -> Optional[ir.Operation]:
        """The elementwise op of this tree that defines `v`, if any."""
        op = _owner(v)
        if op is None or not _elementwise(op) or _single_user(v) is None:
            return None
        return op

    def _vector(self, v: ir.Value) -> _Cost:
        if v in self.vec_cost:
            return self.vec_cost[v]
        op = self._node(v)
        owner = _owner(v)
        if op is None:
            gathered = owner is not None and owner.name == "vector.from_elements"
            cost = _Cost(self._build(v.type)) if gathered and _single_user(v) else _Cost()
        else:
            vt = ir.VectorType(v.type)
            registers = math.ceil(vt.shape[0] * scalar_bits(vt.element_type) / self.vector_bits)
            as_vector = sum((self._vector(x) for x in op.operands), _Cost(0, registers))
            as_lanes = self._lanes(v) + _Cost(self._build(v.type))
            bits = vt.shape[0] * scalar_bits(vt.element_type)
            one_port = shuffles_per_cycle(self.target, bits) == 1
            self.per_lane[v] = one_port and as_lanes.bound() < as_vector.bound()
            cost = as_lanes if self.per_lane[v] else as_vector
        self.vec_cost[v] = cost
        return cost

    def _lanes(self, v: ir.Value) -> _Cost:
        if v in self.lane_cost:
            return self.lane_cost[v]
        op = self._node(v)
        if op is None:
            cost = _Cost() if _scalars(v, build=False) is not None else _NO_LANES
        else:
            n = ir.VectorType(v.type).shape[0]
            own = 0 if op.name in _EXTENSIONS and _loaded(op.operands[0]) else n
            cost = sum((self._lanes(x) for x in op.operands), _Cost(0, own))
        self.lane_cost[v] = cost
        return cost

    # -- rewrite -------------------------------------------------------------------------

    def _tree_ops(self, v: ir.Value) -> List[ir.Operation]:
        """The tree's ops and the gathers it reads, users first."""
        op = _owner(v)
        if op is None:
            return []
        if self._node(v) is None:
            return [op] if op.name == "vector.from_elements" else []
        return [op] + [o for x in op.operands for o in self._tree_ops(x)]

    def _realize(self, v: ir.Value) -> ir.Value:
        """`v` as the tree's choice computes it (a new value where it changed)."""
        op = self._node(v)
        if op is None:
            return v
        if self.per_lane.get(v):
            with ir.InsertionPoint(op), op.location:
                lanes = self._lane_values(v)
                return vector.FromElementsOp(v.type, lanes).result
        for k, x in enumerate(list(op.operands)):
            new = self._realize(x)
            if new != x:
                op.operands[k] = new
        return v

    def _lane_values(self, v: ir.Value) -> List[ir.Value]:
        op = self._node(v)
        if op is None:
            lanes = _scalars(v)
            assert lanes is not None, "priced only over gathered or uniform leaves"
            return lanes
        element = ir.VectorType(v.type).element_type
        operands = [self._lane_values(x) for x in op.operands]
        attributes = {a: op.attributes[a] for a in op.attributes}
        return [
            ir.Operation.create(
                op.name, results=[element], operands=list(lane), attributes=attributes
            ).results[0]
            for lane in zip(*operands)
        ]


def _scalars(v: ir.Value, build: bool = True) -> Optional[List[ir.Value]]:
    """The lanes of a gathered or uniform vector as scalars, or None (build: create the
    scalar of a splat constant; else only say whether there is one)."""
    op = _owner(v)
    if op is None:
        return None
    n = ir.VectorType(v.type).shape[0]
    if op.name == "vector.from_elements":
        return list(op.operands)
    if op.name == "vector.broadcast" and not isinstance(op.operands[0].type, ir.VectorType):
        return [op.operands[0]] * n
    if op.name == "arith.constant":
        attr = op.attributes["value"]
        if isinstance(attr, ir.DenseElementsAttr) and ir.DenseElementsAttr(attr).is_splat:
            if not build:
                return []
            with ir.InsertionPoint(op), op.location:
                return [
                    arith.constant(ir.VectorType(v.type).element_type, attr.get_splat_value())
                ] * n
    return None


def _loaded(v: ir.Value) -> bool:
    """Every lane of `v` is a scalar load."""
    op = _owner(v)
    if op is None or op.name != "vector.from_elements":
        return False
    return all(
        (o := _owner(x)) is not None and o.name in ("memref.load", "affine.load")
        for x in op.operands
    )
