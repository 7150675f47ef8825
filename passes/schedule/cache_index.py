"""cache_index: precompute the index computations of a block (expressions of its iter vars
alone) into buffers, filled by blocks placed before it (TVM 0.21's output):

    for i: block "B":                            index_var_0 = alloc((64,), "int32")
        B[vi] = A[vi // 8, vi % 8] + 1           index_var_1 = alloc((64,), "int32")
                                         ==>     for ax0: block "index_0": index_var_0[v0] = v0 // 8
    cache_index(B, "global")                     for ax0: block "index_1": index_var_1[v0] = v0 % 8
                                                 for i: block "B":
                                                     B[vi] = A[index_var_0[vi], index_var_1[vi]] + 1

What is cached (TVM's common-subexpression rule): the candidates are the expressions of iter
vars and constants only (load indices, `T.if_then_else` conditions, casts...; not store indices)
that are neither an iter var nor a constant, with their sub-expressions; biggest first (ties:
first seen), one is cached when it still occurs at least `cse_thresh` times (at least once for
0) outside the expressions already cached. Buffer k, `index_var_k` in `storage_scope`, has one
dimension per iter var of expression k (in the order they appear in it) over that iter var's
domain, and its type (an index: int32); block `index_k` fills it.

Legality: the block is a leaf at the function root (as cache_read) with something to cache
(TVM fails on nothing); the iter vars cached over have domains starting at 0.
"""

from typing import Dict, List, Optional

from mlir import ir
from mlir.dialects import arith, memref

from tir_mlir.dialect.ops import Block
from tir_mlir.errors import ScheduleError
from tir_mlir.analysis import structure as analysis
from tir_mlir.analysis.buffer_util import func_of, replace_uses, top_stmt
from tir_mlir.passes.schedule.cache_read_write import _check_root, make_nest, root_alloc
from tir_mlir.analysis.expr_tree import clone_tree, erase_dead

WHO = "cache_index"
_PURE_CALLS = ("floormod", "floordiv", "truncmod", "truncdiv", "min", "max", "abs")


def cache_index(block: Block, storage_scope: str, cse_thresh: int = 0) -> List[Block]:
    _check_root(block, WHO)
    if any(analysis.is_block(o) for o in analysis.walk(block.op)):
        raise ScheduleError(f"{WHO}: block {block.name!r} is not a leaf block")
    if not isinstance(cse_thresh, int) or cse_thresh < 0:
        raise ScheduleError(f"{WHO}: cse_thresh must be a non-negative int, got {cse_thresh!r}")
    exprs = _Exprs(block)
    cached = exprs.choose(max(cse_thresh, 1))
    if not cached:
        raise ScheduleError(f"{WHO}: block {block.name!r} has no index computation to cache")

    # --- rewrite ------------------------------------------------------------------------------
    loc = block.op.location
    func = func_of(block.op)
    before = top_stmt(block.op)
    blocks = []
    for k, value in enumerate(cached):
        order = exprs.iter_vars_of(value)
        shape = [block.domains[p][1] for p in order]
        key = exprs.key(value)
        stored = _stored_type(value.type)
        buf = root_alloc(
            func, ir.MemRefType.get(shape, stored), f"index_var_{k}", storage_scope, loc
        ).result

        def fill(ivs, value=value, order=order, buf=buf):
            term = analysis.terminator(ivs[0].owner)  # (cached values use an iter var)
            subst = {
                arg: (lambda user, iv=ivs[order.index(p)]: iv)
                for arg, p in exprs.args.items()
                if p in order
            }
            v = clone_tree(value, term, subst, within=block.op)
            if v.type != stored:
                v = arith.IndexCastOp(stored, v).result
            memref.StoreOp(v, buf, ivs)

        blocks.append(
            make_nest(
                f"index_{k}", shape, loc, before, fill, [block.index_dtypes[p] for p in order]
            )
        )
        for occ in exprs.occurrences(key):
            args = exprs.args_near(occ)
            idx = [args[p] for p in order]

            def load(user, buf=buf, idx=idx, want=occ.type):
                v = memref.LoadOp(buf, idx).result
                return v if v.type == want else arith.IndexCastOp(want, v).result

            replace_uses(occ, load)
            erase_dead(occ)
    return blocks


def _stored_type(t: ir.Type) -> ir.Type:
    return ir.IntegerType.get_signless(32) if isinstance(t, ir.IndexType) else t


