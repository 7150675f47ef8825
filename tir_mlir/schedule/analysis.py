"""TVM's `tvm.tir.schedule.analysis` helpers over a tir_mlir Schedule (read-only: nothing here
changes the schedule or its trace).

    has_block(sch, "C")                                  -> bool
    is_output_block(sch, block)                          -> bool
    suggest_index_map(shape, indices, loops)             -> lambda text, or None
    get_tensorize_loop_mapping(sch, block, desc)         -> TensorizeInfo, or None
    get_auto_tensorize_mapping_info(sch, block, desc)    -> AutoTensorizeMappingInfo, or None

TVM passes its own objects (Buffer, PrimExpr, For); here a buffer is its shape, the access
indices a lambda over the loop variables (or AffineExprs over dims 0..n-1), a loop its extent,
an index map the lambda text that `Schedule.transform_layout` takes, and a desc a registered
TensorIntrin's name, its desc module or TVMScript text. The index maps are TVM's (the same
function of the buffer indices; the text may be spelled differently).
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from mlir import ir

from tir_mlir.ir.affine_exprs import const_of, dims_of, expr_bounds
from tir_mlir.context import get_context
from tir_mlir.dialect.ops import Block, Loop, body_ops
from tir_mlir.frontend.parser import parse
from tir_mlir.ir.ir_walk import walk_all
from tir_mlir.module import IRModule
from tir_mlir.analysis import buffer_util
from tir_mlir.schedule import lambda_exprs as symbolic
from tir_mlir.schedule.handles import BlockRV
from tir_mlir.schedule.index_splits import Split, index_splits, split_lambda
from tir_mlir.schedule.tensor_intrin import TensorIntrin
from tir_mlir.schedule.views import LoopView, StmtSRef

Desc = str | IRModule | ir.Operation


# --- block queries --------------------------------------------------------------------------------
def has_block(sch, block_name: str) -> bool:
    """True when a block of that name exists in any function of the schedule's module
    ("root": every function's body, as TVM's root block)."""
    funcs = list(sch.mod.functions)
    return any(block_name == "root" or block_name in sch.get_block_names(f) for f in funcs)


def is_output_block(sch, block: BlockRV) -> bool:
    """True when the block writes a buffer of its function's parameters."""
    return sch.is_output_block(block)


# --- suggest_index_map ------------------------------------------------------------------------------
def suggest_index_map(
    shape: Sequence[int],
    indices: Callable | Sequence[ir.AffineExpr],
    loops: Sequence[int],
    predicate=True,
) -> str | None:
    """A layout for a buffer of `shape` under which the access `buffer[indices]` inside loops
    of extents `loops` (outermost first, each from 0) walks the buffer in loop order: TVM's
    SuggestIndexMap. The flattened index is split into the pieces of loop variables it is made
    of (`i // 16`, `j % 16`, ...), ordered by where their variable's loop is and, within one
    variable, high part first; the map sends the buffer indices to those pieces.

    `indices`: a lambda over the loop variables (`lambda i, j: (i // 16 * 4 + j // 16, ...)`)
    or AffineExprs over dims 0..len(loops)-1. `predicate`: TVM's access predicate, True or a
    lambda over the loop variables of upper bounds joined with & (`lambda i, j: i < 3`: the
    loop ranges narrowed, as TVM does); any other gives None. Returns the map as lambda text
    (what `Schedule.transform_layout` takes), or None when the flattened index is not a
    mixed-radix sum of pieces of distinct loop variables (nothing to suggest)."""
    extents = [int(e) for e in loops]
    shape = [int(s) for s in shape]
    with get_context():
        if callable(predicate):
            narrowed = _narrowed(extents, symbolic.constraints(predicate, len(extents)))
            if narrowed is None:
                return None
            extents = narrowed
        elif predicate not in (True, 1, None):
            return None
        exprs = symbolic.exprs(indices, len(extents)) if callable(indices) else list(indices)
        if len(exprs) != len(shape):
            raise ValueError(
                f"suggest_index_map: {len(exprs)} indices for a buffer of rank {len(shape)}"
            )
        splits = index_splits(exprs, shape, extents)
    if not splits:
        return None
    order = sorted(range(len(splits)), key=lambda k: (splits[k].dim, -splits[k].lower_factor))
    return split_lambda(shape, [s.extent for s in splits], order)


