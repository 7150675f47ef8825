"""The trace of a schedule: the primitive calls that produced it, replayable and printable.

An `Instruction` is one call: the Schedule method name, its arguments by parameter name (with
defaults filled in; handles stay handles, named "b0"/"l4") and its outputs. `print(trace)`
gives TVM's format, a Python function a TVM user can run:

    # from tvm import tir
    def apply_trace(sch: tir.Schedule) -> None:
      b0 = sch.get_block(name="C", func_name="main")
      l1, l2, l3 = sch.get_loops(block=b0)
      l4, l5 = sch.split(loop=l2, factors=[None, 4], preserve_unit_iters=True, disable_predication=False)
      sch.reorder(l4, l3, l5)

Replay (`apply_to_schedule`) calls the method of that name on another Schedule, mapping
handle names to the handles it returns: a primitive needs no replay code of its own.
"""

import contextlib
import functools
import inspect
import json
import re
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Union

from tir_mlir.errors import ScheduleError, TraceError
from tir_mlir.schedule.safe_lambda import SafeLambda, canonical_text
from tir_mlir.schedule.sampled_map import SampledMap
from tir_mlir.schedule.handles import BlockRV, ExprRV, LoopRV, _RV

Outputs = Union[None, _RV, List[_RV]]
_RV_NAME = re.compile(r"[a-z]+[0-9]+")

# The instructions that carry a decision (the sampling primitives of schedule/sampling.py).
SAMPLING_INSTRUCTIONS = (
    "sample_perfect_tile",
    "sample_partitioned_tile",
    "sample_categorical",
    "sample_compute_location",
)


@dataclass
class Instruction:
    name: str  # Schedule method: "split", "get_loops", ...
    args: Dict[str, Any]  # parameter name -> value (handles inside lists allowed)
    outputs: Outputs = None  # a handle, a list of handles, or None

    def output_list(self) -> List[_RV]:
        if self.outputs is None:
            return []
        return list(self.outputs) if isinstance(self.outputs, list) else [self.outputs]

    def python(self) -> str:
        """The call in TVM's trace syntax."""
        params = _signature(self.name).parameters
        pos, kws = [], []
        for key, val in self.args.items():
            p = params.get(key)
            if p is not None and p.kind is inspect.Parameter.VAR_POSITIONAL:
                pos += [_py(v) for v in val]
            elif self.name in _POSITIONAL:
                pos.append(_py(val))
            elif p is not None and p.kind is inspect.Parameter.KEYWORD_ONLY and val is None:
                continue  # tir_mlir-only options left at their default
            elif key in _OMITTED_WHEN_EMPTY and not val:
                continue
            elif isinstance(val, SampledMap):  # its free names: the values' handles
                kws.append(f"{key}={val.printed()}")
            elif key in _LAMBDAS and isinstance(val, (str, SafeLambda)):
                kws.append(f"{key}={_lambda_code(self.name, key, val)}")
            elif key == "probs":  # TVM prints the probabilities with 17 digits
                kws.append(f"{key}=[{', '.join(_float17(p) for p in val)}]")
            elif key == "ann_val" and isinstance(val, float):  # and float annotations
                kws.append(f"{key}={_float17(val)}")
            else:
                kws.append(f"{_PRINTED_AS.get((self.name, key), key)}={_py(val)}")
        call = f"sch.{self.name}({', '.join(pos + kws)})"
        if isinstance(self.outputs, list):
            if not self.outputs:
                return call
            names = ", ".join(o.trace_name for o in self.outputs)
            return f"{names}{',' if len(self.outputs) == 1 else ''} = {call}"
        if self.outputs is not None:
            return f"{self.outputs.name} = {call}"
        return call


# TVM prints these arguments only when given (cache_read/cache_write's consumer_blocks) ...
_OMITTED_WHEN_EMPTY = ("consumer_blocks",)
# ... and these, recorded as lambda text, as code (index maps, annotate_buffer_access ranges).
_LAMBDAS = ("index_map", "gen_new_ranges", "pad_value")
# Instructions TVM prints with positional arguments.
_POSITIONAL = ("get_child_blocks",)

# Instructions without an effect on the program: Trace.simplified drops them when nothing
# uses their outputs.
_PURE = frozenset(
    (
        "get_block",
        "get_loops",
        "get_child_blocks",
        "get_producers",
        "get_consumers",
        "get_output_blocks",
        *SAMPLING_INSTRUCTIONS,
    )
)


def _handle_names(v) -> set:
    """The names of the handles in an argument value (lists and dicts searched)."""
    if isinstance(v, _RV):
        return {v.name}
    if isinstance(v, SampledMap):
        return {rv.name for rv in v.handles()}
    if isinstance(v, dict):
        v = list(v.values())
    if isinstance(v, (list, tuple)):
        return set().union(*map(_handle_names, v)) if v else set()
    return set()


