"""What `sch.get(rv)` and `sch.get_sref(rv)` return: read-only views of a block or loop with
TVM's attribute names (tir.Block: name_hint, iter_vars, reads, writes, annotations; tir.For:
loop_var, min, extent, kind, thread_binding, annotations), printing as TVMScript.

A view reads the IR when asked, so it shows the op as it is now; two views of the same op are
equal (`==`, `same_as`). Rewrites replace ops: take a new view after a primitive.
"""
from enum import IntEnum
from typing import List, NamedTuple, Optional

from mlir import ir

from tir_mlir.context import get_context
from tir_mlir.dialect.ops import ITER_KINDS, Block, Loop
from tir_mlir.passes.schedule.annotate import from_attr


class ForKind(IntEnum):
    """TVM's tir.ForKind (same values); str() is the TVMScript spelling of the loop kind."""
    SERIAL = 0
    PARALLEL = 1
    VECTORIZED = 2
    UNROLLED = 3
    THREAD_BINDING = 4

    def __str__(self):
        return _KIND_NAMES[self]


_KIND_NAMES = {ForKind.SERIAL: "serial", ForKind.PARALLEL: "parallel",
               ForKind.VECTORIZED: "vectorized", ForKind.UNROLLED: "unroll",
               ForKind.THREAD_BINDING: "thread_binding"}
_KINDS = {v: k for k, v in _KIND_NAMES.items()}
# TVM's IterVar.iter_type numbers: DataPar, CommReduce, Opaque.
_ITER_TYPE_CODES = {"S": 0, "R": 2, "O": 4}


class IterVar(NamedTuple):
    """A block iter var: name, domain (min, extent) and kind ("spatial" | "reduce" | "opaque");
    `iter_type` is TVM's number for the kind."""
    var: str
    dom: tuple
    kind: str
    iter_type: int


class _View:
    def __init__(self, op: ir.Operation):
        self.op = op

    def same_as(self, other) -> bool:
        return isinstance(other, _View) and other.op == self.op

    def __eq__(self, other):
        return self.same_as(other)

    def __hash__(self):
        return hash(self.op)

    def script(self) -> str:
        from tir_mlir.printer.fragment import stmt_script
        with get_context():
            return stmt_script(self.op)

    def show(self, style=None, black_format=None) -> None:
        from tir_mlir.show import show_text
        show_text(self.script(), style)

    def _repr_html_(self) -> str:
        from tir_mlir.show import html_text
        return html_text(self.script())

    def __str__(self):
        return self.script()

    __repr__ = __str__


class BlockView(_View):
    """A block, like TVM's tir.Block."""

    @property
    def name_hint(self) -> str:
        return Block(self.op).name

    name = name_hint

    @property
    def iter_vars(self) -> List[IterVar]:
        b = Block(self.op)
        return [IterVar(n, tuple(d), ITER_KINDS[t], _ITER_TYPE_CODES[t])
                for n, d, t in zip(b.iter_names, b.domains, b.iter_types)]

    @property
    def reads(self) -> List[str]:
        """The T.reads regions as printed, e.g. ["A[vi, 0:16]"]."""
        return self._regions()[0]

    @property
    def writes(self) -> List[str]:
        return self._regions()[1]

    def _regions(self):
        from tir_mlir.printer.fragment import block_region_texts
        with get_context():
            return block_region_texts(self.op)

    @property
    def annotations(self) -> dict:
        return {k: from_attr(v) for k, v in Block(self.op).annotations.items()}

    @property
    def init(self) -> bool:
        """Whether the block has a T.init() (TVM gives the init statement)."""
        return Block(self.op).init is not None


class LoopView(_View):
    """A loop, like TVM's tir.For."""

    @property
    def loop_var(self) -> str:
        return Loop(self.op).name

    name = loop_var

    @property
    def min(self) -> int:
        return Loop(self.op).min

    @property
    def extent(self) -> int:
        return Loop(self.op).extent

    @property
    def kind(self) -> ForKind:
        return _KINDS[Loop(self.op).kind]

    @property
    def thread_binding(self) -> Optional[str]:
        """The thread tag ("threadIdx.x") of a thread-bound loop, else None."""
        return Loop(self.op).thread

    @property
    def annotations(self) -> dict:
        return {k: from_attr(v) for k, v in Loop(self.op).annotations.items()}


def view(op: ir.Operation) -> _View:
    return BlockView(op) if Block.is_block(op) else LoopView(op)


class StmtSRef:
    """TVM's StmtSRef: `stmt` (the view) and `parent` (the enclosing loop or block's sref,
    None at the function's root)."""

    def __init__(self, op: ir.Operation):
        self.op = op

    @property
    def stmt(self) -> _View:
        return view(self.op)

    @property
    def parent(self) -> Optional["StmtSRef"]:
        p = self.op.parent
        while p is not None and not (Block.is_block(p) or Loop.is_loop(p)):
            p = p.parent
        return None if p is None else StmtSRef(p.operation)

    def same_as(self, other) -> bool:
        return isinstance(other, StmtSRef) and other.op == self.op

    __eq__ = same_as

    def __hash__(self):
        return hash(self.op)

    def __repr__(self):
        s = self.stmt
        what = f'block "{s.name_hint}"' if isinstance(s, BlockView) else f"loop {s.loop_var}"
        return f"StmtSRef({what})"
