"""Block, loop and value handles (TVM's BlockRV / LoopRV / ExprRV).

A handle holds the stable id (`tir.sid` attribute) of the op it stands for, never the MLIR
operation itself: rewrites recreate and erase ops, but they keep (or hand on) the sid, so a
handle stays valid across primitives and in `Schedule.copy()`. `name` is its trace name
("b0", "l4"), given when the instruction that produced it is recorded.
An ExprRV is the result of a sampling instruction: its sid keys the sampled integer in the
schedule (`sch.get(v)`). `sample_compute_location` returns the loop handles ROOT / INLINE
(TVM's RootRV / InlineRV) for "stay at the root" / "inline": `compute_at` understands them.
"""
from dataclasses import dataclass, field
from typing import Optional


@dataclass(eq=False)
class _RV:
    sid: int
    name: Optional[str] = field(default=None)
    PREFIX = "v"
    KIND = "value"

    def __repr__(self):
        return f"{type(self).__name__}({self.name or '#' + str(self.sid)})"

    def describe(self) -> str:
        return f"{self.KIND} {self.name}" if self.name else f"{self.KIND} #{self.sid}"


class BlockRV(_RV):
    PREFIX = "b"
    KIND = "block"


class LoopRV(_RV):
    PREFIX = "l"
    KIND = "loop"


class ExprRV(_RV):
    PREFIX = "v"
    KIND = "value"


# sids of the special locations returned by sample_compute_location (never a real op's sid;
# Trace.from_json's placeholders use -1)
ROOT_SID = -2
INLINE_SID = -3
