"""Non-affine uses of symbolic vars, for printing a symbolic function as TVM 0.21 prints it
(symbolic_print.py fits each number of the probe printings; this module names the numbers that
are no affine expression of the vars).

Two sources of forms:
- the function's own text: every sub-expression over the vars alone that is not affine
  (`T.ceildiv(n, 4)`, `n // 4`, `n % 4`, `n * m`, `T.min(n, m)`), written as TVM writes the
  expression its parser builds: `T.ceildiv(a, b)` is `(a + b - 1) // b`, unsimplified, except
  in the extent of a loop written `range(...)`/`T.serial(...)`/... , which TVM's builder
  simplifies (`(n + 3) // 4`; `T.grid` extents stay as written);
- for a scheduled function, a fit `(a * n + c) // d` with `d` one of the printed constants
  (a split's `T.ceildiv(extent, factor)`, which TVM simplifies the same way). The probes may
  leave `c` undecided: then more specializations, chosen to tell the candidates apart, decide.
"""
import dataclasses
import itertools
import math
from typing import Callable, Dict, List, Optional, Tuple

from tir_mlir.frontend import ast as A
from tir_mlir.frontend.intrinsics import callee

ADD, MUL, ATOM = 1, 2, 3           # precedence of a printed expression
SIMPLIFYING_LOOPS = ("range", "serial", "parallel", "vectorized", "unroll", "thread_binding")


@dataclasses.dataclass
class Form:
    text: str
    prec: int
    value: Callable[[Dict], int]


def _const(c: int, int64: bool) -> str:
    return f"T.int64({c})" if int64 else str(c)


class _Reader:
    """Affine view, TVM's printing and the value of an expression over the vars."""

    def __init__(self, names: Dict[str, str]):
        self.names = names

    def int64(self, node) -> bool:
        return any(self.names.get(n.id) == "int64" for n in _walk(node) if isinstance(n, A.Name))

    def affine(self, node) -> Optional[Dict]:
        if isinstance(node, A.Name):
            return {node.id: 1, "": 0} if node.id in self.names else None
        if isinstance(node, A.Const):
            return {"": node.value} if type(node.value) is int else None
        if isinstance(node, A.UnaryOp) and node.op == "-":
            a = self.affine(node.operand)
            return None if a is None else {k: -v for k, v in a.items()}
        if isinstance(node, A.BinOp) and node.op in "+-*":
            a, b = self.affine(node.lhs), self.affine(node.rhs)
            if a is None or b is None:
                return None
            if node.op == "*":
                if set(a) == {""}:
                    a, b = b, a
                return {k: v * b[""] for k, v in a.items()} if set(b) == {""} else None
            sign = 1 if node.op == "+" else -1
            out = dict(a)
            for k, v in b.items():
                out[k] = out.get(k, 0) + sign * v
            return out
        return None

    def render(self, node, int64: bool) -> Optional[Tuple[str, int]]:
        """TVM's text of the expression its parser builds (no simplification)."""
        if isinstance(node, A.Name):
            return (node.id, ATOM) if node.id in self.names else None
        if isinstance(node, A.Const):
            return (_const(node.value, int64), ATOM) if type(node.value) is int else None
        if isinstance(node, A.UnaryOp) and node.op == "-":
            r = self.render(node.operand, int64)
            return None if r is None else (f"-{_wrap(r, MUL, False)}", MUL)
        if isinstance(node, A.BinOp) and node.op in ("+", "-", "*", "//", "%"):
            return self._binary(node.op, self.render(node.lhs, int64),
                                self.render(node.rhs, int64))
        if isinstance(node, A.Call) and len(node.args) == 2 and not node.kwargs:
            name = callee(node)
            a, b = (self.render(x, int64) for x in node.args)
            if a is None or b is None:
                return None
            if name in ("min", "max", "truncdiv", "truncmod"):
                return f"T.{'Div' if name == 'truncdiv' else name}({a[0]}, {b[0]})", ATOM
            if name in ("floordiv", "floormod"):
                return self._binary("//" if name == "floordiv" else "%", a, b)
            if name == "ceildiv":
                num = self._binary("-", self._binary("+", a, b), (_const(1, int64), ATOM))
                return self._binary("//", num, b)
        return None

    @staticmethod
    def _binary(op, a, b) -> Optional[Tuple[str, int]]:
        if a is None or b is None:
            return None
        prec = ADD if op in "+-" else MUL
        return f"{_wrap(a, prec, False)} {op} {_wrap(b, prec, True)}", prec

    def value(self, node, env: Dict) -> int:
        if isinstance(node, A.Name):
            return env[node.id]
        if isinstance(node, A.Const):
            return node.value
        if isinstance(node, A.UnaryOp):
            return -self.value(node.operand, env)
        if isinstance(node, A.BinOp):
            a, b = self.value(node.lhs, env), self.value(node.rhs, env)
        else:
            (a, b), node = [self.value(x, env) for x in node.args], callee(node)
        op = node.op if isinstance(node, A.BinOp) else node
        return {"+": lambda: a + b, "-": lambda: a - b, "*": lambda: a * b,
                "//": lambda: a // b, "floordiv": lambda: a // b, "%": lambda: a % b,
                "floormod": lambda: a % b, "ceildiv": lambda: -(-a // b),
                "min": lambda: min(a, b), "max": lambda: max(a, b),
                "truncdiv": lambda: abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1),
                "truncmod": lambda: a - b * int(a / b)}[op]()

    def form(self, node, simplify=False) -> Optional[Form]:
        """The printed form of a non-affine expression over the vars, else None."""
        if self.affine(node) is not None:
            return None
        int64 = self.int64(node)
        text = self._simplified(node, int64) if simplify else None
        text = text or self.render(node, int64)
        if text is None:
            return None
        return Form(text[0], text[1], lambda env, node=node: self.value(node, env))

    def _simplified(self, node, int64) -> Optional[Tuple[str, int]]:
        """TVM's simplification of a loop extent `T.ceildiv(a, c)` / `a // c` with a constant
        c and an affine a: the numerator's constants folded (`(n + 3) // 4`)."""
        if isinstance(node, A.BinOp) and node.op == "//":
            name, (a, c) = "floordiv", (node.lhs, node.rhs)
        elif isinstance(node, A.Call) and callee(node) in ("ceildiv", "floordiv") \
                and len(node.args) == 2:
            name, (a, c) = callee(node), node.args
        else:
            return None
        num, den = self.affine(a), self.affine(c)
        if num is None or den is None or set(den) != {""} or den[""] <= 0:
            return None
        d = den[""]
        if name == "ceildiv":
            num = {**num, "": num.get("", 0) + d - 1}
        return f"{_wrap(affine_text(num, int64), MUL, False)} // {_const(d, int64)}", MUL


