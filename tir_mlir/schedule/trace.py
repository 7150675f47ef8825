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
import inspect
import json
from dataclasses import dataclass, field
from typing import Any, Dict, List, Union

from tir_mlir.schedule.handles import BlockRV, LoopRV, _RV

Outputs = Union[None, _RV, List[_RV]]


@dataclass
class Instruction:
    name: str                       # Schedule method: "split", "get_loops", ...
    args: Dict[str, Any]            # parameter name -> value (handles inside lists allowed)
    outputs: Outputs = None         # a handle, a list of handles, or None

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
                continue                  # tir_mlir-only options left at their default
            elif key in _OMITTED_WHEN_EMPTY and not val:
                continue
            elif key in _LAMBDAS and isinstance(val, str):
                kws.append(f"{key}={val}")
            else:
                kws.append(f"{_PRINTED_AS.get((self.name, key), key)}={_py(val)}")
        call = f"sch.{self.name}({', '.join(pos + kws)})"
        if isinstance(self.outputs, list):
            if not self.outputs:
                return call
            names = ", ".join(o.name for o in self.outputs)
            return f"{names}{',' if len(self.outputs) == 1 else ''} = {call}"
        if self.outputs is not None:
            return f"{self.outputs.name} = {call}"
        return call


# TVM prints these arguments only when given (cache_read/cache_write's consumer_blocks) ...
_OMITTED_WHEN_EMPTY = ("consumer_blocks",)
# ... and these, recorded as lambda text, as code (transform_layout's index_map).
_LAMBDAS = ("index_map",)
# Instructions TVM prints with positional arguments.
_POSITIONAL = ("get_child_blocks",)
# Arguments TVM's trace names unlike the Python parameter.
_PRINTED_AS = {("get_output_blocks", "scope_block"): "block"}


def _signature(name: str) -> inspect.Signature:
    from tir_mlir.schedule.schedule import Schedule
    return inspect.signature(getattr(Schedule, name))


def _py(v) -> str:
    """A value in Python syntax, strings double-quoted like TVM."""
    if isinstance(v, _RV):
        return v.name
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
    decisions: Dict[int, Any] = field(default_factory=dict)   # for sampling primitives

    def __len__(self):
        return len(self.insts)

    def copy(self) -> "Trace":
        return Trace(list(self.insts), dict(self.decisions))

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
        lines += ["  " + i.python() for i in self.insts] or ["  pass"]
        return "\n".join(lines)

    # --- replay ------------------------------------------------------------------------------
    def apply_to_schedule(self, sch, remove_postproc: bool = True) -> None:
        """Replay every instruction on `sch`; `remove_postproc` stops at `enter_postproc` (the
        postprocessors' instructions that follow it are left out, as in TVM)."""
        env: Dict[str, _RV] = {}
        for inst in self.insts:
            if remove_postproc and inst.name == "enter_postproc":
                break
            args = {k: _subst(v, env) for k, v in inst.args.items()}
            params = _signature(inst.name).parameters
            pos, kws = [], {}
            for key, val in args.items():
                if params[key].kind is inspect.Parameter.VAR_POSITIONAL:
                    pos = list(val)
                else:
                    kws[key] = val
            result = getattr(sch, inst.name)(*pos, **kws)
            new = result if isinstance(result, list) else ([] if result is None else [result])
            for old, rv in zip(inst.output_list(), new):
                env[old.name] = rv

    # --- JSON ---------------------------------------------------------------------------------
    def as_json(self) -> dict:
        """{"insts": [{"name", "args", "outputs"}], "decisions": {}}: handles are
        {"rv": "l4"}; outputs are a name, a list of names or null."""
        insts = []
        for i in self.insts:
            out = i.outputs
            out = ([o.name for o in out] if isinstance(out, list)
                   else None if out is None else out.name)
            insts.append({"name": i.name, "args": {k: _enc(v) for k, v in i.args.items()},
                          "outputs": out})
        return {"insts": insts, "decisions": {str(k): v for k, v in self.decisions.items()}}

    @staticmethod
    def from_json(obj: Union[dict, str]) -> "Trace":
        if isinstance(obj, str):
            obj = json.loads(obj)
        handles: Dict[str, _RV] = {}

        def rv(name):
            if name not in handles:
                handles[name] = (BlockRV if name.startswith("b") else LoopRV)(-1, name)
            return handles[name]
        insts = []
        for d in obj["insts"]:
            args = {k: _dec(v, rv) for k, v in d["args"].items()}
            out = d["outputs"]
            out = [rv(n) for n in out] if isinstance(out, list) else (None if out is None else rv(out))
            insts.append(Instruction(d["name"], args, out))
        return Trace(insts, {int(k): v for k, v in obj.get("decisions", {}).items()})


def _subst(v, env):
    if isinstance(v, _RV):
        if v.name not in env:
            raise KeyError(f"trace uses {v.name} before it is defined")
        return env[v.name]
    if isinstance(v, (list, tuple)):
        return [_subst(x, env) for x in v]
    if isinstance(v, dict):
        return {k: _subst(x, env) for k, x in v.items()}
    return v


def _enc(v):
    if isinstance(v, _RV):
        return {"rv": v.name}
    if isinstance(v, (list, tuple)):
        return [_enc(x) for x in v]
    if isinstance(v, dict):
        return {"dict": {k: _enc(x) for k, x in v.items()}}
    return v


def _dec(v, rv):
    if isinstance(v, dict):
        return rv(v["rv"]) if "rv" in v else {k: _dec(x, rv) for k, x in v["dict"].items()}
    if isinstance(v, list):
        return [_dec(x, rv) for x in v]
    return v
