"""TVMScript text -> IRModule: `parse(text, filename)` and `load(path)`.

Lark (LALR, with an indenter) parses the text into the syntax tree of ast.py while it reads it;
builder.py turns that into the `tir` dialect; MLIR's verifier checks the result. Every failure
is one TIRParseError at FILE:LINE:COL. The text is never executed.
"""

import functools
import hashlib
import re
import sys
import unicodedata
from importlib import resources
from typing import Any, List, Optional, cast

import lark
from lark import Lark, Token, UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken
from lark.exceptions import LarkError
from lark.indenter import PythonIndenter
from mlir import ir

from tir_mlir.ir.mlir_error import MLIRError
from tir_mlir.ir import wellformed
from tir_mlir.context import get_context, serialized
from tir_mlir.errors import SourceLoc, TIRError, TIRParseError
from tir_mlir.frontend.ast import LiteralError, ToAst
from tir_mlir.frontend import parser_tables
from tir_mlir.frontend.builder import ModuleBuilder
from tir_mlir.module import IRModule
from tir_mlir.ir.user_cache import cache_dir

# Readable names for terminals in "expected one of ..." messages.
_TOKEN_NAMES = {
    "_NEWLINE": "end of line",
    "_INDENT": "an indented block",
    "_DEDENT": "end of the indented block",
    "NAME": "a name",
    "NUMBER": "a number",
    "STRING": "a string",
    "CONST": "True/False/None",
    "$END": "end of file",
    "AUGOP": "an augmented assignment (+= ...)",
}


class _IndentError(LarkError):
    def __init__(self, message, token):
        super().__init__(message)
        self.token = token