def _wrap(r: Tuple[str, int], prec: int, right: bool) -> str:
    text, p = r
    return f"({text})" if p < prec or (right and p == prec) else text


def affine_text(fit: Dict, int64: bool = False) -> Tuple[str, int]:
    """`{"n": 16, "": 11}` -> ("n * 16 + 11", ADD), as TVM orders an affine sum: the vars'
    terms, then the constant."""
    terms = [(v, a) for v, a in fit.items() if v and a]
    const = fit.get("", 0)
    parts = []
    for v, a in terms:
        mag = v if abs(a) == 1 else f"{v} * {_const(abs(a), int64)}"
        parts.append((" - " if a < 0 else " + ") + mag)
    if const or not parts:
        parts.append((" - " if const < 0 and parts else " + ") +
                     _const(abs(const) if parts else const, int64))
    text = "".join(parts)[3:]
    if parts[0].startswith(" - "):
        text = "-" + text
    if len(parts) > 1:
        return text, ADD
    return text, (ATOM if text.isidentifier() or text.lstrip("-").isdigit() else MUL)


def _walk(node):
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        if isinstance(n, (list, tuple)):
            stack.extend(n)
        elif isinstance(n, A.Node) and dataclasses.is_dataclass(n):
            stack.extend(getattr(n, f.name) for f in dataclasses.fields(n) if f.name != "pos")


class SourceForms:
    """The non-affine forms of a function's text, and those written where the printed text
    says which: a loop's extent (by the loop's name) and a buffer's dimension (by its name)."""

    def __init__(self, func: A.FuncDef, names: Dict[str, str]):
        reader = _Reader({n: d for n, d in names.items() if d.startswith(("int", "uint"))})
        self.forms: List[Form] = []
        self.at: Dict[Tuple[str, int], List[Form]] = {}    # (loop or buffer, index) -> forms
        for node in _walk(func.body):
            form = reader.form(node) if isinstance(node, (A.BinOp, A.Call)) else None
            if form is not None and form.text not in [f.text for f in self.forms]:
                self.forms.append(form)
            if isinstance(node, A.For) and isinstance(node.iter, A.Call):
                targets = node.target.items if isinstance(node.target, A.Tuple_) \
                    else [node.target]
                kind = callee(node.iter)
                extents = node.iter.args if kind == "grid" else node.iter.args[:1]
                if kind in SIMPLIFYING_LOOPS + ("grid",) and len(node.iter.args) == len(extents):
                    self._note([t.id if isinstance(t, A.Name) else None for t in targets],
                               [reader.form(e, simplify=kind != "grid") for e in extents])
            if isinstance(node, A.Assign) and isinstance(node.target, A.Name) and \
                    isinstance(node.value, A.Call) and \
                    callee(node.value) in ("match_buffer", "alloc_buffer"):
                args = node.value.args[1:] if callee(node.value) == "match_buffer" \
                    else node.value.args
                if args and isinstance(args[0], (A.Tuple_, A.List_)):
                    dims = args[0].items
                    self._note([node.target.id] * len(dims), [reader.form(d) for d in dims],
                               range(len(dims)))

    def _note(self, names, forms, indices=None):
        for name, form, index in zip(names, forms, indices or [0] * len(names)):
            if name is not None and form is not None:
                self.at.setdefault((name, index), []).append(form)

    def matching(self, values: List[int], probes: List[Dict], where=None):
        """The form of a number with `values` at `probes`: the one written at `where`
        ((loop or buffer name, index)) when given, else the first with those values."""
        candidates = self.at.get(where, []) if where else self.forms
        for form in candidates:
            try:
                if all(form.value(p) == v for p, v in zip(probes, values)):
                    return form
            except (ZeroDivisionError, KeyError):
                continue
        return None


