"""A trace as an MLIR script of the `tir_schedule` dialect (dialect/schedule.irdl.mlir), and back.

MLIR users call a schedule a transform script. Each trace instruction becomes one op named after
its primitive; handles (blocks, loops, sampled values) are SSA values of type
`!tir_schedule.handle` (one type: IRDL makes every operand of a variadic group the same type; what
a result stands for follows from its primitive, as in TVM), every argument is an attribute named
after the Python parameter. A handle inside an argument is the placeholder
`#tir_schedule.operand`, filled by the op's operands in order (parameters in signature order,
lists depth-first), as the upstream transform dialect mixes static and dynamic values;
`#tir_schedule.none` is Python's None. Decisions are the `decision` attribute.

    %0 = "tir_schedule.get_block"() {func_name = "main", name = "C"} : () -> !tir_schedule.handle
    %1:3 = "tir_schedule.get_loops"(%0) {block = #tir_schedule.operand} : (!tir_schedule.handle)
        -> (!tir_schedule.handle, !tir_schedule.handle, !tir_schedule.handle)
    %2:2 = "tir_schedule.split"(%1#1) {factors = [#tir_schedule.none, 4], loop = ...}

`mlir-opt --irdl-file=dialect/schedule.irdl.mlir` verifies a script; `trace_from_mlir` reads one
back (through the MLIR parser: no Python is executed) into a Trace that replays as any other.
"""

from pathlib import Path
from typing import Dict, List

from mlir import ir
from mlir.dialects import irdl

from tir_mlir.ir.mlir_error import MLIRError
from tir_mlir.context import get_context
from tir_mlir.errors import SourceLoc, TIRParseError, TraceError
from tir_mlir.frontend.mlir_guard import parse_untrusted
from tir_mlir.schedule.handles import BlockRV, ExprRV, LoopRV, _RV
from tir_mlir.schedule.trace import Instruction, Trace, _check_call, primitive_names

DIALECT = "tir_schedule"
HANDLE = f"!{DIALECT}.handle"
_loaded = set()


def irdl_text() -> str:
    """The dialect definition: the handle type, two placeholder attributes, and one op per
    schedule primitive (handles in, handles out). dialect/schedule.irdl.mlir holds this
    text for `mlir-opt --irdl-file`; regenerate it with `python -m tir_mlir.schedule.mlir_script`
    (tests/schedule/test_schedule_mlir_script.py checks it is in sync with the primitives)."""
    ops = "\n".join(
        f"""  irdl.operation @{name} {{
    %h = irdl.base @{DIALECT}::@handle
    irdl.operands(handles: variadic %h)
    irdl.results(outputs: variadic %h)
  }}"""
        for name in sorted(primitive_names())
    )
    return (
        f"// Generated from the schedule primitives (tir_mlir/schedule/mlir_script.py): a trace\n"
        f"// as an MLIR script. Handles are typed SSA values; arguments are attributes, where\n"
        f"// #{DIALECT}.operand stands for the next operand and #{DIALECT}.none for None.\n"
        f"irdl.dialect @{DIALECT} {{\n  irdl.type @handle\n  irdl.attribute @operand\n"
        f"  irdl.attribute @none\n{ops}\n}}\n"
    )


def _load_dialect():
    ctx = get_context()
    if id(ctx) not in _loaded:
        with ctx, ir.Location.unknown():
            module = ir.Module.parse(irdl_text())
            # (irdl.py re-exports load_dialects from a native module with no stub)
            irdl.load_dialects(module)  # pyright: ignore[reportAttributeAccessIssue]
        _loaded.add(id(ctx))
    return ctx


# --- trace -> MLIR ------------------------------------------------------------------------------
def trace_to_mlir(trace: Trace) -> str:
    with _load_dialect():
        names: Dict[str, str] = {}  # handle name -> SSA value
        lines = []
        for k, inst in enumerate(trace.insts):
            operands: List[str] = []
            types: List[str] = []
            attrs = {
                key: _attr(val, operands, types, names) for key, val in _ordered_args(inst).items()
            }
            outs = inst.output_list()
            res = ""
            if outs:
                res = f"%{k}" if len(outs) == 1 else f"%{k}:{len(outs)}"
                for j, rv in enumerate(outs):
                    names[rv.trace_name] = f"%{k}" if len(outs) == 1 else f"%{k}#{j}"
                res += " = "
            out_text = HANDLE if len(outs) == 1 else f"({', '.join([HANDLE] * len(outs))})"
            dict_text = f" {ir.DictAttr.get(attrs)}" if attrs else ""
            lines.append(
                f'  {res}"{DIALECT}.{inst.name}"({", ".join(operands)}){dict_text} : '
                f"({', '.join(types)}) -> {out_text}"
            )
        return "module {\n" + "\n".join(lines) + "\n}\n"


def _ordered_args(inst: Instruction) -> dict:
    """The arguments in signature order (the order operands are consumed in)."""
    params = list(_check_call(inst.name, inst.args).parameters)
    return {k: inst.args[k] for k in sorted(inst.args, key=params.index)}


