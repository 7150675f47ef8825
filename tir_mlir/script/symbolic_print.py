"""`f.script()` of a symbolic function, as TVM prints it (`n = T.int32()`, `(n, 16)`), where
the printed program is affine in the vars.

tir-mlir's TensorIR has no symbolic extents, so the function is printed specialized at the probe
values generic_kernel.py uses (a base, one per var, two checks). When the texts are equal but
for their numbers, each number is fitted as affine in the vars (a float must be a float
parameter itself) and written as that expression; the vars are declared after `T.func_attr`
and the scalar parameters put back in the signature. The text is then read back as a
SymbolicPrimFunc and must print, specialized at a fresh size, exactly as the function does
(before a buffer parameter of symbolic shape is written as a handle and its T.match_buffer:
the same function, TVM's spelling); otherwise (a `T.ceildiv(n, 4)`, a structure that changes
with the size) `script_text` returns None and the caller says the function must be specialized
first.
"""
import re
from typing import Dict, List, Optional

from tir_mlir.errors import BuildError, ScheduleError, TIRError
from tir_mlir.script.generic_kernel import FLOAT_PROBES, PROBES, _fit, _is_float, scalar_params

NUMBER = re.compile(r"(?<![\w.])(\d+\.\d+(?:e[+-]?\d+)?|\d+)(?![\w.])")
FRESH = {"int": 41, "float": 0.125}        # the read-back check's values
BUFFER_PARAM = re.compile(r'^(\w+): T\.Buffer\((\(.*\)), "(\w+)"\)$')
# An affine expression needs no parentheses between these (`(n + 2,)`, `A[n - 1 - vi]`).
OPEN = ("(", "[", ", ")
CLOSE = (")", "]", ",", " + ", " - ", " < ", " <= ", " > ", " >= ", " == ", ":")


def _expression(fit: Dict) -> str:
    """`{"n": 16, "": -1}` -> "n * 16 - 1" (parenthesized when not a single name)."""
    if "" not in fit:
        (var,) = fit
        return var
    terms = [var if a == 1 else f"{var} * {a}" for var, a in fit.items() if var and a > 0]
    terms += [f"- {var}" if a == -1 else f"- {var} * {-a}" for var, a in fit.items()
              if var and a < 0]
    text = " + ".join(t for t in terms if not t.startswith("-"))
    for t in terms:
        if t.startswith("-"):
            text = f"{text} {t}" if text else f"-{t[2:]}"
    if fit[""]:
        text += f" + {fit['']}" if fit[""] > 0 else f" - {-fit['']}"
    return text if len(fit) == 2 and fit[""] == 0 and text.isidentifier() else f"({text})"


def _split_params(line: str) -> Optional[List[str]]:
    """The parameters of a `def f(...):` line, split at top-level commas."""
    m = re.match(r"(\s*def \w+\()(.*)(\):\s*)$", line)
    if m is None:
        return None
    out, depth, start = [], 0, 0
    text = m[2]
    for k, ch in enumerate(text):
        depth += ch in "([{"
        depth -= ch in ")]}"
        if ch == "," and depth == 0:
            out.append(text[start:k].strip())
            start = k + 1
    if text.strip():
        out.append(text[start:].strip())
    return [m[1], out, m[3]]


def _declare(text: str, func, shape_vars, handles: bool) -> Optional[str]:
    """Put the scalar parameters back in the signature and declare the other vars; with
    `handles`, a buffer parameter of symbolic shape becomes a handle and its T.match_buffer,
    as TVM prints it (the shape's vars are declared in the body, after the signature)."""
    lines = text.split("\n")
    at = next((k for k, line in enumerate(lines) if line.lstrip().startswith("def ")), None)
    if at is None:
        return None
    head, params, tail = _split_params(lines[at]) or (None, None, None)
    if params is None:
        return None
    for k, name in enumerate(func.params):
        if name in func.vars:
            params.insert(k, f"{name}: T.{func.vars[name]}")
    matched = []        # a buffer parameter of symbolic shape: a handle and T.match_buffer
    for k, param in enumerate(params):
        m = BUFFER_PARAM.match(param)
        if handles and m and any(re.search(rf"\b{v}\b", m[2]) for v in shape_vars):
            params[k] = f"var_{m[1]}: T.handle"
            dtype = "" if m[3] == "float32" else f', "{m[3]}"'
            matched.append(f"{m[1]} = T.match_buffer(var_{m[1]}, {m[2]}{dtype})")
    lines[at] = head + ", ".join(params) + tail
    indent = " " * (len(lines[at + 1]) - len(lines[at + 1].lstrip()))
    body = at + 1 + (lines[at + 1].lstrip().startswith("T.func_attr"))
    if shape_vars:
        decl = ", ".join(shape_vars) + " = " + ", ".join(f"T.{func.vars[v]}()"
                                                         for v in shape_vars)
        lines[body:body] = [indent + decl] + [indent + m for m in matched]
    return "\n".join(lines)


def script_text(func) -> Optional[str]:
    """TVM's printing of symbolic `func` (a SymbolicPrimFunc or a scheduled one), or None."""
    names, dtypes = list(func.vars), dict(func.vars)
    if not names or len(names) > len(PROBES[0]):
        return None

    def probe(k, name):
        return (FLOAT_PROBES if _is_float(dtypes[name]) else PROBES)[k][names.index(name)]
    base = {n: probe(0, n) for n in names}
    probes = [base] + [{**base, n: probe(1, n)} for n in names] + \
        [{n: probe(k, n) for n in names} for k in (2, 3)]
    try:
        texts = [func.specialize(p).script() for p in probes]
    except (TIRError, ScheduleError, BuildError):
        return None
    if len({NUMBER.sub("#", t) for t in texts}) != 1:
        return None
    fits = _fit([NUMBER.findall(t) for t in texts], probes, dtypes)
    if fits is None:
        return None
    pieces = NUMBER.split(texts[0])            # text, number, text, number, ..., text
    for k, fit in enumerate(fits):
        if not (len(fit) == 1 and "" in fit):
            text = _expression(fit)
            before, after = pieces[2 * k], pieces[2 * k + 2]
            if text.startswith("(") and before.endswith(OPEN) and after.startswith(CLOSE):
                text = text[1:-1]
            pieces[2 * k + 1] = text
    text = "".join(pieces)
    # `T.int64(n)`, `T.float32(alpha)`: TVM prints the var
    text = re.sub(r"T\.(?:int64|float16|float32|float64)\((\w+)\)",
                  lambda m: m[1] if m[1] in dtypes else m[0], text)
    shape_vars = [n for n in names if n not in scalar_params(func)]
    checked = _declare(text, func, shape_vars, handles=False)
    if checked is None or not _reads_back(checked, func):
        return None
    return _declare(text, func, shape_vars, handles=True)


def _reads_back(text: str, func) -> bool:
    """`text`, read as a symbolic function and specialized at fresh values, prints as `func`
    specialized there."""
    from tir_mlir.frontend.parser import parse_ast
    from tir_mlir.script.symbolic import SymbolicPrimFunc
    fresh = {n: FRESH["float" if _is_float(d) else "int"] + k
             for k, (n, d) in enumerate(func.vars.items())}
    try:
        (f,) = [s for s in parse_ast(text, "<symbolic print>") if hasattr(s, "params")]
        again = SymbolicPrimFunc(f, "<symbolic print>")
        return set(again.vars) == set(func.vars) and \
            again.specialize(fresh).script() == func.specialize(fresh).script()
    except (TIRError, ScheduleError, BuildError, ValueError, TypeError, KeyError):
        return False