def _narrowed(extents: list[int], constraints) -> list[int] | None:
    """The loop extents under a predicate of upper bounds `v < c` (`c - 1 - v >= 0`); None for
    any other condition."""
    out = list(extents)
    for c in constraints:
        used = dims_of(c.expr)
        if c.is_eq or len(used) != 1:
            return None
        (p,) = used
        bound = const_of(c.expr + ir.AffineExpr.get_dim(p))
        if bound is None:
            return None
        out[p] = max(0, min(out[p], bound + 1))
    return out


# --- tensorize loop mapping -------------------------------------------------------------------------
@dataclass
class TensorizeInfo:
    """How a block's loops line up with an intrinsic's desc loops (TVM's TensorizeInfo).

    loop_map: the sref of a block loop -> the desc loop (a view of the desc's loop) it maps to.
    desc_loop_indexer: each desc loop -> its position, outermost first.
    block_iter_paddings: per block iter var, the desc extent its domain must be padded to a
        multiple of (1: no padding); None when no iter needs padding."""

    loop_map: dict[StmtSRef, LoopView] = field(default_factory=dict)
    desc_loop_indexer: dict[LoopView, int] = field(default_factory=dict)
    block_iter_paddings: list[int] | None = None
    desc: object = field(default=None, repr=False)  # keeps the desc's loops alive

    def __repr__(self):
        pairs = ", ".join(
            f"{LoopView(k.op).loop_var}: {v.loop_var}" for k, v in self.loop_map.items()
        )
        return (
            f"TensorizeInfo(loop_map={{{pairs}}}, block_iter_paddings={self.block_iter_paddings})"
        )


def get_tensorize_loop_mapping(
    sch, block: BlockRV, desc_func: Desc, allow_padding: bool = False
) -> TensorizeInfo | None:
    """Map the loops around `block` onto the loops of the desc's block (TVM's
    GetTensorizeLoopMapping). Desc loop k goes with desc iter var k; from the innermost desc
    loop outwards, it takes the next block iter var (innermost first) of the same kind (S/R)
    and the block loop that iter var is bound to (`loop var + constant`). The block's loops are
    those directly around it, up to a loop holding more than one statement; each must start at
    0, and a desc extent must divide the loop's extent (else, with `allow_padding`, the iter
    var is padded to its multiple). None when no such mapping exists. The block loops may be in
    any order (the mapping goes through the bindings)."""
    with get_context():
        desc = _desc_module(desc_func)
        desc_block, desc_loops = _desc_nest(desc)
        target = Block(sch._block(block))
        loops = _perfect_loops(target.op)
        if loops is None:
            return None
        d_types, t_types = desc_block.iter_types, target.iter_types
        if len(desc_loops) != len(d_types) or len(t_types) < len(d_types):
            return None
        bound = _bound_loops(target, loops)
        info = TensorizeInfo(desc=desc)
        paddings: dict[int, int] = {}
        nxt = len(t_types) - 1
        for k in range(len(d_types) - 1, -1, -1):
            it = next((i for i in range(nxt, -1, -1) if t_types[i] == d_types[k]), None)
            if it is None:
                return None
            nxt = it - 1
            loop = bound.get(it)
            if loop is None:
                continue
            d_ext, t_ext = Loop(desc_loops[k]).extent, Loop(loop).extent
            if not isinstance(d_ext, int) or not isinstance(t_ext, int):
                return None
            if t_ext % d_ext:
                if not allow_padding:
                    return None
                paddings[it] = d_ext
            info.loop_map[StmtSRef(loop)] = LoopView(desc_loops[k])
        info.desc_loop_indexer = {LoopView(lp): k for k, lp in enumerate(desc_loops)}
        if paddings:
            info.block_iter_paddings = [paddings.get(i, 1) for i in range(len(t_types))]
        return info


