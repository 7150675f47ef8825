"""Per-store features of a scheduled program, for the tuner's cost model (in the spirit of
TVM's PerStoreFeature): one fixed-length vector per block that stores, describing its loop
nest (extents, parallel / vectorized / unrolled loops, unroll pragmas), its arithmetic, and
per buffer access the stride along the innermost loop and the bytes touched below each of
the innermost loop levels (a cache model), plus the program's allocations.

Accesses are evaluated numerically: an index is an affine function of the block's iter
vars, each bound to an affine function of the loop variables, so the stride along loop l
is f(e_l) - f(0). Read-only: nothing is rewritten.
"""

import math
from typing import Callable, List, Optional, TypedDict

from mlir import ir

from tir_mlir.dialect.ops import Block, Loop
from tir_mlir.ir.ir_walk import walk_all
from tir_mlir.analysis import buffer_util

LEVELS = 6  # footprint features for the innermost LEVELS loop levels
READS = 3  # accesses described per block (the ones touching most bytes)
FLOAT_OPS = {
    "arith.addf",
    "arith.subf",
    "arith.mulf",
    "arith.divf",
    "arith.maximumf",
    "arith.minimumf",
    "arith.negf",
    "math.fma",
}
INT_OPS = {"arith.addi", "arith.subi", "arith.muli", "arith.divsi", "arith.remsi"}
ACCESS = ["stride", "contig", "invariant", "bytes", "reuse"]
NAMES = (
    [
        "iters",
        "flops_per_iter",
        "flops",
        "loops",
        "par_extent",
        "par_loops",
        "vec_extent",
        "unroll_extent",
        "auto_unroll",
        "inner_extent",
        "math_calls",
        "int_ops",
    ]
    + [f"{k}{a}" for a in range(READS + 1) for k in ACCESS]
    + [f"footprint{d}" for d in range(LEVELS)]
    + ["intensity", "alloc_bytes"]
)


def _log(x: float) -> float:
    return math.log2(1.0 + abs(x))


def _compile(e: ir.AffineExpr) -> Callable[[List[int]], int]:
    """`e` as a Python function of the dim values: the features evaluate each index at
    n + 1 points, and walking the AffineExpr through the bindings each time dominated."""
    e = e.maybe_downcast() if hasattr(e, "maybe_downcast") else e
    if isinstance(e, ir.AffineConstantExpr):
        c = e.value
        return lambda dims: c
    if isinstance(e, ir.AffineDimExpr):
        p = e.position
        return lambda dims: dims[p]
    assert isinstance(e, ir.AffineBinaryExpr), e  # (static programs: no symbols)
    a, b = _compile(e.lhs), _compile(e.rhs)
    if isinstance(e, ir.AffineAddExpr):
        return lambda dims: a(dims) + b(dims)
    if isinstance(e, ir.AffineMulExpr):
        return lambda dims: a(dims) * b(dims)
    op = (
        _floordiv
        if isinstance(e, ir.AffineFloorDivExpr)
        else _ceildiv
        if isinstance(e, ir.AffineCeilDivExpr)
        else _mod
    )
    return lambda dims: op(a(dims), b(dims))


def _floordiv(a: int, b: int) -> int:
    return a // b if b else 0