# Arguments TVM's trace names unlike the Python parameter.
_PRINTED_AS = {
    ("get_output_blocks", "scope_block"): "block",
    ("cache_inplace", "block_rv"): "block",
    ("cache_index", "block_rv"): "block",
}


@functools.lru_cache(maxsize=None)
def _signature(name: str) -> inspect.Signature:
    from tir_mlir.schedule.schedule import Schedule

    return inspect.signature(getattr(Schedule, name))


def _lambda_code(name: str, key: str, val) -> str:
    """A recorded lambda as printed code: printed again from its parse, never as recorded
    (a trace is data, and its printed form is run as Python), or refused."""
    try:
        return canonical_text(val if isinstance(val, str) else val.text)
    except ScheduleError as e:
        raise TraceError(f"{name}: {key} is not a lambda a trace can hold: {e.message}") from None


def _float17(x: float) -> str:
    return "%.17g" % x  # as TVM's trace prints a float (1.0 as `1`)


@functools.lru_cache(maxsize=None)
def primitive_names() -> frozenset:
    """The instruction names a trace may hold: the Schedule's `@primitive` methods (a trace is
    data: replay must never reach any other attribute)."""
    from tir_mlir.schedule.schedule import Schedule

    return frozenset(
        n
        for n in dir(Schedule)
        if not n.startswith("_") and getattr(getattr(Schedule, n, None), "is_primitive", False)
    )


def _check_call(name, args) -> inspect.Signature:
    """The signature of primitive `name` after checking that `args` fits it."""
    if not isinstance(name, str) or name not in primitive_names():
        raise TraceError(f"unknown schedule primitive {name!r} in the trace")
    sig = _signature(name)
    params = sig.parameters
    unknown = [k for k in args if k not in params or k == "self"]
    if unknown:
        raise TraceError(f"{name}: unknown argument {unknown[0]!r} in the trace")
    return sig