def _desc_module(desc: Desc):
    """The module (or function op) holding the desc: its ops live as long as it does."""
    if isinstance(desc, str):
        if "\n" in desc or desc.lstrip().startswith(("@", "#")):
            if desc not in _PARSED_DESCS:  # kept: the views handed out point into it
                _PARSED_DESCS[desc] = parse(desc, filename="<desc>")
            return _PARSED_DESCS[desc]
        return TensorIntrin.get(desc).desc
    return desc


_PARSED_DESCS: dict[str, IRModule] = {}


def _desc_nest(desc):
    """The desc's computing block (the innermost one) and the loops above it, outermost first."""
    func = next(iter(desc.functions.values())) if isinstance(desc, IRModule) else desc
    blocks = [op for op in walk_all(func) if Block.is_block(op) and Block(op).iter_names]
    if not blocks:
        raise ValueError("tensor intrinsic desc: no block with iter vars")
    b = blocks[-1]
    loops, p = [], b.parent
    while p is not None and p.name != "func.func":
        if Loop.is_loop(p.operation):
            loops.append(p.operation)
        p = p.parent
    return Block(b), loops[::-1]


def _perfect_loops(block_op: ir.Operation) -> list[ir.Operation] | None:
    """The loops directly around a block, innermost up to (and without) one holding more than
    one statement, outermost first; None when one of them does not start at 0."""
    loops, p = [], block_op.parent
    while p is not None and Loop.is_loop(p.operation):
        if len([o for o in body_ops(Loop(p.operation).body) if not _is_index_op(o)]) != 1:
            break
        if Loop(p.operation).min != 0:
            return None
        loops.append(p.operation)
        p = p.parent
    return loops[::-1]


def _is_index_op(op) -> bool:
    """An op computing indices only (not a statement, not part of the computation)."""
    return bool(op.results) and all(isinstance(r.type, ir.IndexType) for r in op.results)


def _bound_loops(block: Block, loops: list[ir.Operation]) -> dict[int, ir.Operation]:
    """Block iter var position -> the loop its binding is (`loop var + constant`; the loops
    outside `loops` are constants there: `f // 2 * 64 + i` is loop i's)."""
    ivs = [Loop(lp).iv for lp in loops]
    dims = block.dims
    nest = {k for k, v in enumerate(dims) if any(v == iv for iv in ivs)}
    out = {}
    for i, e in enumerate(block.bindings.results):
        used = sorted(dims_of(e) & nest)
        if len(used) != 1:
            continue
        terms = _sum_terms(e)
        alone = [t for t in terms if isinstance(t, ir.AffineDimExpr) and t.position == used[0]]
        if len(alone) != 1 or any(dims_of(t) & nest for t in terms if t is not alone[0]):
            continue
        v = dims[used[0]]
        for lp, iv in zip(loops, ivs):
            if iv == v:
                out[i] = lp
    return out


def _sum_terms(e: ir.AffineExpr) -> list:
    """The terms of a sum, left to right (downcast)."""
    e = e.maybe_downcast()
    if isinstance(e, ir.AffineAddExpr):
        return _sum_terms(e.lhs) + _sum_terms(e.rhs)
    return [e]


# --- auto-tensorize mapping -------------------------------------------------------------------------
@dataclass
class AutoTensorizeMappingInfo:
    """How a block could be reshaped to match an intrinsic's desc (TVM's
    AutoTensorizeMappingInfo).

    mappings: index maps (lambda text over the block's iter vars) for transform_block_layout.
    lhs_buffer_map: block buffer name -> desc buffer name.
    lhs_iters / rhs_iters: the block's and the desc block's iter var names."""

    mappings: list[str]
    lhs_buffer_map: dict[str, str]
    lhs_iters: list[str]
    rhs_iters: list[str]


