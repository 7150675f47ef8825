"""A schedule's index of its module: sid -> op and (function, block name) -> block ops, kept
current by the rewrites instead of being rebuilt by a walk of the module after each primitive.

A cached op is only safe to use while the index hears of every erasure: MLIR's Python
bindings hand out a new wrapper per access and do not invalidate the wrappers of the ops
nested in an erased op (reading one reads freed memory). So:
  * `analysis.erase`, the rewrites' way to erase, reports the ops it frees (`erased`);
  * `analysis.set_operands`, which recreates an op with new operands, reports the new op
    (`replaced`), as `Schedule._handle` does for the sids it hands out;
  * an op given a sid any other way (a block recreated with its old sid) is found by a walk on
    the first lookup that misses; block names are re-walked after any rewrite (blocks are
    created and renamed in many places).
Only primitives declared `keeps_index=True` (audited: they erase only through
`analysis.erase`) keep the index; any other rewriting primitive drops it, as before.
`TIR_MLIR_CHECK_INDEX=1` (set by the tests) compares the index with a fresh walk after every
primitive.
"""
import os
from typing import Dict, List, Optional, Tuple

from mlir import ir


SID = "tir.sid"
# The ops handles stand for (a function is its implicit root block).
HANDLE_OPS = ("tir.block", "affine.for")
CHECK = os.environ.get("TIR_MLIR_CHECK_INDEX") == "1"


class OpIndex:
    """The index of `mod` (an IRModule), built by one walk."""

    def __init__(self, mod):
        self.mod = mod
        self.ops: Dict[int, ir.Operation] = {}
        self.blocks: Dict[Tuple[str, str], List[ir.Operation]] = {}
        self.complete = True       # every op with a sid is in `ops` (walked since the last rewrite)
        self.names = True          # `blocks` is current
        self.erased = set()        # sids of ops erased (and not recreated) in this rewrite
        self.settled = False       # walked after the last change of the running primitive
        self._walk()

    def _walk(self):
        ops, blocks = {}, {}
        for name, f in self.mod.functions.items():
            for op in [f, *_handle_ops(f)]:    # f: the implicit root block
                a = op.attributes
                if SID in a:
                    ops[ir.IntegerAttr(a[SID]).value] = op
                if op.name == "tir.block":
                    blocks.setdefault((name, ir.StringAttr(a["name"]).value), []).append(op)
        self.ops, self.blocks = ops, blocks
        self.complete = self.names = True
        self.erased = set()

    def lookup(self, sid: int, settled: bool = True) -> Optional[ir.Operation]:
        """The op with that sid; `settled=False` while a rewrite runs (it may have created
        ops since the last walk)."""
        op = self.ops.get(sid)
        if op is None and not (self.complete and settled):
            self._walk()
            op = self.ops.get(sid)
        return op

    def blocks_named(self, func: str, name: str, settled: bool = True) -> List[ir.Operation]:
        if not (self.names and settled):
            self._walk()
        return self.blocks.get((func, name), [])

    def missing(self, sids, fresh: bool = False) -> List[int]:
        """Those of `sids` whose op is no longer in the module: reported erased by this
        rewrite and not recreated, or else not found by a walk (`fresh`: the index was just
        walked, with nothing rewritten since)."""
        if not fresh and any(s not in self.ops and s not in self.erased for s in sids):
            self._walk()
        return [s for s in sids if s not in self.ops]

    def rewriting(self):
        """A tracked rewrite starts or ends: ops may appear that the index does not know."""
        self.complete = self.names = False
        self.erased = set()

    def add(self, sid: int, op: ir.Operation):
        self.ops[sid] = op
        self.erased.discard(sid)

    def forget(self, ops):
        for op in ops:
            a = op.attributes
            if SID in a:
                sid = ir.IntegerAttr(a[SID]).value
                known = self.ops.get(sid)
                if known is not None and known == op:
                    del self.ops[sid]
                    self.erased.add(sid)

    def stale(self) -> Optional[str]:
        """What differs from a fresh walk (None when nothing does)."""
        fresh = OpIndex(self.mod)
        for sid, op in self.ops.items():
            now = fresh.ops.get(sid)
            if now is None or now != op:
                return f"sid {sid} maps to an op that is not the module's op with that sid"
        if self.complete and set(fresh.ops) != set(self.ops):
            return "an op with a sid is missing from an index marked complete"
        if self.names and fresh.blocks != self.blocks:
            return "the block names differ from the module's"
        return None


def _handle_ops(f) -> List[ir.Operation]:
    """The blocks and loops in function `f`: the only ops handles (and so sids) are given to."""
    out = []

    def visit(o):                   # (filtered in MLIR's walk: no list of every op)
        if o.name in HANDLE_OPS:
            out.append(o)
        return ir.WalkResult.ADVANCE
    f.operation.walk(visit, ir.WalkOrder.PRE_ORDER)
    return out


# The schedule whose primitive is running (its `_ops` is the index rewrites report to).
_schedule = None


def reporting_to(schedule):
    """Make `schedule` the one rewrites report to; returns the previous one (to restore)."""
    global _schedule
    prev, _schedule = _schedule, schedule
    return prev


def erased(ops):
    """`ops` (an op and all ops nested in it) are about to be erased."""
    if _schedule is not None and _schedule._pre_index is not None:
        if _schedule._tracks_lookups:
            _schedule._pre_index.forget(ops)
        else:
            _schedule._pre_index = None      # (a lookups_first primitive's lookups are over)
    index = _schedule._ops if _schedule is not None else None
    if index is not None:
        index.forget(ops)


def replaced(op: ir.Operation):
    """`op` was created to replace an op with the same sid (which was erased)."""
    if _schedule is None or SID not in op.attributes:
        return
    for index in (_schedule._ops, _schedule._pre_index if _schedule._tracks_lookups else None):
        if index is not None:
            index.add(ir.IntegerAttr(op.attributes[SID]).value, op)


def strip_handles(module_op) -> None:
    """Remove the stable ids from the functions, blocks and loops in `module_op`.

    A sid is the schedule's bookkeeping for its handles, not part of the program: lowering
    calls this on its own copy of the module, so no stage can take a sid for a user annotation
    and whether a schedule took handles never changes the code it makes. (A side table keyed
    by op could not replace the attribute: rewrites recreate ops and hand the sid on with the
    other attributes.)"""
    def visit(o):
        if (o.name in HANDLE_OPS or o.name == "func.func") and SID in o.attributes:
            del o.attributes[SID]
        return ir.WalkResult.ADVANCE
    module_op.walk(visit, ir.WalkOrder.PRE_ORDER)