def _ceildiv(a: int, b: int) -> int:
    return -(-a // b) if b else 0


def _mod(a: int, b: int) -> int:
    return a % b if b else 0


def _extent(loop: Loop) -> int:
    """The features read static programs (PerStoreFeature makes symbolic sizes constants).
    A loop whose bounds depend on outer loops (a triangular nest: no sampled schedule passes
    DisallowDynamicLoop, but the unscheduled program is measured and learned from) counts as
    one iteration: an estimate is all the cost model needs."""
    if any(m.n_dims or len(m.results) != 1 for m in (loop.lower_bound[0], loop.upper_bound[0])):
        return 1
    extent = loop.extent
    if not isinstance(extent, int):
        raise TypeError(f"symbolic loop extent {extent}: features describe static programs")
    return extent


def _loops_of(op) -> List[ir.Operation]:
    out, p = [], op.parent
    while p is not None and p.name != "func.func":
        if p.name == Loop.OP_NAME:
            out.append(p)
        p = p.parent
    return out[::-1]


class _Nest:
    """A block's loops and a numeric evaluator of its accesses' offsets over them."""

    def __init__(self, block: Block):
        self.block = block
        self.loops = [Loop(lp) for lp in _loops_of(block.op)]
        self.extents = [max(1, _extent(lp)) for lp in self.loops]
        ivs = [lp.iv for lp in self.loops]
        self.dim_loop = [next((k for k, iv in enumerate(ivs) if iv == d), None) for d in block.dims]
        self.bindings = [_compile(e) for e in block.bindings.results]
        self.args = block.iter_vars

    def iter_values(self, loop_vals: List[int]) -> List[int]:
        dims = [loop_vals[k] if k is not None else 0 for k in self.dim_loop]
        return [f(dims) for f in self.bindings]

    def index_fns(self, op, kind):
        """Per buffer dim, a function loop values -> index (None when not affine)."""
        idx = list(op.operands)[1:] if kind == "load" else list(op.operands)[2:]
        fns = []
        for v in idx:
            leaves = []
            try:
                e = buffer_util.to_affine(v, leaves)
            except buffer_util.NotAffine:
                return None
            pos = [next((k for k, a in enumerate(self.args) if a == leaf), None) for leaf in leaves]
            if any(p is None for p in pos):
                return None
            fns.append((_compile(e), pos))
        return fns


def _offsets(nest: _Nest, fns, loop_vals) -> List[int]:
    it = nest.iter_values(loop_vals)
    return [f([it[p] for p in pos]) for f, pos in fns]


def loop_strides(block_op) -> Optional[List[List[int]]]:
    """Per buffer access of the block: its flat offset's step per loop around the block
    (outermost first); None when an index is not affine in the loops."""
    nest = _Nest(Block(block_op))
    n = len(nest.loops)
    out = []
    for op, kind, buf in buffer_util.accesses(block_op):
        fns = nest.index_fns(op, kind)
        if fns is None:
            return None
        shape = list(ir.MemRefType(buf.type).shape)
        row = [math.prod(shape[k + 1 :]) for k in range(len(shape))]
        zero = _offsets(nest, fns, [0] * n)
        strides = []
        for lv in range(n):
            vals = [0] * n
            vals[lv] = 1
            step = [a - b for a, b in zip(_offsets(nest, fns, vals), zero)]
            strides.append(sum(c * r for c, r in zip(step, row)))
        out.append(strides)
    return out


class _Access(TypedDict):
    stride: int
    contig: int
    invariant: int
    bytes: int
    reuse: float
    foot: List[int]


def _access_features(nest: _Nest, op, kind, buf) -> _Access:
    mt = ir.MemRefType(buf.type)
    et = mt.element_type
    elem = max(1, et.width // 8) if isinstance(et, (ir.IntegerType, ir.FloatType)) else 4
    shape = list(mt.shape)
    n = len(nest.loops)
    fns = nest.index_fns(op, kind)
    if fns is None or not n:
        total = elem * math.prod(shape or [1])
        return {
            "stride": 0,
            "contig": 0,
            "invariant": 0,
            "bytes": total,
            "reuse": 1,
            "foot": [total] * LEVELS,
        }
    row = [math.prod(shape[k + 1 :]) for k in range(len(shape))]
    zero = _offsets(nest, fns, [0] * n)
    coef = []  # coef[l][p]: index p per step of loop l
    for lv in range(n):
        vals = [0] * n
        vals[lv] = 1
        coef.append([a - b for a, b in zip(_offsets(nest, fns, vals), zero)])
    inner = coef[-1]
    stride = sum(c * r for c, r in zip(inner, row))

    def touched(from_level: int) -> int:
        spans = [
            min(
                shape[p] if p < len(shape) else 1,
                1 + sum(abs(coef[lv][p]) * (nest.extents[lv] - 1) for lv in range(from_level, n)),
            )
            for p in range(len(fns))
        ]
        return elem * math.prod(spans or [1])

    foot = [touched(max(0, n - 1 - d)) for d in range(LEVELS)]
    whole = touched(0)
    iters = math.prod(nest.extents)
    return {
        "stride": stride,
        "contig": int(abs(stride) == 1),
        "invariant": int(stride == 0),
        "bytes": whole,
        "reuse": iters * elem / max(whole, 1),
        "foot": foot,
    }


def block_features(block: Block, alloc_bytes: int) -> List[float]:
    nest = _Nest(block)
    ops = walk_all(block.op)
    flops = sum(1 for o in ops if o.name in FLOAT_OPS) + 2 * sum(
        1 for o in ops if o.name == "math.fma"
    )
    math_calls = sum(1 for o in ops if o.name.startswith("math.") and o.name != "math.fma")
    int_ops = sum(1 for o in ops if o.name in INT_OPS)
    iters = math.prod(nest.extents)
    par = [_extent(lp) for lp in nest.loops if lp.kind == "parallel"]
    vec = [_extent(lp) for lp in nest.loops if lp.kind == "vectorized"]
    unr = [_extent(lp) for lp in nest.loops if lp.kind == "unroll"]
    auto = max(
        [_ann_int(lp.annotations.get("pragma_auto_unroll_max_step")) for lp in nest.loops] or [0]
    )
    kinds = [(op, kind, buf) for op, kind, buf in buffer_util.accesses(block.op)]
    accs = [_access_features(nest, op, kind, buf) for op, kind, buf in kinds]
    stores = [a for a, (_, kind, _) in zip(accs, kinds) if kind == "store"]
    loads = sorted(
        (a for a, (_, kind, _) in zip(accs, kinds) if kind == "load"), key=lambda a: -a["bytes"]
    )
    described = (stores[:1] or [None]) + loads[:READS]
    described += [None] * (READS + 1 - len(described))
    f = [
        _log(iters),
        _log(flops + math_calls),
        _log(iters * (flops + math_calls)),
        len(nest.loops),
        _log(math.prod(par or [0])),
        len(par),
        _log(math.prod(vec or [0])),
        _log(math.prod(unr or [0])),
        _log(auto),
        _log(nest.extents[-1] if nest.extents else 1),
        _log(math_calls),
        _log(int_ops),
    ]
    for a in described:
        f += (
            [_log(a["stride"]), a["contig"], a["invariant"], _log(a["bytes"]), _log(a["reuse"])]
            if a
            else [0.0] * len(ACCESS)
        )
    foot = [sum(a["foot"][d] for a in accs) for d in range(LEVELS)] if accs else [0] * LEVELS
    f += [_log(x) for x in foot]
    moved = sum(a["bytes"] for a in accs) or 1
    f += [_log(iters * (flops + math_calls) / moved), _log(alloc_bytes)]
    return f


def _ann_int(a) -> int:
    if a is None:
        return 0
    try:
        return ir.IntegerAttr(a).value
    except (ValueError, TypeError):
        return 0


def module_features(module: ir.Module) -> List[List[float]]:
    """One feature vector per block that stores, for every function of the module."""
    out = []
    for f in module.body.operations:
        nested = walk_all(f)
        allocs = [o for o in nested if o.name in ("memref.alloc", "memref.alloca")]
        alloc_bytes = 0
        for o in allocs:
            mt = ir.MemRefType(o.results[0].type)
            alloc_bytes += math.prod(mt.shape or [1]) * max(
                1, getattr(mt.element_type, "width", 32) // 8
            )
        for o in nested:
            if o.name != Block.OP_NAME:
                continue
            inside = {x.name for x in walk_all(o)}
            if "memref.store" in inside and Block.OP_NAME not in inside:  # leaf blocks
                out.append(block_features(Block(o), alloc_bytes))
    return out
