"""cache_index: precompute the index expressions a block loads with into int32 buffers, filled
by blocks placed before it (TVM 0.21's output):

    for i: block "B":                            index_var_0 = alloc((64,), "int32")
        B[vi] = A[vi // 8, vi % 8] + 1           index_var_1 = alloc((64,), "int32")
                                         ==>     for ax0: block "index_0": index_var_0[v0] = v0 // 8
    cache_index(B, "global")                     for ax0: block "index_1": index_var_1[v0] = v0 % 8
                                                 for i: block "B":
                                                     B[vi] = A[index_var_0[vi], index_var_1[vi]] + 1

What is cached (TVM's common-subexpression rule): the candidates are the sub-expressions of the
load indices that are neither an iter var nor a constant, biggest first (ties: first seen); one
is cached when it still occurs at least `cse_thresh` times (at least once for 0) outside the
expressions already cached. Buffer k, `index_var_k` in `storage_scope`, has one dimension per
iter var of expression k (in the order they appear in it) over that iter var's domain; block
`index_k` fills it.

Legality: the block is a leaf at the function root (as cache_read) with something to cache
(TVM fails on nothing). Indices that are not affine in the block's iter vars are left as they
are; an iter var whose domain does not start at 0 is not cached over.
"""
from typing import Dict, List

from mlir import ir
from mlir.dialects import arith, memref

from tir_mlir.dialect.ops import Block
from tir_mlir.errors import ScheduleError
from tir_mlir.passes.schedule import analysis
from tir_mlir.passes.schedule.buffer_util import (
    NotAffine, accesses, emit_index, func_of, substitute, to_affine, top_stmt)
from tir_mlir.passes.schedule.cache_read_write import _check_root, make_nest, root_alloc
from tir_mlir.passes.schedule.expr_tree import erase_dead
from tir_mlir.passes.schedule.reindex import _args_of

WHO = "cache_index"


def cache_index(block: Block, storage_scope: str, cse_thresh: int = 0) -> List[Block]:
    _check_root(block, WHO)
    if any(analysis.is_block(o) for o in analysis.walk(block.op)):
        raise ScheduleError(f"{WHO}: block {block.name!r} is not a leaf block")
    if not isinstance(cse_thresh, int) or cse_thresh < 0:
        raise ScheduleError(f"{WHO}: cse_thresh must be a non-negative int, got {cse_thresh!r}")
    sites = _index_sites(block)
    cached = _choose([e for _, _, e in sites], max(cse_thresh, 1))
    if not cached:
        raise ScheduleError(f"{WHO}: block {block.name!r} loads with no index computation "
                            f"to cache")

    # --- rewrite ------------------------------------------------------------------------------
    loc = block.op.location
    func = func_of(block.op)
    order = [_vars_in_order(e) for e in cached]
    i32 = ir.IntegerType.get_signless(32)
    bufs = [root_alloc(func, ir.MemRefType.get([block.domains[v][1] for v in vs], i32),
                       f"index_var_{k}", storage_scope, loc).result
            for k, vs in enumerate(order)]
    blocks = []
    before = top_stmt(block.op)
    for k, (e, vs) in enumerate(zip(cached, order)):
        subs = [ir.AffineExpr.get_dim(vs.index(p)) if p in vs else ir.AffineExpr.get_constant(0)
                for p in range(len(block.iter_names))]
        local = substitute(e, subs)

        def fill(ivs, local=local, buf=bufs[k]):
            value = arith.IndexCastOp(ir.IntegerType.get_signless(32),
                                      emit_index(local, ivs)).result
            memref.StoreOp(value, buf, ivs)
        blocks.append(make_nest(f"index_{k}", [block.domains[v][1] for v in vs], loc, before,
                                fill, [block.index_dtypes[v] for v in vs]))
    keys = {str(e): k for k, e in enumerate(cached)}
    n = len(block.iter_names)
    for op, pos, e in sites:
        new = _rebuild(e, keys, n)
        if str(new) == str(e):
            continue
        args = _args_of(block, op)
        leaves = list(args) + [_cached_leaf(bufs[k], [args[v] for v in order[k]])
                               for k in range(len(cached))]
        old = op.operands[pos]
        with ir.InsertionPoint(op), op.location:
            op.operands[pos] = emit_index(new, leaves)
        erase_dead(old)
    return blocks


