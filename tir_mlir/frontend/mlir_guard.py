"""MLIR text from outside (a .mlir program, an MLIR schedule script, imported linalg) parsed
without ever taking the process down.

MLIR's parser runs in this process and some text makes it abort or overflow its stack instead
of reporting an error: a generic op name that is a loaded dialect's bare name or ends at its
dot (`"tir."() : () -> ()`, "LLVM ERROR ... unregistered dialect"), or brackets nested
thousands deep (a segfault). So the text is first scanned for those (a located error), and then
parsed once in a forked child: if the child dies, the text is refused with what it printed
instead of this process dying with it. Only then is it parsed here."""

import faulthandler
import os
import re
import select
import signal
import time

from mlir import ir
from mlir.dialects import irdl as irdl_dialect

from tir_mlir.context import new_context
from tir_mlir.errors import SourceLoc, TIRParseError

MAX_DEPTH = 1000  # brackets ( [ { < open at once (a tir program nests a few dozen;
#                           MLIR's parser overflows its stack past ~2,000 nested regions)
CHILD_SECONDS = 120  # a child parse that takes longer is stopped and the text refused
_GENERIC_NAME = re.compile(r"[A-Za-z_][\w$]*\.[\w$.]*[\w$]")
_OPEN, _CLOSE = "([{<", ")]}>"


def parse_untrusted(text: str, filename: str, irdl: tuple = ()) -> ir.Module:
    """`ir.Module.parse(text)` in the current context, after `check_text` and a parse in a
    child process (whose context has tir and the `irdl` dialect texts loaded, as the current
    one must); an ir.MLIRError as MLIR reports one, a TIRParseError for text that would have
    crashed the parser."""
    check_text(text, filename)
    crash = _child_crash(text, tuple(irdl))
    if crash:
        raise TIRParseError(
            f"MLIR's parser crashes on this text ({crash}); refused", SourceLoc(filename, 1, 1)
        )
    return ir.Module.parse(text)


def check_text(text: str, filename: str) -> None:
    """A located TIRParseError for the text MLIR's parser is known to crash on."""
    depth, line, col, i, n = 0, 1, 1, 0, len(text)
    while i < n:
        c = text[i]
        if c == "\n":
            line, col, i = line + 1, 1, i + 1
            continue
        if c == "/" and text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            col, i = col + j - i, j
            continue
        if c == '"':
            j, start = _string_end(text, i), (line, col)
            body = text[i + 1 : j - 1]
            k = j
            while k < n and text[k] in " \t":
                k += 1
            if k < n and text[k] == "(" and not _GENERIC_NAME.fullmatch(body):
                raise TIRParseError(
                    f"'{body[:60]}' is not an op name (expected \"dialect.op\")",
                    SourceLoc(filename, *start),
                )
            line += body.count("\n")
            col = (col + j - i) if "\n" not in body else len(body) - body.rfind("\n") + 1
            i = j
            continue
        if c in _OPEN and not (c == "<" and text.startswith("<=", i)):
            depth += 1
            if depth > MAX_DEPTH:
                raise TIRParseError(
                    f"brackets nested more than {MAX_DEPTH} deep", SourceLoc(filename, line, col)
                )
        elif c in _CLOSE and not (
            c == ">" and (text.startswith(">=", i) or text[i - 1 : i] == "-")
        ):
            depth = max(0, depth - 1)
        col, i = col + 1, i + 1


def _string_end(text: str, i: int) -> int:
    """The index after the string literal starting at text[i] (or the end of the text)."""
    j = i + 1
    while j < len(text):
        if text[j] == "\\":
            j += 2
            continue
        if text[j] == '"':
            return j + 1
        j += 1
    return len(text)


def _child_crash(text: str, irdl: tuple) -> str:
    """How a forked child died parsing and verifying `text` ("" if it exited cleanly). The
    child builds a context of its own (tir and the `irdl` dialect texts loaded): the pool
    threads of this process's context do not exist after the fork, and its parser's verifier
    would wait on them forever."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: parse, report nothing
        try:
            os.close(r)
            os.dup2(w, 2)
            faulthandler.disable()  # the parent reports how the child died
            with new_context(), ir.Location.unknown():
                for dialect in irdl:
                    module = ir.Module.parse(dialect)
                    # (irdl.py re-exports load_dialects from a native module with no stub)
                    irdl_dialect.load_dialects(module)  # pyright: ignore[reportAttributeAccessIssue]
                ir.Module.parse(text)
        except BaseException:  # noqa: BLE001 - MLIR's errors are the parent's to report
            pass
        finally:
            os._exit(0)
    os.close(w)
    err, deadline = b"", time.monotonic() + CHILD_SECONDS
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([r], [], [], left)[0]:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                return f"no answer in {CHILD_SECONDS} s"
            chunk = os.read(r, 65536)
            if not chunk:
                break
            err = (err + chunk)[-4096:]
    finally:
        os.close(r)
    _, status = os.waitpid(pid, 0)
    if os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0:
        return ""
    lines = [x for x in err.decode(errors="replace").splitlines() if x.strip()]
    how = (
        f"signal {signal.Signals(os.WTERMSIG(status)).name}"
        if os.WIFSIGNALED(status)
        else f"exit status {os.WEXITSTATUS(status)}"
    )
    return f"{how}: {lines[0][:200]}" if lines else how
