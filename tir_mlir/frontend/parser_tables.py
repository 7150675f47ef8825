"""The parser's LALR tables in the user cache folder, as JSON: a format whose loading runs no
code (Lark's own `save` is a pickle, and a planted pickle runs code in every process that parses).

Lark's serialized parser is plain data (dicts, lists, tuples, strings, numbers; its objects are
named by `__type__` among a fixed set of Lark classes), except that JSON has no tuples and no
integer keys: such values are tagged, `{"\\0t": [...]}` for a tuple and `{"\\0": [[k, v], ...]}`
for a dict with keys other than strings (no Lark name contains a NUL)."""

import json
import os
from pathlib import Path

from lark import Lark
from lark.grammar import Rule
from lark.lexer import TerminalDef


def save(parser: Lark, path: Path, exclude_options=()) -> None:
    """Write `parser`'s tables to `path` (through a private file renamed into place)."""
    data, memo = parser.memo_serialize([TerminalDef, Rule])
    data["options"] = {n: v for n, v in data["options"].items() if n not in exclude_options}
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_text(json.dumps(_enc({"data": data, "memo": memo})))
        os.replace(tmp, path)
    except (OSError, TypeError, ValueError):
        tmp.unlink(missing_ok=True)


def load(path: Path, **live) -> Lark:
    """The parser saved at `path`, given its live objects (postlex, transformer); any
    exception when the file is missing, damaged or not what `save` writes."""
    return Lark.__new__(Lark)._load(_dec(json.loads(path.read_text())), **live)


def _enc(o):
    if isinstance(o, dict):
        if all(type(k) is str for k in o):
            return {k: _enc(v) for k, v in o.items()}
        return {"\0": [[_enc(k), _enc(v)] for k, v in o.items()]}
    if isinstance(o, tuple):
        return {"\0t": [_enc(x) for x in o]}
    if isinstance(o, list):
        return [_enc(x) for x in o]
    return o


def _dec(o):
    if isinstance(o, dict):
        if len(o) == 1 and "\0" in o:
            return {_dec(k): _dec(v) for k, v in o["\0"]}
        if len(o) == 1 and "\0t" in o:
            return tuple(_dec(x) for x in o["\0t"])
        return {k: _dec(v) for k, v in o.items()}
    if isinstance(o, list):
        return [_dec(x) for x in o]
    return o