def _width(indent: str, tab_len: int) -> int:
    """Column of the first non-blank character, a tab advancing to the next multiple of
    tab_len, a form feed starting again at 0 (as Python's tokenizer counts)."""
    col = 0
    for ch in indent:
        col = (col // tab_len + 1) * tab_len if ch == "\t" else 0 if ch == "\f" else col + 1
    return col


class _Indenter(PythonIndenter):
    """PythonIndenter that reports bad dedents and stray closing brackets with a position."""

    def process(self, stream):
        self.tab1_level = [0]  # the indents again, a tab counting 1 (Python's TabError)
        return super().process(stream)

    def handle_NL(self, token):
        if self.paren_level > 0:
            return
        yield token
        indent_str = token.rsplit("\n", 1)[1]
        indent = _width(indent_str, self.tab_len)
        tab1 = _width(indent_str, 1)
        if indent > self.indent_level[-1]:
            self._same_order(tab1 > self.tab1_level[-1], token, indent)
            self.indent_level.append(indent)
            self.tab1_level.append(tab1)
            yield Token.new_borrow_pos(self.INDENT_type, indent_str, token)
        else:
            while indent < self.indent_level[-1]:
                self.indent_level.pop()
                self.tab1_level.pop()
                yield Token.new_borrow_pos(self.DEDENT_type, indent_str, token)
            self._same_order(
                indent != self.indent_level[-1] or tab1 == self.tab1_level[-1], token, indent
            )
            if indent != self.indent_level[-1]:
                line = token.end_line or token.line
                raise _IndentError(
                    f"bad indentation: dedent to column {indent + 1} does not match "
                    f"any enclosing block (expected column "
                    f"{self.indent_level[-1] + 1})",
                    Token("_DEDENT", "", line=line, column=indent + 1),
                )

    def _same_order(self, consistent, token, indent):
        """Python rejects indentation whose meaning depends on the width of a tab."""
        if not consistent:
            line = token.end_line or token.line
            raise _IndentError(
                "inconsistent use of tabs and spaces in indentation",
                Token("_INDENT", "", line=line, column=1),
            )

    def _process(self, stream):
        token = None
        for token in stream:
            if token.type == self.NL_type:
                yield from self.handle_NL(token)
            elif token.type == "NAME" and not token.isascii():
                # Python reads identifiers NFKC-normalised: `ｖi` is `vi`
                yield token.update(value=unicodedata.normalize("NFKC", token))
            else:
                yield token
            if token.type in self.OPEN_PAREN_types:
                self.paren_level += 1
            elif token.type in self.CLOSE_PAREN_types:
                self.paren_level -= 1
                if self.paren_level < 0:
                    raise _IndentError(f"unmatched {token!s}", token)
        while len(self.indent_level) > 1:
            self.indent_level.pop()
            yield (
                Token.new_borrow_pos(self.DEDENT_type, "", token)
                if token
                else Token(self.DEDENT_type, "", 0, 1, 1, 1, 1, 0)
            )


@functools.lru_cache(maxsize=None)
def _grammar_text() -> str:
    return resources.files("tir_mlir.grammar").joinpath("tvmscript.lark").read_text()


@functools.lru_cache(maxsize=1)
def _lark() -> Lark:
    """One parser, built once: the indenter resets its state at the start of every parse.
    Building its LALR tables takes most of a cold start's parse, so the built parser is saved in
    the user cache folder, in a file named by a hash of the grammar, the options and the Lark
    and Python versions, as JSON (parser_tables.py: loading it runs no code)."""
    text = _grammar_text()
    options = dict(parser="lalr", lexer="basic", maybe_placeholders=True)
    live = dict(postlex=_Indenter(), transformer=ToAst())  # objects: not saved, given on load
    folder = cache_dir()
    if folder is None:
        return Lark(text, **options, **live)
    tag = hashlib.sha256(f"{text}\0{options}\0{lark.__version__}\0{sys.version}".encode())
    path = folder / f"grammar-{tag.hexdigest()[:20]}.json"
    try:
        return parser_tables.load(path, **live)
    except Exception:  # noqa: BLE001 - missing, or unreadable in any way: build it again
        pass
    parser = Lark(text, **options, **live)
    parser_tables.save(parser, path, exclude_options=list(live))
    return parser


def _describe_terminal(lark, name):
    if name in _TOKEN_NAMES:
        return _TOKEN_NAMES[name]
    try:
        pattern = lark.get_terminal(name).pattern
    except KeyError:
        return name
    if pattern.type == "str":
        return repr(pattern.value)
    return name.lower()


def _found(e):
    tok = getattr(e, "token", None)
    if tok is None:
        return repr(e.char) if hasattr(e, "char") else "end of file"
    if tok.type == "$END" or (tok.type == "_DEDENT" and tok.value == ""):
        return "end of file"
    if tok.type in _TOKEN_NAMES and tok.type not in ("NAME", "NUMBER", "STRING"):
        return _TOKEN_NAMES[tok.type]
    return repr(str(tok))


def _syntax_error(lark, e: UnexpectedInput, text: str, filename: str) -> TIRParseError:
    expected = sorted(getattr(e, "expected", None) or getattr(e, "allowed", None) or [])
    names = sorted({_describe_terminal(lark, t) for t in expected})
    line, col = getattr(e, "line", 0) or 0, getattr(e, "column", 0) or 0
    if isinstance(e, UnexpectedEOF) or (isinstance(e, UnexpectedToken) and e.token.type == "$END"):
        lines = text.split("\n")
        line = max(1, len(lines) - 1 if lines[-1] == "" else len(lines))
        col = len(lines[line - 1]) + 1 if lines else 1
        found = "end of file"
    else:
        found = _found(e)
    if isinstance(e, UnexpectedCharacters):
        msg = f"unexpected character {e.char!r}"
    else:
        msg = f"unexpected {found}"
    python_only = _python_only(e, text)
    if python_only:
        msg = f"{python_only} is Python, not TVMScript (the program text is never run)"
    elif len(names) == 1:
        msg += f"; expected {names[0]}"
    elif names:
        shown = names if len(names) <= 12 else names[:12] + ["..."]
        msg += f"; expected one of {', '.join(shown)}"
    return TIRParseError(msg, SourceLoc(filename, max(line, 1), max(col, 1)))


def _python_only(e, text: str):
    """What Python syntax, that TVMScript has no use for, the unexpected token starts: TVM's
    parser evaluates it, this one does not."""
    token = getattr(e, "token", None)
    if not isinstance(e, UnexpectedToken) or token is None or token.start_pos is None:
        return None
    before = text[: token.start_pos]
    if token.type == "STRING" and re.search(
        r"(?<![\w.])[fFbB][rR]?$|(?<![\w.])[rR][fFbB]$", before
    ):
        return "an f-string or bytes literal"
    if token.value in ("*", "**") and re.search(r"[(,]\s*$", before):
        return "argument unpacking (*x, **x)"
    if token.value == "@" and re.search(r"^[ \t]*@[^\n]*$", before, re.M):
        return "a decorator that is an expression"
    return None


NEWLINES = re.compile(r"\r\n?")


@serialized
def parse_ast(text: str, filename: str = "<string>") -> List[Any]:
    """The syntax tree (a list of statements) of TVMScript `text`."""
    lark = _lark()
    source = NEWLINES.sub("\n", text)  # "\r\n" and "\r" end lines too, as in Python
    if "\0" in source:  # as in Python, even in a comment
        before = source[: source.index("\0")]
        raise TIRParseError(
            "source code cannot contain null bytes",
            SourceLoc(filename, before.count("\n") + 1, len(before) - (before.rfind("\n") + 1) + 1),
        )
    source = source if source.endswith("\n") else source + "\n"
    try:
        # the ToAst transformer runs inside the parse: the result is its statement list
        return cast(List[Any], lark.parse(source))
    except LiteralError as e:
        raise TIRParseError(str(e), SourceLoc(filename, *e.pos)) from None
    except _IndentError as e:
        tok = e.token
        raise TIRParseError(str(e), SourceLoc(filename, tok.line or 1, tok.column or 1)) from None
    except UnexpectedInput as e:
        if isinstance(e, UnexpectedToken) and e.token.type == "_INDENT":
            tok = e.token
            raise TIRParseError(
                "unexpected indent",
                SourceLoc(filename, tok.end_line or tok.line, tok.end_column or tok.column),
            ) from None
        raise _syntax_error(lark, e, source, filename) from None


@serialized
def parse(text: str, filename: Optional[str] = None):
    """Parse TVMScript into an IRModule (one `func.func` per prim_func); symbolic shapes and
    scalar parameters (`n = T.int32()`, `alpha: T.float32`) are arguments of the functions
    (docs/symbolic.md)."""
    filename = filename or "<string>"
    stmts = parse_ast(text, filename)
    return build(stmts, filename)


def build(stmts, filename: str) -> IRModule:
    """The IRModule of parsed (and, from Python files, resolved) TVMScript statements."""
    with get_context(), ir.Location.unknown():
        try:
            module = ModuleBuilder(filename).build(stmts)
        except TIRError:
            raise
        except RecursionError:
            raise TIRParseError("program nested too deeply", SourceLoc(filename, 1, 1)) from None
        try:
            module.operation.verify()
        except MLIRError as e:
            raise _verifier_error(e, filename) from None
        wellformed.check(module, filename)
    return IRModule(module)


def _verifier_error(e, filename):
    diags = getattr(e, "error_diagnostics", None) or []
    loc = None
    msg = str(e)
    if diags:
        msg = diags[0].message
        loc = SourceLoc.of(diags[0].location)
    return TIRParseError(
        f"invalid program (MLIR verifier): {msg}", loc or SourceLoc(filename, 1, 1)
    )


def load(path) -> IRModule:
    """Parse a .tir file, the TVMScript definitions of a .py file (never run), or the
    tir-dialect MLIR of a .mlir file."""
    path = str(path)
    if path.endswith(".mlir"):
        from tir_mlir.frontend.mlir_input import parse_mlir

        with open(path, encoding="utf-8") as f:
            return parse_mlir(f.read(), path)
    if path.endswith(".py"):
        from tir_mlir.script.pyfile import load_python

        return load_python(path)
    from tir_mlir.frontend.source import decode

    with open(path, "rb") as f:
        return parse(decode(f.read(), path), filename=path)
