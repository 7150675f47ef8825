"""What `sch.get(rv)` and `sch.get_sref(rv)` return: read-only views of a block or loop with
TVM's attribute names (tir.Block: name_hint, iter_vars, reads, writes, annotations, init;
tir.For: loop_var, min, extent, kind, thread_binding, annotations), printing as TVMScript.

The values answer what TVM code asks of them: `extent` is an int with `.value` and `.dtype`
(TVM's IntImm), `loop_var` / `IterVar.var` a name with `.name` (TVM's Var), a region a text
(`"A[vi, 0:16]"`) with `.buffer.name`, `thread_binding` the thread tag (or None) with
`.thread_tag`, `init` None when the block has no T.init().
A view reads the IR when asked, so it shows the op as it is now; two views of the same op are
equal (`==`, `same_as`). Rewrites replace ops: take a new view after a primitive.
"""

from enum import IntEnum
from typing import List, NamedTuple, Optional, Union

from mlir import ir

from tir_mlir.analysis.symbolic import Int, SymExpr
from tir_mlir.context import get_context
from tir_mlir.dialect.ops import ITER_KINDS, Block, Loop, root_annotations
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


_KIND_NAMES = {
    ForKind.SERIAL: "serial",
    ForKind.PARALLEL: "parallel",
    ForKind.VECTORIZED: "vectorized",
    ForKind.UNROLLED: "unroll",
    ForKind.THREAD_BINDING: "thread_binding",
}
_KINDS = {v: k for k, v in _KIND_NAMES.items()}
# TVM's IterVar.iter_type numbers: DataPar, CommReduce, Opaque.
_ITER_TYPE_CODES = {"S": 0, "R": 2, "O": 4}


class IntImm(int):
    """An integer with TVM IntImm's `.value` and `.dtype`."""

    dtype: str

    def __new__(cls, value: int, dtype: str = "int32"):
        new = super().__new__(cls, value)
        new.dtype = dtype
        return new

    @property
    def value(self) -> int:
        return int(self)


def _int_imm(value: Int, dtype: str) -> Union[IntImm, SymExpr]:
    return IntImm(value, dtype) if isinstance(value, int) else value


class Var(str):
    """A variable's name with TVM Var's `.name` (and `.dtype`)."""

    dtype: str

    def __new__(cls, name: str, dtype: str = "int32"):
        new = super().__new__(cls, name)
        new.dtype = dtype
        return new

    @property
    def name(self) -> str:
        return str(self)


class Range(NamedTuple):
    """TVM's Range: `min` and `extent` (also a (min, extent) tuple); a symbolic bound is its
    SymExpr."""

    min: Union[IntImm, SymExpr]
    extent: Union[IntImm, SymExpr]


class IterVar(NamedTuple):
    """A block iter var: name, domain (min, extent) and kind ("spatial" | "reduce" | "opaque");
    `iter_type` is TVM's number for the kind."""

    var: Var
    dom: Range
    kind: str
    iter_type: int


class ThreadTag(str):
    """A loop's thread tag ("threadIdx.x"), with TVM's `.thread_tag`."""

    @property
    def thread_tag(self) -> str:
        return str(self)


class _Buffer(NamedTuple):
    name: str


class BufferRegion(str):
    """A T.reads / T.writes region as printed (`"A[vi, 0:16]"`), with `.buffer.name`."""

    @property
    def buffer(self) -> _Buffer:
        return _Buffer(self.split("[", 1)[0])


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
        return [
            IterVar(
                Var(n, dt),
                Range(_int_imm(d[0], dt), _int_imm(d[1], dt)),
                ITER_KINDS[t],
                _ITER_TYPE_CODES[t],
            )
            for n, d, t, dt in zip(b.iter_names, b.domains, b.iter_types, b.index_dtypes)
        ]

    @property
    def reads(self) -> List[BufferRegion]:
        """The T.reads regions as printed, e.g. ["A[vi, 0:16]"]."""
        return self._regions()[0]

    @property
    def writes(self) -> List[BufferRegion]:
        return self._regions()[1]

    def _regions(self):
        from tir_mlir.printer.fragment import block_region_texts

        with get_context():
            return tuple([BufferRegion(r) for r in rs] for rs in block_region_texts(self.op))

    @property
    def annotations(self) -> dict:
        return {k: from_attr(v) for k, v in Block(self.op).annotations.items()}

    @property
    def init(self) -> Optional[bool]:
        """True when the block has a T.init() (TVM gives the init statement), else None."""
        return True if Block(self.op).init is not None else None


class RootBlockView(BlockView):
    """TVM's implicit root block (the function body here): no iter vars, no regions."""

    @property
    def name_hint(self) -> str:
        return "root"

    name = name_hint

    @property
    def iter_vars(self) -> List[IterVar]:
        return []

    def _regions(self):
        return [], []

    @property
    def annotations(self) -> dict:
        return {k: from_attr(v) for k, v in root_annotations(self.op).items()}

    @property
    def init(self) -> None:
        return None


class LoopView(_View):
    """A loop, like TVM's tir.For."""

    @property
    def loop_var(self) -> Var:
        lp = Loop(self.op)
        return Var(lp.name, lp.index_dtype)

    @property
    def name(self) -> str:
        return Loop(self.op).name

    @property
    def min(self) -> Union[IntImm, SymExpr]:
        """An IntImm, or the SymExpr of a symbolic bound (`n`)."""
        lp = Loop(self.op)
        return _int_imm(lp.min, lp.index_dtype)

    @property
    def extent(self) -> Union[IntImm, SymExpr]:
        """An IntImm, or the SymExpr of a symbolic extent (`(n + 3) // 4`)."""
        lp = Loop(self.op)
        return _int_imm(lp.extent, lp.index_dtype)

    @property
    def kind(self) -> ForKind:
        return _KINDS[Loop(self.op).kind]

    @property
    def thread_binding(self) -> Optional[ThreadTag]:
        """The thread tag ("threadIdx.x") of a thread-bound loop, else None."""
        tag = Loop(self.op).thread
        return None if tag is None else ThreadTag(tag)

    @property
    def annotations(self) -> dict:
        return {k: from_attr(v) for k, v in Loop(self.op).annotations.items()}


def view(op: ir.Operation) -> Union[BlockView, LoopView]:
    if op.name == "func.func":
        return RootBlockView(op)
    return BlockView(op) if Block.is_block(op) else LoopView(op)


class StmtSRef:
    """TVM's StmtSRef: `stmt` (the view) and `parent` (the enclosing loop or block's sref,
    None at the function's root)."""

    def __init__(self, op: ir.Operation):
        self.op = op

    @property
    def stmt(self) -> Union[BlockView, LoopView]:
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
