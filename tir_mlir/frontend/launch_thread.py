"""TVM's lowered GPU form: `tx = T.launch_thread("threadIdx.x", 8)` (or `tx =
T.env_thread("threadIdx.x")` and later `T.launch_thread(tx, 8)`) binds a GPU thread for the
rest of the enclosing body. It parses as the loop the schedule language writes for the same
thing, `for tx in T.thread_binding(8, thread="threadIdx.x"):` around the statements that
follow, so the lowering, the printer and VerifyGPUCode see the thread-bound loops they know.
"""

from dataclasses import dataclass
from typing import TYPE_CHECKING, List, Optional

from tir_mlir.frontend import ast as A
from tir_mlir.frontend.intrinsics import callee

if TYPE_CHECKING:
    from tir_mlir.frontend.builder import FuncBuilder


@dataclass
class EnvThread:
    """A thread named by `T.env_thread`, waiting for the `T.launch_thread` that gives its
    extent."""

    name: str
    tag: str
    pos: A.Pos

    def __repr__(self) -> str:  # how an error names it (exprs.describe)
        return f"thread {self.name!r} ({self.tag}), used before its T.launch_thread"


def env_thread(fb: "FuncBuilder", name: str, call: A.Call, pos: A.Pos) -> None:
    """`name = T.env_thread("threadIdx.x")`."""
    if len(call.args) != 1 or call.kwargs:
        fb.fail('T.env_thread takes one thread tag: T.env_thread("threadIdx.x")', call.pos)
    fb.env[name] = EnvThread(name, fb.static_str(call.args[0], "thread tag"), pos)


def as_loop(fb: "FuncBuilder", s, rest: List) -> Optional[A.For]:
    """The thread-bound loop that a `T.launch_thread` statement `s` opens over the statements
    `rest` after it; None when `s` is another statement."""
    value = s.value if isinstance(s, (A.Assign, A.ExprStmt)) else None
    if not isinstance(value, A.Call) or callee(value) != "launch_thread":
        return None
    if len(value.args) != 2 or value.kwargs:
        fb.fail("T.launch_thread takes a thread and an extent", value.pos)
    thread, extent = value.args
    if isinstance(s, A.Assign):  # tx = T.launch_thread("threadIdx.x", 8)
        if not isinstance(s.target, A.Name):
            fb.fail("T.launch_thread binds a plain name", s.target.pos)
        name, tag = s.target.id, fb.static_str(thread, "thread tag")
    else:  # T.launch_thread(tx, 8) with tx = T.env_thread("threadIdx.x")
        env = fb.env.get(thread.id) if isinstance(thread, A.Name) else None
        if not isinstance(env, EnvThread):
            fb.fail(
                "T.launch_thread(thread, extent) needs a thread from T.env_thread, or write "
                'tx = T.launch_thread("threadIdx.x", extent)',
                thread.pos,
            )
        name, tag = env.name, env.tag
    binding = A.Call(
        A.Attr(A.Name("T", value.pos), "thread_binding", value.pos),
        [extent],
        [("thread", A.Const(tag, thread.pos), thread.pos)],
        value.pos,
    )
    return A.For(A.Name(name, s.pos), binding, rest, s.pos)
