"""Differential check of a schedule against TVM 0.21 (the oracle).

`differential(src, fn)` applies the same schedule function (TVM's API) to the same TVMScript
in TVM and in tir_mlir and compares:
  (a) outcome: TVM rejects a primitive <=> we raise ScheduleError at the same call, and our
      rejected primitive leaves the module exactly as it was;
  (b) TVM's parse of our printed result is structurally equal to TVM's scheduled function
      (equal only after TVM's Simplify counts as the printer's: TVM's T.where/bindings keep
      the substitution tree, `(i_0 + i_1) * 8 + i_2`, which Simplify itself flattens to ours);
  (c) our printed text equals TVM's (function body; header and func_attr lines dropped);
  (d) numerics: our scheduled program computes what the unscheduled one does (JIT), also
      when TVM rejected a call we accepted;
  (e) print(sch.trace) equals TVM's trace text (func_name normalised).
Only used by tests; tir_mlir itself never imports tvm.
"""

import re
from dataclasses import dataclass, field
import importlib
from typing import Callable, List, Optional


import tir_mlir
from tir_mlir import Schedule, ScheduleError
from schedule_check import check_numerics, interp, run
import tvm_oracle

# only tests marked tvm call in here: without TVM, importing this module still succeeds
tvm = importlib.import_module("tvm") if tvm_oracle.installed() else None


class _Rejected(Exception):
    """A primitive call was rejected: `step` is its index among the schedule's calls."""

    def __init__(self, step: int, name: str, error: Exception):
        super().__init__(f"call {step} ({name}) rejected: {error}")
        self.step, self.name, self.error = step, name, error


class _Calls:
    """Proxy over a schedule that numbers primitive calls and converts a rejection into
    _Rejected. `check_unchanged`: on our side, assert a rejected call left the module as it was."""

    def __init__(self, sch, errors, check_unchanged: bool):
        self._sch, self._errors, self._check = sch, errors, check_unchanged
        self.calls = 0

    def __getattr__(self, name):
        attr = getattr(self._sch, name)
        if not callable(attr):
            return attr

        def call(*args, **kwargs):
            step = self.calls
            self.calls += 1
            before = self._sch.mod.mlir() if self._check else None
            try:
                return attr(*args, **kwargs)
            except self._errors as e:
                if self._check:
                    assert self._sch.mod.mlir() == before, f"rejected {name} changed the module"
                raise _Rejected(step, name, e) from e

        return call


@dataclass
class Outcome:
    theirs_error: Optional[_Rejected] = None
    ours_error: Optional[_Rejected] = None
    tvm_text: str = ""
    our_text: str = ""
    tvm_trace: str = ""
    our_trace: str = ""
    problems: List[str] = field(default_factory=list)


def body_text(script: str) -> str:
    """The function body of a printed module, dedented: no header comments, decorators,
    def line or func_attr (TVM names a scheduled PrimFunc `main`, we keep its name)."""
    lines = [
        ln
        for ln in script.splitlines()
        if ln.strip()
        and not ln.lstrip().startswith(("# from tvm", "@", "class ", "def ", "T.func_attr("))
    ]
    indent = min(len(ln) - len(ln.lstrip()) for ln in lines) if lines else 0
    return "\n".join(ln[indent:] for ln in lines)


def trace_text(trace) -> str:
    try:
        return re.sub(r'func_name="[^"]*"', 'func_name="main"', str(trace))
    except TypeError as e:  # TVM 0.21 cannot print a trace with decompose_padding
        return f"<TVM cannot print its trace: {e}>"


def _tvm_func(mod):
    return mod[list(mod.functions.keys())[0].name_hint] if hasattr(mod, "functions") else mod


