"""The `Rewriter`: the one way a schedule primitive changes the module, as a transaction.

A primitive plans, then applies. Its plan resolves its handles and checks that the rewrite is
legal (a rewrite in passes/schedule/ checks everything before its first mutation); it may
refuse with `ScheduleError`, and the module is then exactly as it was. Its application mutates
the module and never refuses. The rewriter holds a primitive to that:

  * it owns the module and the index of its ops (sid -> op, block names:
    tir_mlir/analysis/op_index.py), which stays valid across every primitive because the
    rewrites report what they erase and recreate to it (no per-primitive declaration of what
    a rewrite does to the index);
  * `begin` snapshots the module; `abort` restores it, and a `ScheduleError` raised after
    the module changed is refused: the check that raised it runs after a mutation, which is
    a bug of that primitive, reported as an internal error naming it (the module is restored
    either way, so the caller sees an unchanged module).

In trusted replay (`begin(snapshot=False)`) there is no snapshot: no restore, no refusal.
"""

import re
from typing import Optional

from mlir import ir

from tir_mlir.analysis import op_index
from tir_mlir.analysis.op_index import OpIndex
from tir_mlir.errors import ScheduleError
from tir_mlir.module import IRModule

REFUSED = "raised after it changed the module"


class Rewriter:
    """The module of a schedule, its op index, and the snapshot of the running primitive."""

    def __init__(self, mod: IRModule):
        self.mod = mod
        self._index: Optional[OpIndex] = None
        self._saved: Optional[IRModule] = None
        self._prev_listener = None

    @property
    def index(self) -> OpIndex:
        """The op index, walked on first use after a restore or a copy."""
        if self._index is None:
            self._index = OpIndex(self.mod)
        return self._index

    # --- what the rewrites report (op_index.erased / op_index.replaced) --------------------
    def forget(self, ops):
        if self._index is not None:
            self._index.forget(ops)

    def add(self, sid: int, op: ir.Operation):
        if self._index is not None:
            self._index.add(sid, op)

    # --- the transaction of the outermost primitive -----------------------------------------
    def begin(self, snapshot: bool = True):
        """A primitive starts: snapshot the module (unless trusted) and listen to the rewrites."""
        self._saved = self.mod.copy() if snapshot else None
        if self._index is not None:
            self._index.step()
        self._prev_listener = op_index.reporting_to(self)

    def end(self):
        """The primitive is over (done or aborted)."""
        op_index.reporting_to(self._prev_listener)
        self._prev_listener = self._saved = None

    def abort(self, prim: str, error: Exception) -> Exception:
        """Undo the running primitive; returns the error to raise (a ScheduleError raised
        after the module changed becomes an internal error naming the primitive)."""
        saved = self._saved
        if saved is None:
            return error
        changed = isinstance(error, ScheduleError) and _text(saved) != _text(self.mod)
        self.mod, self._index = saved, None
        if changed:
            refused = ScheduleError(
                f"{prim}: internal error: a ScheduleError {REFUSED} "
                f"(a check after its first mutation): {error}"
            )
            refused.__cause__ = error
            return refused
        return error


_SID_ATTR = re.compile(r"(, )?\btir\.sid = \d+ : i64(, )?")


def _text(mod: IRModule) -> str:
    """The module as text, without the sids (handles made while planning add them)."""
    text = str(mod.module)
    return _SID_ATTR.sub(lambda m: ", " if m.group(1) and m.group(2) else "", text).replace(
        " {}", ""
    )