def get_auto_tensorize_mapping_info(
    sch, block: BlockRV, desc_func: Desc
) -> AutoTensorizeMappingInfo | None:
    """TVM's GetAutoTensorizeMappingInfo. The block's body must compute what the desc's does
    (the same ops in the same order, buffers in corresponding places; indices not compared).
    Each iter var is then characterised by its kind and the set of (desc) buffers whose
    indices use it; a block iter var goes with the desc iter var of the same character. The
    suggested map fuses, per desc iter var, the block iter vars going with it (in block order,
    row-major over their domains), after the block iter vars going with none. None when the
    computations differ or an iter var could go with several desc iter vars."""
    with get_context():
        desc = _desc_module(desc_func)
        d_block, _ = _desc_nest(desc)
        t_block = Block(sch._block(block))
        buffers = _match_bodies(t_block, d_block)
        if buffers is None:
            return None
        d_bufs = list(dict.fromkeys(buffers.values()))
        t_masks = _iter_masks(t_block, {t: d_bufs.index(d) for t, d in buffers.items()})
        d_masks = _iter_masks(d_block, {d: d_bufs.index(d) for d in d_bufs})
        t_types, d_types = t_block.iter_types, d_block.iter_types
        names = list(t_block.iter_names)
        extents = [ext for _, ext in t_block.domains]
        unmapped: list[str] = []
        fused: list[list[int]] = [[] for _ in d_types]
        for i, (mask, kind) in enumerate(zip(t_masks, t_types)):
            cands = [k for k, (m, t) in enumerate(zip(d_masks, d_types)) if m == mask and t == kind]
            if len(cands) > 1:
                return None
            if cands:
                fused[cands[0]].append(i)
            else:
                unmapped.append(names[i])
        outs = unmapped + [
            _fuse([names[i] for i in grp], [extents[i] for i in grp]) for grp in fused
        ]
        text = f"lambda {', '.join(names)}: ({', '.join(outs)}{',' if len(outs) == 1 else ''})"
        return AutoTensorizeMappingInfo(
            [text],
            {buffer_util.buffer_name(t): buffer_util.buffer_name(d) for t, d in buffers.items()},
            names,
            list(d_block.iter_names),
        )


def _fuse(names: list[str], extents: list[int]) -> str:
    """`((v0 * e1 + v1) * e2 + v2)` expanded: `v0 * (e1*e2) + v1 * e2 + v2` (0 for none)."""
    terms, stride = [], 1
    for n, e in zip(names[::-1], extents[::-1]):
        terms.append(n if stride == 1 else f"{n} * {stride}")
        stride *= e
    return " + ".join(terms[::-1]) or "0"


def _match_bodies(target: Block, desc: Block) -> dict[ir.Value, ir.Value] | None:
    """Target buffer -> desc buffer when the two block bodies compute the same thing."""
    t_ops = [o for o in body_ops(target.body) if not _is_index_op(o)]
    d_ops = [o for o in body_ops(desc.body) if not _is_index_op(o)]
    if len(t_ops) != len(d_ops):
        return None
    vals: dict[ir.Value, ir.Value] = {}
    bufs: dict[ir.Value, ir.Value] = {}
    for t, d in zip(t_ops, d_ops):
        if t.name != d.name or [str(r.type) for r in t.results] != [str(r.type) for r in d.results]:
            return None
        if t.name in ("memref.load", "memref.store"):
            at = 0 if t.name == "memref.load" else 1
            tb, db = t.operands[at], d.operands[at]
            if (
                bufs.setdefault(tb, db) != db
                or ir.MemRefType(tb.type).element_type != ir.MemRefType(db.type).element_type
            ):
                return None
            if t.name == "memref.store" and not _same_value(t.operands[0], d.operands[0], vals):
                return None
        elif t.regions or len(t.operands) != len(d.operands):
            return None
        else:
            if not all(
                _same_value(a, b, vals)
                for a, b in zip(t.operands, d.operands)
                if not isinstance(a.type, ir.IndexType)
            ):
                return None
            if "predicate" in t.attributes and str(t.attributes["predicate"]) != str(
                d.attributes["predicate"]
            ):
                return None
        for r, s in zip(t.results, d.results):
            vals[r] = s
    if len(set(bufs.values())) != len(bufs):
        return None
    return bufs


