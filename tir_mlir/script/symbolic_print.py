"""`f.script()` of a symbolic function, as TVM prints it (`n = T.int32()`, `(n, 16)`,
`T.grid((n + 3) // 4, 4)`).

tir-mlir's TensorIR has no symbolic extents, so the function is printed specialized at the probe
values generic_kernel.py uses (a base, one per var, two checks). When the texts are equal but
for their numbers (a check probe may differ where its value is special: its numbers are aligned
by line), each number is written as an expression of the vars: affine when it fits one (a float
must be a float parameter itself, or TVM's `T.Cast("float32", n)` of an affine form), else a
non-affine form (symbolic_forms.py): the one the source writes at that loop extent or buffer
dimension, one the source writes anywhere with those values, or a split's `(a * n + c) // d`.
The vars are declared after `T.func_attr` and the scalar parameters put back in the signature.
The text is then read back as a SymbolicPrimFunc and must print, specialized at a fresh size,
exactly as the function does (before a buffer parameter of symbolic shape is written as a handle
and its T.match_buffer: the same function, TVM's spelling); otherwise (a number no form names, a
float cast of a non-affine form, a structure that changes with the size) `script_text` returns
None and the caller says the function must be specialized first.
"""
import difflib
import math
import re
from typing import Dict, List, Optional, Tuple

from tir_mlir.errors import BuildError, ScheduleError, TIRError
from tir_mlir.script.generic_kernel import FLOAT_PROBES, PROBES, _fit, _is_float, scalar_params
from tir_mlir.script.symbolic_forms import SourceForms, fit_floordiv, place

NUMBER = re.compile(r"(?<![\w.])(\d+\.\d+(?:e[+-]?\d+)?|\d+)(?![\w.])")
FRESH = {"int": 41, "float": 0.125}        # the read-back check's values
BUFFER_PARAM = re.compile(r'^(\w+): T\.Buffer\((\(.*\)), "(\w+)"\)$')
# An affine expression needs no parentheses between these (`(n + 2,)`, `A[n - 1 - vi]`).
OPEN = ("(", "[", ", ")
CLOSE = (")", "]", ",", " + ", " - ", " < ", " <= ", " > ", " >= ", " == ", ":")
LOOP_HEADER = re.compile(r"\s*for ([\w, ]+) in (range|T\.\w+)\(([^:]*)$")
BUFFER_DECL = re.compile(r"\s*(\w+) = T\.(?:match_buffer\(\w+, |alloc_buffer\()(.*)$")
FULL_LOOP_HEADER = re.compile(r"\s*for ([\w, ]+) in (range|T\.\w+)\((.*)\):$")


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
    return [m[1], _top_level_args(m[2]) if m[2].strip() else [], m[3]]


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
    # the base and one-var probes print alike; a check probe may differ where a value is
    # special (a split factor dividing it drops the T.where): its numbers are aligned by line
    if len({NUMBER.sub("#", t) for t in texts[:1 + len(names)]}) != 1:
        return None
    columns = [_aligned(texts[0], t) for t in texts]
    pieces = NUMBER.split(texts[0])            # text, number, text, number, ..., text
    if not _name_numbers(func, pieces, columns, probes, dtypes):
        return None
    text = "".join(pieces)
    # `T.int64(n)`, `T.float32(alpha)`: TVM prints the var
    text = re.sub(r"T\.(?:int64|float16|float32|float64)\((\w+)\)",
                  lambda m: m[1] if m[1] in dtypes else m[0], text)
    shape_vars = [n for n in names if n not in scalar_params(func)]
    checked = _declare(text, func, shape_vars, handles=False)
    if checked is None or not _reads_back(checked, func):
        return None
    return _declare(text, func, shape_vars, handles=True)


def _aligned(template: str, text: str) -> List[Optional[str]]:
    """The numbers of `text` in the order of `template`'s, by matching lines that print
    alike; None for a number on a line `text` lacks."""
    a, b = template.split("\n"), text.split("\n")
    matcher = difflib.SequenceMatcher(None, [NUMBER.sub("#", x) for x in a],
                                      [NUMBER.sub("#", x) for x in b], autojunk=False)
    line_of = {}
    for i, j, size in matcher.get_matching_blocks():
        line_of.update({i + d: j + d for d in range(size)})
    out = []
    for i, line in enumerate(a):
        count = len(NUMBER.findall(line))
        out += NUMBER.findall(b[line_of[i]]) if i in line_of else [None] * count
    return out


