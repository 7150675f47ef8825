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
from typing import Dict, Optional, Tuple, Union


@dataclass(eq=False)
class _RV:
    sid: int
    name: Optional[str] = field(default=None)
    schedule: Optional[object] = field(default=None, repr=False)
    PREFIX = "v"
    KIND = "value"

    def __repr__(self):
        return f"{type(self).__name__}({self.name or '#' + str(self.sid)})"

    def describe(self) -> str:
        return f"{self.KIND} {self.name}" if self.name else f"{self.KIND} #{self.sid}"

    @property
    def trace_name(self) -> str:
        """`name`, for a handle a trace holds (the schedule names each handle it records)."""
        assert self.name is not None, f"{self!r} has no trace name"
        return self.name


class BlockRV(_RV):
    PREFIX = "b"
    KIND = "block"


class LoopRV(_RV):
    PREFIX = "l"
    KIND = "loop"


class _ValueArithmetic:
    """`+ - * // %` with ints and other sampled values build an RVExpr (TVM's ExprRV is a
    tir.Var: `j1 * j2` is an expression of two), which a primitive taking it evaluates on the
    sampled values (`evaluate`)."""

    def _op(self, op: str, other, swap: bool = False):
        if isinstance(other, bool) or not isinstance(other, (int, ExprRV, RVExpr)):
            return NotImplemented
        return RVExpr(op, other, self) if swap else RVExpr(op, self, other)

    def __add__(self, o):
        return self._op("+", o)

    def __radd__(self, o):
        return self._op("+", o, True)

    def __sub__(self, o):
        return self._op("-", o)

    def __rsub__(self, o):
        return self._op("-", o, True)

    def __mul__(self, o):
        return self._op("*", o)

    def __rmul__(self, o):
        return self._op("*", o, True)

    def __floordiv__(self, o):
        return self._op("//", o)

    def __rfloordiv__(self, o):
        return self._op("//", o, True)

    def __mod__(self, o):
        return self._op("%", o)

    def __rmod__(self, o):
        return self._op("%", o, True)


class ExprRV(_ValueArithmetic, _RV):
    PREFIX = "v"
    KIND = "value"

    def evaluate(self, value_of) -> int:
        """The sampled value (`value_of`: the schedule's lookup of a handle)."""
        return value_of(self)


_APPLY = {
    "+": lambda a, b: a + b,
    "-": lambda a, b: a - b,
    "*": lambda a, b: a * b,
    "//": lambda a, b: a // b,
    "%": lambda a, b: a % b,
}


class RVExpr(_ValueArithmetic):
    """An integer expression of sampled values and ints (`j1 * j2`)."""

    __slots__ = ("op", "lhs", "rhs")

    def __init__(self, op: str, lhs, rhs):
        self.op, self.lhs, self.rhs = op, lhs, rhs

    def evaluate(self, value_of) -> int:
        a, b = (x if isinstance(x, int) else x.evaluate(value_of) for x in (self.lhs, self.rhs))
        return _APPLY[self.op](a, b)

    def __repr__(self):
        return f"({self.lhs!r} {self.op} {self.rhs!r})"


BlockOrLoop = Union[BlockRV, LoopRV]

# sids of the special locations returned by sample_compute_location (never a real op's sid;
# Trace.from_json's placeholders use -1)
ROOT_SID = -2
INLINE_SID = -3


class HandleTable:
    """The handles a schedule gave out: the sid the next new handle's op gets, which sids a
    primitive consumed (sid -> (primitive, trace step)), which handles remove_rv forgot, the
    trace names given so far, and the values sampled for ExprRVs. A handle names its schedule
    by `identity`; a copied schedule knows the handles made before the copy (`inherited`:
    identity of the schedule copied from -> its next sid then), as TVM copies the RV table."""

    def __init__(self, next_sid: int):
        self.identity = object()
        self.inherited: Dict[object, int] = {}
        self.next_sid = next_sid
        self.next_name = 0
        self.consumed: Dict[int, Tuple[str, int]] = {}
        self.removed: Dict[int, _RV] = {}
        self.values: Dict[int, int] = {}

    def new_sid(self) -> int:
        sid, self.next_sid = self.next_sid, self.next_sid + 1
        return sid

    def name(self, rv: _RV):
        """Give `rv` its trace name (b0, l1, v2, ...) if it has none."""
        if rv.name is None:
            rv.name = f"{rv.PREFIX}{self.next_name}"
            self.next_name += 1

    def save(self) -> tuple:
        """What a failed primitive restores (`restore`)."""
        return dict(self.consumed), self.next_sid, self.next_name

    def restore(self, saved: tuple):
        self.consumed, self.next_sid, self.next_name = saved

    def copy(self) -> "HandleTable":
        new = HandleTable(self.next_sid)
        new.inherited = dict(self.inherited)
        new.inherited[self.identity] = self.next_sid
        new.next_name = self.next_name
        new.consumed, new.removed = dict(self.consumed), dict(self.removed)
        new.values = dict(self.values)
        return new

    def foreign(self, rv: _RV) -> bool:
        """Whether `rv` belongs to another schedule (made there, or after this one copied it)."""
        return (
            rv.schedule is not None
            and rv.schedule is not self.identity
            and rv.sid >= self.inherited.get(rv.schedule, -1)
        )