def differential(
    src: str, fn: Callable, *, text: bool = True, trace: bool = True, numerics: bool = True
) -> Outcome:
    """Run `fn` on TVM's and our schedule of `src`; return the Outcome with every difference
    in `problems` (empty = agreement). Raises nothing for a mere difference."""
    out = Outcome()
    theirs = tvm.tir.Schedule(tvm.script.from_source(src))
    try:
        fn(
            _Calls(
                theirs,
                (tvm.TVMError, ValueError, TypeError, IndexError, AssertionError, RuntimeError),
                False,
            )
        )
    except _Rejected as e:
        out.theirs_error = e
    mod = tir_mlir.parse(src)
    ours = Schedule(mod)
    try:
        fn(_Calls(ours, ScheduleError, True))
    except _Rejected as e:
        out.ours_error = e
    out.tvm_trace, out.our_trace = trace_text(theirs.trace), trace_text(ours.trace)
    te, oe = out.theirs_error, out.ours_error
    if te is not None or oe is not None:
        if te is None:
            out.problems.append(f"we reject, TVM accepts: {oe}")
        elif oe is None:
            out.problems.append(f"TVM rejects, we accept: {te}")
        elif te.step != oe.step:
            out.problems.append(f"rejected at different calls: TVM {te}; ours {oe}")
        if (
            trace
            and not out.problems
            and out.tvm_trace != out.our_trace
            and not _unprintable(out.tvm_trace)
        ):
            out.problems.append("trace differs:\n" + _diff(out.tvm_trace, out.our_trace))
        if oe is None and numerics:  # TVM refused, we did not: our numbers still count
            _check_numbers(out, mod, ours)
        return out
    ours_text = ours.mod.script()
    theirs_func = _tvm_func(theirs.mod)
    spelling = False  # equal once TVM's Simplify has normalized both expression trees
    try:
        if not _tvm_equal(ours_text, theirs_func):
            if _tvm_equal(
                _strip_regions(ours_text),
                _tvm_func(tvm.script.from_source(_strip_regions(theirs_func.script()))),
            ):
                out.problems.append(
                    "printer: equal in TVM only without T.reads/T.writes (region printing)"
                )
            elif _tvm_equal(ours_text, theirs_func, simplify=True):
                spelling = True
                out.problems.append(
                    "printer: equal in TVM after tir.transform.Simplify "
                    "(TVM keeps substitution trees like `(i_0 + i_1) * 8`)"
                )
            else:
                out.problems.append("not structurally equal in TVM")
    except Exception as e:  # noqa: BLE001  (TVM cannot read our text: a difference)
        out.problems.append(f"TVM cannot parse our text: {type(e).__name__}: {e}")
    out.tvm_text, out.our_text = body_text(theirs_func.script()), body_text(ours_text)
    if text and out.tvm_text != out.our_text:
        msg = "text differs:\n" + _diff(out.tvm_text, out.our_text)
        if spelling or _printer_norm(out.tvm_text) == _printer_norm(out.our_text):
            msg = "printer: " + msg
        out.problems.append(msg)
    if trace and out.tvm_trace != out.our_trace and not _unprintable(out.tvm_trace):
        out.problems.append("trace differs:\n" + _diff(out.tvm_trace, out.our_trace))
    if numerics:
        _check_numbers(out, mod, ours)
    return out


def _check_numbers(out: Outcome, mod, ours):
    """Our scheduled program computes what the unscheduled one does. transform_layout may
    change a parameter's layout (TVM too): the functions then take other arrays (its numerics
    are tests/schedule/test_schedule_layout.py's)."""
    if "transform_layout" in out.our_trace:
        return
    func = list(ours.mod.functions)[0]
    runner = interp if "T.thread_binding" in ours.mod.script() else run
    try:
        check_numerics(mod, ours.mod, func, runner)
    except Exception as e:  # noqa: BLE001
        out.problems.append(f"numerics: {type(e).__name__}: {str(e)[:2000]}")


def _unprintable(tvm_trace: str) -> bool:
    return tvm_trace.startswith("<TVM cannot print")


def _tvm_equal(ours_text: str, theirs_func, simplify: bool = False) -> bool:
    a = _tvm_func(tvm.script.from_source(ours_text)).without_attr("global_symbol")
    b = theirs_func.without_attr("global_symbol")
    if simplify:
        a, b = (tvm.tir.transform.Simplify()(tvm.IRModule({"main": f}))["main"] for f in (a, b))
    return tvm.ir.structural_equal(a, b)


def _strip_regions(text: str) -> str:
    """Without T.reads/T.writes: TVM then infers the regions itself."""
    return "\n".join(
        ln for ln in text.splitlines() if not ln.lstrip().startswith(("T.reads(", "T.writes("))
    )


def _printer_norm(text: str) -> str:
    """Text up to differences that are the printer's (regions, float literal spelling,
    T.int32 in annotations)."""

    def num(m):
        return f"T.{m[1]}({float(m[2])!r})"

    text = re.sub(r"T\.(float16|float32|float64)\(([-+0-9.e]+)\)", num, _strip_regions(text))
    # an int32 IntImm in an annotation: TVM prints it bare, which its parser reads otherwise
    return re.sub(r"T\.int32\((-?[0-9]+)\)", r"\1", text)


def _diff(a: str, b: str) -> str:
    import difflib

    return "\n".join(
        difflib.unified_diff(a.splitlines(), b.splitlines(), "tvm", "ours", lineterm="", n=2)
    )


def assert_agrees(src: str, fn: Callable, *, printer: bool = False, **kw) -> Outcome:
    """No difference; those that are the printer's ("printer: ...", see docs/tvm_compat.md,
    "Printing") only fail when `printer`."""
    out = differential(src, fn, **kw)
    problems = [p for p in out.problems if printer or not p.startswith("printer: ")]
    assert not problems, "\n\n".join(problems)
    return out
