"""The index of a schedule's module: sid -> op and (function, block name) -> block ops, a
cache of one walk of the module that the rewrites keep valid instead of a walk per primitive.

A cached op may only be read while it is alive: MLIR's Python bindings hand out a new wrapper
per access and do not invalidate the wrappers of the ops nested in an erased op (reading one
reads freed memory). So every erasure is reported, and the rest is checked on use:
  * `structure.erase`, the one way a rewrite erases an op, reports the ops it frees
    (`erased`): their entries go (and their sids are noted as gone);
  * an op recreated with the sid of the op it replaces (`structure.set_operands`,
    `structure.move_sid`) is reported (`replaced`) and takes the entry over;
  * a sid the index does not hold (an op a rewrite cloned with its sid) is found by a walk;
    a block-name entry is checked against the block's name (a rewrite renamed it) and a
    missing one is found by a walk.
The index reports to one listener, the `Rewriter` of the schedule whose primitive is running
(tir_mlir/schedule/rewriter.py). `TIR_MLIR_CHECK_INDEX=1` (set by the tests) compares the
index with a fresh walk after every primitive.
"""

import os
from typing import Dict, List, Optional, Sequence, Set, Tuple

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
        self.gone: Set[int] = set()  # sids whose op the running primitive erased
        self.walks = 0
        self._walk()

    def _walk(self):
        ops, blocks = {}, {}
        for name, f in self.mod.functions.items():
            for op in [f, *_handle_ops(f)]:  # f: the implicit root block
                a = op.attributes
                if SID in a:
                    ops[ir.IntegerAttr(a[SID]).value] = op
                if op.name == "tir.block":
                    blocks.setdefault((name, ir.StringAttr(a["name"]).value), []).append(op)
        self.ops, self.blocks = ops, blocks
        self.walks += 1

    def step(self):
        """A primitive starts: what it erases is noted afresh."""
        self.gone = set()

    def lookup(self, sid: int) -> Optional[ir.Operation]:
        """The op with that sid, or None when the module has none."""
        op = self.ops.get(sid)
        if op is None:
            self._walk()
            op = self.ops.get(sid)
        return op

    def blocks_named(self, func: str, name: str) -> List[ir.Operation]:
        found = self.blocks.get((func, name))
        if not found or any(_block_name(op) != name for op in found):
            self._walk()
            found = self.blocks.get((func, name))
        return found or []

    def block_names(self, func: str) -> List[str]:
        self._walk()
        return [n for f, n in self.blocks if f == func]

    def missing(self, sids: Sequence[int]) -> List[int]:
        """Those of `sids` whose op is no longer in the module: erased by the running
        primitive and not recreated, or else not found by a walk."""
        if any(s not in self.ops and s not in self.gone for s in sids):
            self._walk()
        return [s for s in sids if s not in self.ops]

    def add(self, sid: int, op: ir.Operation):
        self.ops[sid] = op
        self.gone.discard(sid)

    def forget(self, ops: Sequence[ir.Operation]):
        """`ops` are about to be erased (while still alive: their attributes are read)."""
        blocks = []
        for op in ops:
            if op.name not in HANDLE_OPS:
                continue
            a = op.attributes
            if SID in a:
                sid = ir.IntegerAttr(a[SID]).value
                known = self.ops.get(sid)
                if known is not None and known == op:
                    del self.ops[sid]
                    self.gone.add(sid)
            if op.name == "tir.block":
                blocks.append(op)
        if blocks:  # (under any name: a block renamed since it was indexed is there too)
            for key, found in self.blocks.items():
                if any(b == op for b in found for op in blocks):
                    self.blocks[key] = [b for b in found if not any(b == op for op in blocks)]

    def stale(self) -> Optional[str]:
        """What the index holds that a fresh walk does not (None when nothing)."""
        fresh = OpIndex(self.mod)
        for sid, op in self.ops.items():
            now = fresh.ops.get(sid)
            if now is None or now != op:
                return f"sid {sid} maps to an op that is not the module's op with that sid"
        # (a block renamed since is alive: `blocks_named` checks the name it finds)
        alive = [b for bs in fresh.blocks.values() for b in bs]
        for key, ops in self.blocks.items():
            if any(not any(op == b for b in alive) for op in ops):
                return (
                    f"block {key[1]!r} of function {key[0]!r} maps to an op that is "
                    f"not a block of the module"
                )
        return None


def sids_of(ops: Sequence[ir.Operation]) -> List[int]:
    """The sids of those of `ops` that have one."""
    return [ir.IntegerAttr(o.attributes[SID]).value for o in ops if SID in o.attributes]


def _block_name(op: ir.Operation) -> str:
    return ir.StringAttr(op.attributes["name"]).value


def _handle_ops(f) -> List[ir.Operation]:
    """The blocks and loops in function `f`: the only ops handles (and so sids) are given to."""
    out = []

    def visit(o):  # (filtered in MLIR's walk: no list of every op)
        if o.name in HANDLE_OPS:
            out.append(o)
        return ir.WalkResult.ADVANCE

    f.operation.walk(visit, ir.WalkOrder.PRE_ORDER)
    return out


# What the running primitive's erasures and recreations are reported to (its schedule's
# Rewriter: `forget(ops)`, `add(sid, op)`), or None outside a primitive.
_listener = None


def reporting_to(listener):
    """Make `listener` the one the rewrites report to; returns the previous one (to restore)."""
    global _listener
    prev, _listener = _listener, listener
    return prev


def erased(ops: Sequence[ir.Operation]):
    """`ops` (an op and all ops nested in it) are about to be erased."""
    if _listener is not None:
        _listener.forget(ops)


def replaced(op: ir.Operation):
    """`op` was created to replace an op with the same sid (which was erased)."""
    if _listener is not None and SID in op.attributes:
        _listener.add(ir.IntegerAttr(op.attributes[SID]).value, op)


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
