"""A Python file -> its TVMScript definitions and its module-level constants, never run.

Python's tokenizer (not a parser: it only splits text into tokens, handling strings, brackets and
indentation exactly as Python does) finds the top-level logical lines. A definition whose
decorators name TVMScript (`@T.prim_func`, `@I.ir_module`, `@T.macro`, ...) is kept, with its
lines at their original positions and every other line blanked, so the Lark grammar sees only
TVMScript and errors keep the file's line and column. Top-level `NAME = <literal expression>`
lines are kept apart: captures.py reads them as the constants the definitions may use.
"""

import io
import tokenize
from dataclasses import dataclass
from typing import List, Tuple

from tir_mlir.errors import SourceLoc, TIRParseError
from tir_mlir.frontend.builder import FUNC_DECORATORS, MODULE_DECORATORS

MACRO_DECORATORS = {"T.macro", "tir.macro", "tvm.script.tir.macro"}
SCRIPT_DECORATORS = FUNC_DECORATORS | MODULE_DECORATORS | MACRO_DECORATORS

_SKIP = {tokenize.NL, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT, tokenize.ENCODING}


@dataclass
class _Line:
    """One top-level logical line: its first and last physical line and its tokens."""

    start: int
    end: int
    tokens: List[tokenize.TokenInfo]


@dataclass
class PythonSource:
    """`script`: the file with only the TVMScript definitions left (same line numbers);
    `constants`: the top-level assignment statements, as (first line, text) in file order."""

    script: str
    constants: List[Tuple[int, str]]


def _top_level_lines(text: str, filename: str) -> List[_Line]:
    lines, depth, current = [], 0, []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.INDENT:
                depth += 1
            elif tok.type == tokenize.DEDENT:
                depth -= 1
            if tok.type in _SKIP or tok.type == tokenize.ENDMARKER:
                continue
            if tok.type == tokenize.NEWLINE:
                if current and current[0][1] == 0:
                    lines.append(
                        _Line(current[0][0].start[0], tok.start[0], [t for t, _ in current])
                    )
                current = []
                continue
            current.append((tok, depth))
    except tokenize.TokenError as e:
        msg, (line, col) = e.args
        raise TIRParseError(
            f"not a Python file: {msg}", SourceLoc(filename, line, col + 1)
        ) from None
    except (IndentationError, SyntaxError) as e:
        raise TIRParseError(
            f"not a Python file: {e.msg}", SourceLoc(filename, e.lineno or 1, (e.offset or 0) + 1)
        ) from None
    return lines


def _decorator_name(tokens) -> str:
    """`@T.prim_func(private=True)` -> "T.prim_func"."""
    parts = []
    for tok in tokens[1:]:
        if tok.type == tokenize.NAME or tok.string == ".":
            parts.append(tok.string)
        else:
            break
    return "".join(parts)


def _is_assignment(tokens) -> bool:
    """`N = ...`, `N, M = ...`: names and commas, then one `=`."""
    for k, tok in enumerate(tokens):
        if tok.string == "=":
            return k > 0
        if not (tok.type == tokenize.NAME or tok.string in ",()"):
            return False
    return False


def split_python(text: str, filename: str) -> PythonSource:
    """The TVMScript definitions and the module-level constant assignments of a Python file."""
    physical = text.split("\n")
    keep = [False] * (len(physical) + 1)
    constants = []
    lines = _top_level_lines(text, filename)
    k = 0
    while k < len(lines):
        line = lines[k]
        if line.tokens[0].string != "@":
            if _is_assignment(line.tokens):
                constants.append((line.start, "\n".join(physical[line.start - 1 : line.end])))
            k += 1
            continue
        first, script = k, False
        while k < len(lines) and lines[k].tokens[0].string == "@":
            script |= _decorator_name(lines[k].tokens) in SCRIPT_DECORATORS
            k += 1
        if k == len(lines):
            break
        # the definition runs up to the next top-level logical line
        end = lines[k + 1].start - 1 if k + 1 < len(lines) else len(physical)
        if script:
            for n in range(lines[first].start, end + 1):
                keep[n] = True
        k += 1
    script = "\n".join(s if keep[n] else "" for n, s in enumerate(physical, 1))
    return PythonSource(script, constants)