def _attr(v, operands, types, names) -> ir.Attribute:
    if isinstance(v, _RV):
        if v.name not in names:
            raise TraceError(f"handle {v.name} is used before the instruction that makes it")
        operands.append(names[v.name])
        types.append(HANDLE)
        return ir.Attribute.parse(f"#{DIALECT}.operand")
    if v is None:
        return ir.Attribute.parse(f"#{DIALECT}.none")
    if isinstance(v, bool):
        return ir.BoolAttr.get(v)
    if isinstance(v, int):
        return ir.IntegerAttr.get(ir.IntegerType.get_signless(64), v)
    if isinstance(v, float):
        return ir.FloatAttr.get_f64(v)
    if isinstance(v, str):
        return ir.StringAttr.get(v)
    if isinstance(v, (list, tuple)):
        return ir.ArrayAttr.get([_attr(x, operands, types, names) for x in v])
    if isinstance(v, dict):
        return ir.DictAttr.get({str(k): _attr(x, operands, types, names) for k, x in v.items()})
    raise TraceError(f"cannot write a {type(v).__name__} argument in an MLIR schedule script")


# --- MLIR -> trace ------------------------------------------------------------------------------
def trace_from_mlir(text: str, filename: str = "<schedule>") -> Trace:
    """The trace of a `tir_schedule` script; errors name the script's line and column."""
    with _load_dialect():
        try:
            module = parse_untrusted(text, filename, (irdl_text(),))
        except TIRParseError as e:  # text that would crash MLIR's parser
            raise TraceError(e.message, e.loc) from None
        except MLIRError as e:
            d = e.error_diagnostics[0] if e.error_diagnostics else None
            raise TraceError(
                d.message if d else str(e), _at(d.location if d else None, filename)
            ) from None
        handles: Dict[ir.Value, _RV] = {}
        insts = []
        for op in module.body.operations:
            op = op.operation
            loc = _at(op.location, filename)
            if not op.name.startswith(DIALECT + "."):
                raise TraceError(f"expected a {DIALECT} op, got {op.name!r}", loc)
            name = op.name[len(DIALECT) + 1 :]
            try:
                keys = [op.attributes[i].name for i in range(len(op.attributes))]
                params = list(_check_call(name, dict.fromkeys(keys)).parameters)
                queue = [handles[v] for v in op.operands]
                args = {k: _value(op.attributes[k], queue) for k in sorted(keys, key=params.index)}
                if queue:
                    raise TraceError(
                        f"{len(queue)} operand(s) left over: each operand fills "
                        f"one #{DIALECT}.operand"
                    )
                cls, many = _output_kind(name) if len(op.results) else (None, True)
            except (TraceError, KeyError) as e:
                msg = e.message if isinstance(e, TraceError) else "an operand is not a handle"
                raise TraceError(msg, loc) from None
            outs = []
            if cls is not None:  # (None: the instruction has no results)
                for r in op.results:
                    handles[r] = cls(-1, f"{cls.PREFIX}{len(handles)}")
                    outs.append(handles[r])
            insts.append(Instruction(name, args, outs if many else outs[0]))
        return Trace(insts)


def _output_kind(name: str):
    """(BlockRV, LoopRV or ExprRV, returns a list?): what the primitive's results stand for,
    from its return annotation."""
    ret = str(_check_call(name, {}).return_annotation)
    for cls in (BlockRV, LoopRV, ExprRV):
        if cls.__name__ in ret:
            return cls, ret.startswith(("typing.List", "list", "List"))
    raise TraceError(f"{name} returns no handles")


def _value(a: ir.Attribute, queue: list):
    text = str(a)
    if text == f"#{DIALECT}.operand":
        if not queue:
            raise TraceError(f"more #{DIALECT}.operand placeholders than operands")
        return queue.pop(0)
    if text == f"#{DIALECT}.none":
        return None
    if isinstance(a, ir.BoolAttr):
        return a.value
    if isinstance(a, ir.IntegerAttr):
        return a.value
    if isinstance(a, ir.FloatAttr):
        return a.value
    if isinstance(a, ir.StringAttr):
        return a.value
    if isinstance(a, ir.ArrayAttr):
        return [_value(x, queue) for x in a]
    if isinstance(a, ir.DictAttr):
        return {x.name: _value(x.attr, queue) for x in a}
    raise TraceError(f"unsupported attribute {text[:60]}")


def _at(location, filename) -> SourceLoc:
    """The script position of an MLIR location (the parser names the buffer itself)."""
    loc = SourceLoc.of(location) if location is not None else None
    return SourceLoc(filename, loc.line, loc.col) if loc else SourceLoc(filename, 1, 1)


if __name__ == "__main__":
    import tir_mlir.dialect as dialect

    Path(dialect.__file__).with_name("schedule.irdl.mlir").write_text(irdl_text())