class _Exprs:
    """The index computations of a block: pure expression trees over its iter vars."""

    def __init__(self, block: Block):
        self.block = block
        self.args: Dict[ir.Value, int] = {}  # iter var (body or init copy) -> position
        for region_block in [block.body] + ([block.init] if block.init is not None else []):
            for k, a in enumerate(region_block.arguments):
                self.args[a] = k
        self._keys: Dict[ir.Value, Optional[str]] = {}

    def key(self, v: ir.Value) -> Optional[str]:
        """A structural key when `v` is computed from iter vars and constants only (iter vars
        by position), else None."""
        if v in self._keys:
            return self._keys[v]
        if v in self.args:
            key = f"%{self.args[v]}"
        elif isinstance(v.owner, ir.Block):
            key = None
        else:
            op = analysis.op_of(v.owner)
            if op.name == "arith.constant":
                key = f"{op.attributes['value']}"
            elif self._pure(op) and analysis.is_ancestor(self.block.op, op):
                kids = [self.key(x) for x in op.operands]
                named = [op.attributes[i] for i in range(len(op.attributes))]
                attrs = ",".join(
                    f"{a.name}={a.attr}" for a in named if not a.name.startswith("tir.")
                )
                known = [k for k in kids if k is not None]
                key = f"{op.name}[{attrs}]({','.join(known)})" if len(known) == len(kids) else None
            else:
                key = None
        self._keys[v] = key
        return key

    @staticmethod
    def _pure(op: ir.Operation) -> bool:
        if op.name == "tir.call":
            return ir.StringAttr(op.attributes["callee"]).value in _PURE_CALLS
        return (
            (op.name.startswith("arith.") or op.name == "affine.apply")
            and len(op.results) == 1
            and not op.regions
        )

    def trivial(self, v: ir.Value) -> bool:
        return v in self.args or (
            not isinstance(v.owner, ir.Block) and analysis.op_of(v.owner).name == "arith.constant"
        )

    def children(self, v: ir.Value) -> list:
        return [] if self.trivial(v) else list(analysis.op_of(v.owner).operands)

    def roots(self) -> List[ir.Value]:
        """The maximal index computations, in program order: operands of the other ops (a
        store's value, not its indices)."""
        out = []
        for op in analysis.walk(self.block.op):
            if self.key_of_op(op) is not None:
                continue
            operands = list(op.operands)
            if op.name == "memref.store":
                operands = operands[:1]
            out += [v for v in operands if self.key(v) is not None and not self.trivial(v)]
        return out

    def key_of_op(self, op: ir.Operation) -> Optional[str]:
        return self.key(op.results[0]) if len(op.results) == 1 else None

    def size(self, v: ir.Value) -> int:
        return 1 + sum(self.size(c) for c in self.children(v))

    def choose(self, thresh: int) -> List[ir.Value]:
        """The expressions to cache (one value each), in buffer order."""
        roots = self.roots()
        first: Dict[Optional[str], ir.Value] = {}

        def collect(v):
            if not self.trivial(v):
                first.setdefault(self.key(v), v)
                for c in self.children(v):
                    collect(c)

        for r in roots:
            collect(r)
        chosen: List[Optional[str]] = []

        def live(v, key) -> int:
            k = self.key(v)
            if k in chosen:
                return 0
            return (k == key) + sum(live(c, key) for c in self.children(v))

        out = []
        for v in sorted(first.values(), key=self.size, reverse=True):  # stable: first seen
            if self.iter_vars_of(v) and sum(live(r, self.key(v)) for r in roots) >= thresh:
                chosen.append(self.key(v))
                out.append(v)
        for v in out:
            for p in self.iter_vars_of(v):
                if self.block.domains[p][0] != 0:
                    raise ScheduleError(
                        f"{WHO}: iter var {self.block.iter_names[p]!r} of "
                        f"block {self.block.name!r} does not start at 0"
                    )
        return out

    def occurrences(self, key: Optional[str]) -> List[ir.Value]:
        """The values computing `key` now, outside store indices and other cached values."""
        self._keys.clear()
        out = []

        def find(v):
            if self.key(v) == key:
                out.append(v)
            else:
                for c in self.children(v):
                    find(c)

        for r in self.roots():
            find(r)
        return out

    def iter_vars_of(self, v: ir.Value) -> List[int]:
        """The iter var positions `v` uses, left to right."""
        if v in self.args:
            return [self.args[v]]
        out = []
        for c in self.children(v):
            out += [p for p in self.iter_vars_of(c) if p not in out]
        return out

    def args_near(self, v: ir.Value) -> list:
        """The iter vars as seen where `v` is computed (the init region has its own)."""
        init = self.block.init
        op = analysis.op_of(v.owner)
        if init is not None and any(
            analysis.op_of(o) == op or analysis.is_ancestor(analysis.op_of(o), op)
            for o in init.operations
        ):
            return list(init.arguments)
        return list(self.block.iter_vars)