def _same_value(t: ir.Value, d: ir.Value, vals: dict) -> bool:
    """The target value is what the matched ops computed for the desc one (or the same
    constant)."""
    return vals.get(t) == d or (_const_attr(t) is not None and _const_attr(t) == _const_attr(d))


def _const_attr(v: ir.Value) -> str | None:
    o = v.owner
    if isinstance(o, ir.Block) or o.name != "arith.constant":
        return None
    return str(o.attributes["value"])


def _iter_masks(block: Block, position: dict[ir.Value, int]) -> list[frozenset]:
    """Per iter var, the positions of the buffers whose access indices use it."""
    args = list(block.body.arguments)
    domains = block.domains
    masks: list[set] = [set() for _ in args]
    for op, kind, buf in buffer_util.accesses(block.op):
        if buf not in position:
            continue
        first = 1 if kind == "load" else 2
        for idx in list(op.operands)[first:]:
            leaves: list = []
            try:
                e = buffer_util.to_affine(idx, leaves)
                bounds = [
                    next(
                        (
                            (lo, lo + ext - 1)
                            for a, (lo, ext) in zip(args, domains)
                            if a == leaf and isinstance(lo, int) and isinstance(ext, int)
                        ),
                        None,
                    )
                    for leaf in leaves
                ]
                # (an index that simplifies to a constant is kept as written: TVM's
                # SimplifyNonTrivialExpr, so `w[rh, ...]` with rh of extent 1 still uses rh)
                used = [leaves[d] for d in dims_of(_drop_constant_parts(e, bounds))] or [
                    leaves[d] for d in dims_of(e)
                ]
            except buffer_util.NotAffine:
                used = list(args)
            for k, a in enumerate(args):
                if any(u == a for u in used):
                    masks[k].add(position[buf])
    return [frozenset(m) for m in masks]


def _drop_constant_parts(e: ir.AffineExpr, bounds) -> ir.AffineExpr:
    """`e` with `x // c` (x in [0, c)) made 0 and `x % c` (x in [0, c)) made x, given the
    dims' bounds: `v_co // 64 * 64 + v_rc` with v_co in [0, 64) uses v_rc only."""
    e = e.maybe_downcast()
    if not isinstance(e, ir.AffineBinaryExpr):
        return e
    lhs, rhs = _drop_constant_parts(e.lhs, bounds), _drop_constant_parts(e.rhs, bounds)
    if isinstance(e, ir.AffineAddExpr):
        return lhs + rhs
    if isinstance(e, ir.AffineMulExpr):
        return lhs * rhs
    c = const_of(rhs)
    b = expr_bounds(lhs, bounds) if c is not None and c > 0 else None
    inside = c is not None and b is not None and 0 <= b[0] and b[1] < c
    if isinstance(e, ir.AffineFloorDivExpr):
        return ir.AffineExpr.get_constant(0) if inside else ir.AffineExpr.get_floor_div(lhs, rhs)
    if isinstance(e, ir.AffineModExpr):
        return lhs if inside else ir.AffineExpr.get_mod(lhs, rhs)
    return ir.AffineExpr.get_ceil_div(lhs, rhs)


__all__ = [
    "AutoTensorizeMappingInfo",
    "Split",
    "TensorizeInfo",
    "get_auto_tensorize_mapping_info",
    "get_tensorize_loop_mapping",
    "has_block",
    "is_output_block",
    "suggest_index_map",
]