def fit_floordiv(values: List[int], probes: List[Dict], names: List[str],
                 divisors: List[int], number_at, int64: bool = False) -> Optional[Form]:
    """`(a * n + ... + c) // d` with the given values at the probes (int vars `names`; `d`
    the first of `divisors` that fits); `number_at(probe)` is the number at another probe,
    asked when the probes leave several `c` that differ somewhere."""
    base = probes[0]
    for d in dict.fromkeys(divisors):
        choices = []
        for k, name in enumerate(names):
            step, dv = probes[1 + k][name] - base[name], values[1 + k] - values[0]
            lo, hi = sorted(((dv - 1) * d / step, (dv + 1) * d / step))
            choices.append(range(math.ceil(lo), math.floor(hi) + 1))
        for coeffs in itertools.product(*choices):
            if not any(coeffs):
                continue
            a = dict(zip(names, coeffs))
            lin = [sum(a[n] * p[n] for n in names) for p in probes]
            lo = max(d * v - s for v, s in zip(values, lin))
            hi = min(d * v + d - 1 - s for v, s in zip(values, lin))
            if lo > hi:
                continue
            c = _decide(a, d, lo, hi, base, number_at)
            if c is not None:
                return _floordiv_form({**a, "": c}, d, int64)
    return None


def _decide(a: Dict, d: int, lo: int, hi: int, base: Dict, number_at) -> Optional[int]:
    """The c in [lo, hi] of `(a . x + c) // d`, asking more probes where the candidates
    differ. Values of a . x are multiples of g = gcd(a, d) modulo d, so c and c + 1 differ
    somewhere iff c + 1 is a multiple of g; among equal ones, TVM's `extent + d - 1` is the
    largest."""
    g = math.gcd(d, *a.values())
    cuts = [b for b in range(lo + 1, hi + 1) if b % g == 0]
    while cuts:             # binary search: is c >= cut?
        cut = cuts[len(cuts) // 2]
        # a probe where a . x + cut is a multiple of d: c >= cut iff the value rounds up there
        probe = _probe_at(a, d, cut, base)
        value = number_at(probe) if probe is not None else None
        if value is None:
            return None
        if value * d >= sum(a[n] * probe[n] for n in a) + cut:
            lo, cuts = cut, [b for b in cuts if b > cut]
        else:
            cuts = [b for b in cuts if b < cut]
    return (lo // g + 1) * g - 1        # all alike now: the largest of their class


def _probe_at(a: Dict, d: int, cut: int, base: Dict) -> Optional[Dict]:
    for name, coeff in a.items():
        if coeff % d == 0:
            continue
        rest = sum(a[n] * base[n] for n in a if n != name) + cut
        for t in range(d):
            x = base[name] + t
            if (coeff * x + rest) % d == 0:
                return {**base, name: x}
    return None


def _floordiv_form(fit: Dict, d: int, int64: bool) -> Form:
    num = affine_text(fit, int64)
    text = f"{_wrap(num, MUL, False)} // {_const(d, int64)}"
    names = [n for n in fit if n]
    return Form(text, MUL, lambda env: (sum(fit[n] * env[n] for n in names) + fit[""]) // d)


def place(form_text: str, prec: int, before: str, after: str) -> str:
    """The form's text where a number stood between `before` and `after`, parenthesized
    where the neighbouring operators would otherwise bind it differently."""
    if prec == ATOM:
        return form_text
    left_ok = before.endswith(("(", "[", ", ", " = ", "< ", "<= ", "> ", ">= ", "== ", "!= ",
                               "and ", "or ")) or (prec == MUL and before.endswith(("+ ", "- ")))
    right_ok = after.startswith((")", "]", ",", ":", " + ", " - ", " < ", " <= ", " > ",
                                 " >= ", " == ", " != ", " and", " or")) or \
        (prec == MUL and after.startswith((" * ", " // ", " % ")))
    return form_text if left_ok and right_ok else f"({form_text})"
