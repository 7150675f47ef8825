"""Typed errors. Library code raises them with a source location; only the CLI renders them."""

import re
from dataclasses import dataclass
from typing import Optional, Sequence, Tuple


@dataclass(frozen=True)
class SourceLoc:
    file: str
    line: int
    col: int

    def __str__(self):
        return f"{self.file}:{self.line}:{self.col}"

    @staticmethod
    def parse(text: str) -> Optional["SourceLoc"]:
        """The SourceLoc written as `file:line:col` (None for anything else, e.g. "?")."""
        m = re.fullmatch(r"(.*):(\d+):(\d+)", text)
        return SourceLoc(m[1], int(m[2]), int(m[3])) if m else None

    @staticmethod
    def of(location) -> Optional["SourceLoc"]:
        """The first `"file":line:col` in an MLIR location (fused and call-site ones too)."""
        m = re.search(r'"([^"]*)":(\d+):(\d+)', str(location))
        return SourceLoc(m[1], int(m[2]), int(m[3])) if m else None


class TIRError(Exception):
    """Base class: `loc` (optional SourceLoc), a message and `notes`: related locations, e.g.
    where the buffer an error is about was declared, as (message, SourceLoc) pairs."""

    def __init__(
        self,
        message: str,
        loc: Optional[SourceLoc] = None,
        notes: Sequence[Tuple[str, Optional[SourceLoc]]] = (),  # a note without one: dropped
    ):
        self.message = message
        self.loc = loc
        self.notes = tuple((m, n) for m, n in notes if n is not None)
        super().__init__(
            "\n".join(
                [f"{loc}: {message}" if loc else message]
                + [f"{n}: note: {m}" for m, n in self.notes]
            )
        )


class TIRParseError(TIRError):
    """Malformed TVMScript text: syntax, unknown names, wrong arity, ..."""


class TVMScriptError(TIRParseError, SyntaxError):
    """A TVMScript error in a decorated definition of a Python file (`@T.prim_func`,
    `@I.ir_module`, `@T.macro`), raised where the decorator runs. A SyntaxError too, so Python,
    IPython and IDEs show it as they show a syntax error: the file and line, the source line
    and a caret under the column, then the message."""

    def __init__(
        self,
        message: str,
        loc: Optional[SourceLoc] = None,
        notes: Sequence[Tuple[str, Optional[SourceLoc]]] = (),  # a note without one: dropped
        text: Optional[str] = None,
    ):
        super().__init__(message, loc, notes)
        self.msg = "\n".join([message] + [f"{n}: note: {m}" for m, n in self.notes])
        if loc is not None:
            self.filename, self.lineno, self.offset = loc.file, loc.line, loc.col
            self.text = text

    __str__ = BaseException.__str__  # `file:line:col: message`, as every TIRError


class ScheduleError(TIRError):
    """A schedule primitive cannot apply; the module is left unchanged. `fast`: the short
    message a schedule made with error_render_level="fast" gives (TVM's FastErrorString);
    the full one when None."""

    def __init__(self, *args, fast: Optional[str] = None, **kwargs):
        super().__init__(*args, **kwargs)
        self.fast = fast


class HandleError(ScheduleError, IndexError):
    """A block/loop handle this schedule cannot resolve (removed by remove_rv, from another
    schedule, or its statement is gone): an IndexError too, as TVM raises."""


class NoFunctionError(ScheduleError, ValueError):
    """get_block without func_name on a module of several functions none of which is being
    worked on: a ValueError too, as TVM raises."""


class BufferIndexError(ScheduleError, AssertionError):
    """A ("read" | "write", index) buffer argument out of range: an AssertionError too, as
    TVM's Python front of set_axis_separator / transform_layout / reindex asserts it."""


class TraceError(ScheduleError):
    """A trace (JSON or Trace object) that is malformed or names an unknown primitive."""


class MissingExtraError(TIRError, ImportError):
    """An optional package a feature needs is not installed; the message says which extra
    installs it (`pip install 'tir-mlir[distributed]'`). An ImportError too."""


class BuildError(TIRError):
    """A program cannot be lowered or compiled."""


class RuntimeCallError(TIRError):
    """A compiled function was called with arguments that do not match its buffers."""


class OutOfBoundsError(RuntimeCallError):
    """A debug build accessed a buffer out of bounds (`buffer`, `index`, `axis`, `loc`)."""

    def __init__(
        self,
        message: str,
        loc: Optional[SourceLoc] = None,
        *,
        buffer: str = "",
        index: int = 0,
        axis: int = 0,
        notes=(),
    ):
        super().__init__(message, loc, notes)
        self.buffer, self.index, self.axis = buffer, index, axis


class AllocationError(RuntimeCallError, MemoryError):
    """A compiled function could not allocate a buffer (`buffer`, `nbytes`, `loc`: where the
    buffer is declared); the code that uses the buffer did not run."""

    def __init__(
        self,
        message: str,
        loc: Optional[SourceLoc] = None,
        *,
        buffer: str = "",
        nbytes: int = 0,
        notes=(),
    ):
        super().__init__(message, loc, notes)
        self.buffer, self.nbytes = buffer, nbytes