def _name_numbers(func, pieces, columns, probes, dtypes) -> bool:
    """Write each number of the probe printing `pieces` as the expression of the vars it is
    (affine, else one of symbolic_forms.py's); False when one is none of them. `columns`:
    each probe's numbers (None where a check probe lacks one)."""
    ints = [n for n in dtypes if not _is_float(dtypes[n])]
    const = [len(set(x for x in col if x is not None)) == 1 for col in zip(*columns)]
    divisors = sorted({int(x) for x, c in zip(columns[0], const)
                       if c and x.isdigit() and int(x) > 1})
    source = SourceForms(_source_def(func), dtypes)
    template = "".join(pieces)
    seen = {}

    def number_at(probe, k):
        key = tuple(sorted(probe.items()))
        if key not in seen:
            try:
                seen[key] = _aligned(template, func.specialize(probe).script())
            except (TIRError, ScheduleError, BuildError):
                seen[key] = None
        x = seen[key][k] if seen[key] is not None else None
        return None if x is None or "." in x else int(x)
    for k, col in enumerate(zip(*columns)):
        if const[k]:
            continue
        have = [p for p, x in enumerate(col) if x is not None]
        col, at = [col[p] for p in have], [probes[p] for p in have]
        before, after = pieces[2 * k], pieces[2 * k + 2]
        ints_only = not any(c in x for x in col for c in ".e")
        values = [int(x) for x in col] if ints_only else None
        line = "".join(pieces[:2 * k + 1]).rsplit("\n", 1)[-1]     # up to the number
        where = _position_of(line, after)
        # what the source wrote at a loop extent or a buffer dimension, even where the
        # probes cannot tell it from an affine form (`T.max(n, 5)` is n at each)
        form = source.matching(values, at, where) if ints_only and where else None
        fit = _fit([[x] for x in col], at, dtypes) if form is None else None
        if fit is not None:
            text = _expression(fit[0])
            if text.startswith("(") and before.endswith(OPEN) and after.startswith(CLOSE):
                text = text[1:-1]
            pieces[2 * k + 1] = text
            continue
        if not ints_only:
            cast = _float_cast(col, at, dtypes, before, after)
            if cast is None:
                return False
            pieces[2 * k], pieces[2 * k + 1], pieces[2 * k + 2] = cast
            continue
        loop = where[0] if where and _loop_of(line, after) else None
        form = form or (None if loop else source.matching(values, at))
        int64 = all(dtypes[n] == "int64" for n in ints)
        form = form or fit_floordiv(values, at, ints, _split_factor(template, loop) + divisors,
                                    lambda p, k=k: number_at(p, k), int64)
        form = form or source.matching(values, at)
        if form is None:
            return False
        if before.endswith("T.int64(") and after.startswith(")"):    # the form says int64
            before, after = before[:-len("T.int64(")], after[1:]
            pieces[2 * k], pieces[2 * k + 2] = before, after
        pieces[2 * k + 1] = place(form.text, form.prec, before, after)
    return True


FLOAT_CALL = re.compile(r"T\.(float16|float32|float64)\($")


def _float_cast(col, at, dtypes, before, after) -> Optional[Tuple[str, str, str]]:
    """`T.float32(97.0)` that is an integer expression of the vars at every probe: TVM's
    `T.Cast("float32", n)` (the pieces before, the number, after), else None."""
    m = FLOAT_CALL.search(before)
    values = [float(x) for x in col]
    if m is None or not after.startswith(")") or any(v != int(v) for v in values):
        return None
    fit = _fit([[str(int(v))] for v in values], at, dtypes)
    if fit is None or None in fit[0].values():
        return None
    text = _expression(fit[0])
    text = text[1:-1] if text.startswith("(") else text
    return before[:m.start()], f'T.Cast("{m[1]}", {text})', after[1:]


def _source_def(func):
    """The syntax tree of the symbolic function (of a scheduled one: its function's)."""
    from tir_mlir.script.symbolic import SymbolicPrimFunc
    while not isinstance(func, SymbolicPrimFunc):
        func = func.func
    return func.func


def _loop_of(line: str, after: str) -> Optional[str]:
    """The loop whose extent a number is, when it stands in a loop header (`line`: the text
    of its line before it)."""
    m = LOOP_HEADER.match(line)
    if m is None:
        return None
    depth, position = 0, 0
    for ch in m[3]:
        depth += ch in "(["
        depth -= ch in ")]"
        position += ch == "," and depth == 0
    if depth:
        return None
    names = [n.strip() for n in m[1].split(",")]
    if m[2] == "T.grid":
        return names[position] if position < len(names) else None
    last = after.startswith(")") or m[2] == "T.thread_binding" and after.startswith(",")
    return names[0] if position == 0 and last else None


def _position_of(line: str, after: str) -> Optional[Tuple[str, int]]:
    """(loop name, 0) for a number that is a loop's extent in its header; (buffer name, k)
    for the k-th dimension in a `X = T.match_buffer(h, (...))` / `T.alloc_buffer((...))`."""
    loop = _loop_of(line, after)
    if loop is not None:
        return loop, 0
    m = BUFFER_DECL.match(line)
    if m is None:
        return None
    args = _top_level_args(m[2])
    if len(args) != 1 or not args[0].startswith("(") or not after.startswith((",", ")")):
        return None
    return m[1], len(_top_level_args(args[0][1:])) - 1


def _split_factor(text: str, loop: Optional[str]) -> List[int]:
    """[the product of the extents of loops `x_1`, `x_2`, ...] for loop `x_0` (a split's
    outer loop: its extent is the ceildiv by that product), when they are constants."""
    if loop is None or not loop.endswith("_0"):
        return []
    extents = {}
    for line in text.split("\n"):
        m = FULL_LOOP_HEADER.match(line)
        if m is not None:
            args = _top_level_args(m[3])
            names = [n.strip() for n in m[1].split(",")]
            extents.update(zip(names, args) if m[2] == "T.grid" else [(names[0], args[0])])
    inner = [extents.get(f"{loop[:-2]}_{k}") for k in range(1, len(extents) + 1)]
    inner = inner[:inner.index(None)] if None in inner else inner
    if not inner or not all(e.isdigit() for e in inner):
        return []
    return [math.prod(int(e) for e in inner)]


def _top_level_args(text: str) -> List[str]:
    """`text` split at the commas outside brackets, each piece stripped."""
    out, depth, start = [], 0, 0
    for k, ch in enumerate(text):
        depth += ch in "([{"
        depth -= ch in ")]}"
        if ch == "," and depth == 0:
            out.append(text[start:k].strip())
            start = k + 1
    return out + [text[start:].strip()]


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