def _py(v) -> str:
    """A value in Python syntax, strings double-quoted like TVM."""
    if isinstance(v, _RV):
        return v.trace_name
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, tuple):
        return "(" + ", ".join(_py(x) for x in v) + ("," if len(v) == 1 else "") + ")"
    if isinstance(v, list):
        return "[" + ", ".join(_py(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{json.dumps(k)}: {_py(x)}" for k, x in v.items()) + "}"
    return repr(v)


@dataclass
class Trace:
    insts: List[Instruction] = field(default_factory=list)

    def __len__(self):
        return len(self.insts)

    def copy(self) -> "Trace":
        return Trace(list(self.insts))

    def append(self, inst: Instruction):
        self.insts.append(inst)

    def show(self, style=None, black_format=False) -> None:
        """Print the trace, syntax-highlighted on a terminal (tir_mlir/show.py)."""
        from tir_mlir.show import show_text

        show_text(str(self), style)

    def _repr_html_(self) -> str:
        from tir_mlir.show import html_text

        return html_text(str(self))

    def __str__(self):
        lines = ["# from tvm import tir", "def apply_trace(sch: tir.Schedule) -> None:"]
        lines += ["  " + line for line in self.as_python(False)] or ["  pass"]
        return "\n".join(lines)

    def as_python(self, remove_postproc: bool = False) -> List[str]:
        """One line of Python per instruction (TVM's Trace.as_python), up to enter_postproc
        with `remove_postproc`."""
        out = []
        for inst in self.insts:
            if remove_postproc and inst.name == "enter_postproc":
                break
            out.append(inst.python())
        return out

    # --- decisions of the sampling instructions ------------------------------------------------
    # A decision is the `decision` argument of a sampling instruction (filled in when it was
    # recorded), so printing, JSON and replay carry it like any other argument.
    @property
    def decisions(self) -> Dict[int, Any]:
        """Instruction index -> decision, for every sampling instruction."""
        return {
            i: inst.args["decision"]
            for i, inst in enumerate(self.insts)
            if inst.name in SAMPLING_INSTRUCTIONS
        }

    def get_decision(self, inst: Instruction) -> Any:
        return self.insts[self._index(inst)].args["decision"]

    def with_decision(
        self, inst: Instruction, decision: Any, remove_postproc: bool = True
    ) -> "Trace":
        """A new trace with `inst`'s decision replaced (the instructions after it replay with
        the new value); `remove_postproc` drops the postprocessing part (TVM's parameter)."""
        i = self._index(inst)
        if inst.name not in SAMPLING_INSTRUCTIONS:
            raise ValueError(f"{inst.name} is not a sampling instruction: it has no decision")
        insts = list(self.insts)
        insts[i] = Instruction(inst.name, {**inst.args, "decision": decision}, inst.outputs)
        new = Trace(insts)
        return new.without_postproc() if remove_postproc else new

    def without_postproc(self) -> "Trace":
        """The instructions before `enter_postproc` (what a search mutates and replays)."""
        for i, inst in enumerate(self.insts):
            if inst.name == "enter_postproc":
                return Trace(self.insts[:i])
        return Trace(list(self.insts))

    def simplified(self, remove_postproc: bool) -> "Trace":
        """The trace without the queries and draws nothing later uses (TVM's
        Trace.simplified): a trace that only looked at the program simplifies to nothing."""
        insts = (self.without_postproc() if remove_postproc else self).insts
        used, kept = set(), []
        for inst in reversed(insts):
            outs = {rv.name for rv in inst.output_list()}
            if inst.name in _PURE and not outs & used:
                continue
            kept.append(inst)
            used |= _handle_names(inst.args)
        return Trace(kept[::-1])

    def _index(self, inst: Instruction) -> int:
        for i, x in enumerate(self.insts):
            if x is inst:
                return i
        raise ValueError(f"instruction {inst.name} is not in this trace")

    # --- replay ------------------------------------------------------------------------------
    def apply_to_schedule(self, sch, remove_postproc: bool = False, trusted: bool = False) -> None:
        """Replay every instruction on `sch` (sampling instructions with their decisions):
        by default the whole trace, so a tuned trace gives the program that was measured,
        postprocessors' steps (parallel, vectorize, decompose) included.
        `remove_postproc` stops at `enter_postproc` (what a search replays before running the
        postprocessors again). `trusted=True` is the search's fast
        mode for traces it generated itself: no per-step snapshot or verification, so on an
        error `sch` is left half-rewritten and must be dropped."""
        env: Dict[str, _RV] = {}
        with sch.trusted_mode() if trusted else contextlib.nullcontext():
            for inst in self.insts:
                if remove_postproc and inst.name == "enter_postproc":
                    break
                pos, kws = _call_args(inst, env)
                result = getattr(sch, inst.name)(*pos, **kws)
                new = result if isinstance(result, list) else ([] if result is None else [result])
                for old, rv in zip(inst.output_list(), new):
                    env[old.trace_name] = rv

    # --- JSON ---------------------------------------------------------------------------------
    def as_json(self) -> dict:
        """{"insts": [{"name", "args", "outputs"}], "decisions": {index: decision}}: handles
        are {"rv": "l4"}; outputs are a name, a list of names or null. The decisions are also
        in the sampling instructions' args; from_json lets "decisions" override them."""
        insts = []
        for i in self.insts:
            out = i.outputs
            out = (
                [o.name for o in out]
                if isinstance(out, list)
                else None
                if out is None
                else out.name
            )
            insts.append(
                {"name": i.name, "args": {k: _enc(v) for k, v in i.args.items()}, "outputs": out}
            )
        return {"insts": insts, "decisions": {str(k): v for k, v in self.decisions.items()}}

    @staticmethod
    def from_json(obj: Union[dict, str, bytes]) -> "Trace":
        """The trace of `as_json()` output, or of TVM's JSON form (its tuning logs'; see
        schedule/tvm_trace.py); TraceError (with the instruction's index) if the
        JSON is malformed or names anything but a known primitive and its parameters."""
        if isinstance(obj, (str, bytes)):
            try:
                obj = json.loads(obj)
            except (ValueError, RecursionError) as e:
                raise TraceError(f"the trace is not valid JSON: {e}") from None
        if isinstance(obj, list) and len(obj) == 2 and all(isinstance(x, list) for x in obj):
            # TVM's form: [[[kind, inputs, attrs, outputs], ...], [[index, decision], ...]]
            from tir_mlir.schedule.tvm_trace import from_tvm_json

            try:
                return from_tvm_json(obj)
            except (ValueError, TypeError, KeyError, IndexError, RecursionError) as e:
                raise TraceError(f"not a TVM JSON trace: {e}") from None
        if not isinstance(obj, dict) or not isinstance(obj.get("insts"), list):
            raise TraceError(
                'a trace is a JSON object {"insts": [...], "decisions": {...}} '
                "(as written by Trace.as_json / tir-mlir schedule --trace), or "
                "TVM's [[instructions], [decisions]]"
            )
        handles: Dict[str, _RV] = {}

        def rv(name):
            if not isinstance(name, str) or not _RV_NAME.fullmatch(name):
                raise TraceError(f"bad handle name {name!r} (expected b<N>, l<N>, ...)")
            if name not in handles:
                cls = {"b": BlockRV, "v": ExprRV}.get(name[:1], LoopRV)
                handles[name] = cls(-1, name)
            return handles[name]

        insts = []
        for k, d in enumerate(obj["insts"]):
            try:
                if not isinstance(d, dict) or not isinstance(d.get("args"), dict):
                    raise TraceError('an instruction is {"name", "args": {...}, "outputs"}')
                _check_call(d.get("name"), d["args"])
                args = {a: _dec(v, rv) for a, v in d["args"].items()}
                for a in _LAMBDAS:
                    if isinstance(args.get(a), str):
                        _lambda_code(d["name"], a, args[a])
                out = d.get("outputs")
                out = (
                    [rv(n) for n in out]
                    if isinstance(out, list)
                    else None
                    if out is None
                    else rv(out)
                )
            except TraceError as e:
                raise TraceError(f"instruction {k}: {e.message}") from None
            except RecursionError:
                raise TraceError(f"instruction {k}: nested too deeply") from None
            insts.append(Instruction(d["name"], args, out))
        decisions = obj.get("decisions", {})
        if not isinstance(decisions, dict) or not all(
            isinstance(k, str) and k.lstrip("-").isdigit() for k in decisions
        ):
            raise TraceError("decisions must map instruction indices to values")
        for k, v in decisions.items():
            if not 0 <= int(k) < len(insts) or insts[int(k)].name not in SAMPLING_INSTRUCTIONS:
                raise TraceError(f"decision given for instruction {k}, not a sampling instruction")
            insts[int(k)].args["decision"] = v
        return Trace(insts)


def _call_args(inst: Instruction, env):
    """Positional and keyword arguments for replaying `inst`, handles mapped through env."""
    name = inst.name
    starred = (
        _starred(name, tuple(inst.args)) if isinstance(name, str) else _check_call(name, inst.args)
    )
    pos, kws = [], {}
    for key, val in inst.args.items():
        val = _subst(val, env)
        if key == starred:
            if not isinstance(val, list):
                raise TraceError(f"{inst.name}: {key} must be a list")
            pos = list(val)
        else:
            kws[key] = val
    return pos, kws


@functools.lru_cache(maxsize=4096)
def _starred(name: str, keys: tuple) -> Optional[str]:
    """The `*args` parameter among `keys` (None if none), after `_check_call` accepted the
    call (a replay asks this of every instruction: the answer depends on nothing else)."""
    params = _check_call(name, dict.fromkeys(keys)).parameters
    return next((k for k in keys if params[k].kind is inspect.Parameter.VAR_POSITIONAL), None)


_PLAIN = (int, float, str, bool, type(None))  # arguments replay passes on as they are


def _subst(v, env):
    if type(v) in _PLAIN:
        return v
    if isinstance(v, _RV):
        if v.name not in env:
            raise TraceError(f"trace uses {v.name} before it is defined")
        return env[v.name]
    if isinstance(v, (list, tuple)):
        return [x if type(x) in _PLAIN else _subst(x, env) for x in v]
    if isinstance(v, dict):
        return {k: _subst(x, env) for k, x in v.items()}
    if isinstance(v, SampledMap):
        values: Dict[str, ExprRV] = {}
        for k, rv in v.values.items():
            new = _subst(rv, env)
            if not isinstance(new, ExprRV):
                raise TraceError("a sampled map's values must be sampled values")
            values[k] = new
        return v.with_values(values)
    return v


def _enc(v):
    if isinstance(v, _RV):
        return {"rv": v.name}
    if isinstance(v, SampledMap):
        return {"sampled_map": v.text, "values": {k: _enc(rv) for k, rv in v.values.items()}}
    if isinstance(v, (list, tuple)):
        return [_enc(x) for x in v]
    if isinstance(v, dict):
        return {"dict": {k: _enc(x) for k, x in v.items()}}
    return v


def _dec(v, rv):
    if isinstance(v, dict):
        if set(v) == {"rv"}:
            return rv(v["rv"])
        if set(v) == {"dict"} and isinstance(v["dict"], dict):
            return {k: _dec(x, rv) for k, x in v["dict"].items()}
        if set(v) == {"sampled_map", "values"} and isinstance(v["values"], dict):
            values = {k: _dec(x, rv) for k, x in v["values"].items()}
            if not all(isinstance(x, ExprRV) for x in values.values()):
                raise TraceError("a sampled map's values must be sampled values (v<N>)")
            try:
                return SampledMap(v["sampled_map"], values)
            except ScheduleError as e:
                raise TraceError(f"bad sampled map: {e.message}") from None
        raise TraceError(
            f'bad argument {json.dumps(v)[:80]} (expected {{"rv": name}} or {{"dict": {{...}}}})'
        )
    if isinstance(v, list):
        return [_dec(x, rv) for x in v]
    return v