def _index_sites(block: Block) -> list:
    """(load, operand position, index as an AffineExpr over iter var positions) for every load
    index that is affine in the block's iter vars."""
    out = []
    for op, kind, _ in accesses(block.op):
        if kind != "load":
            continue
        args = _args_of(block, op)
        for pos, v in enumerate(list(op.operands)[1:], start=1):
            leaves: list = []
            try:
                e = to_affine(v, leaves)
            except NotAffine:
                continue
            if not all(any(lf == a for a in args) for lf in leaves):
                continue
            where = [next(k for k, a in enumerate(args) if a == lf) for lf in leaves]
            e = substitute(e, [ir.AffineExpr.get_dim(k) for k in where]) if leaves else e
            if all(block.domains[k][0] == 0 for k in where):
                out.append((op, pos, e))
    return out


def _children(e: ir.AffineExpr) -> list:
    e = e.maybe_downcast()
    return [e.lhs, e.rhs] if isinstance(e, ir.AffineBinaryExpr) else []


def _trivial(e: ir.AffineExpr) -> bool:
    return not _children(e)


def _size(e: ir.AffineExpr) -> int:
    return 1 + sum(_size(c) for c in _children(e))


def _choose(exprs: List[ir.AffineExpr], thresh: int) -> List[ir.AffineExpr]:
    """The expressions to cache, in buffer order (see the module docstring)."""
    seen: Dict[str, ir.AffineExpr] = {}

    def collect(e):
        if not _trivial(e):
            seen.setdefault(str(e), e)
            for c in _children(e):
                collect(c)
    for e in exprs:
        collect(e)
    candidates = sorted(seen.values(), key=_size, reverse=True)   # stable: first seen first
    chosen: List[str] = []

    def live(e, key) -> int:
        s = str(e)
        if s in chosen:
            return 0
        return (s == key) + sum(live(c, key) for c in _children(e))
    out = []
    for c in candidates:
        if sum(live(e, str(c)) for e in exprs) >= thresh:
            chosen.append(str(c))
            out.append(c)
    return out


def _vars_in_order(e: ir.AffineExpr) -> List[int]:
    """The iter var positions in `e`, left to right."""
    e = e.maybe_downcast()
    if isinstance(e, ir.AffineDimExpr):
        return [e.position]
    out = []
    for c in _children(e):
        out += [v for v in _vars_in_order(c) if v not in out]
    return out


def _rebuild(e: ir.AffineExpr, keys: Dict[str, int], n: int) -> ir.AffineExpr:
    """`e` with each cached sub-expression k replaced by dim n + k."""
    if str(e) in keys:
        return ir.AffineExpr.get_dim(n + keys[str(e)])
    e = e.maybe_downcast()
    if not isinstance(e, ir.AffineBinaryExpr):
        return e
    a, b = _rebuild(e.lhs, keys, n), _rebuild(e.rhs, keys, n)
    if isinstance(e, ir.AffineAddExpr):
        return a + b
    if isinstance(e, ir.AffineMulExpr):
        return a * b
    if isinstance(e, ir.AffineFloorDivExpr):
        return ir.AffineExpr.get_floor_div(a, b)
    if isinstance(e, ir.AffineModExpr):
        return ir.AffineExpr.get_mod(a, b)
    return ir.AffineExpr.get_ceil_div(a, b)


def _cached_leaf(buf: ir.Value, idx: list):
    """A leaf making `index_var_k[idx]` as an index value, afresh at each use."""
    def make():
        load = memref.LoadOp(buf, idx).result
        return arith.IndexCastOp(ir.IndexType.get(), load).result
    return make
