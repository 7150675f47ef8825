"""IRModule: a set of prim_funcs held as one MLIR module in the `tir` dialect."""

from typing import Iterator, Optional

from mlir import ir

from tir_mlir.context import get_context, serialized
from tir_mlir.dialect import spelling
from tir_mlir.dialect.buffers import arg_attrs
from tir_mlir.dialect.ops import str_attr
from tir_mlir.transforms.specialize import specialize_function


class IRModule:
    """An MLIR `builtin.module` whose `func.func` ops are TensorIR prim_funcs.

    `mod.module` is the MLIR module, `mod["name"]` a function op, iteration yields names.
    """

    def __init__(self, module):
        """`module`: an MLIR module, or (as TVM's `IRModule({"main": f})`) a dict of name ->
        PrimFunc / single-function IRModule / function of a module (`mod["f"]`), each
        function renamed to its key."""
        self.module = _from_functions(module) if isinstance(module, dict) else module
        spelling.attach(self.module)

    @property
    @serialized
    def functions(self) -> dict:
        """Function name -> `func.func` operation, in program order."""
        return {
            ir.StringAttr(op.attributes["sym_name"]).value: op.operation
            for op in self.module.body.operations
            if op.operation.name == "func.func"
        }

    def __getitem__(self, name: str) -> ir.Operation:
        funcs = self.functions
        if name not in funcs:
            raise KeyError(f"no function named {name!r}; the module has {sorted(funcs)}")
        return funcs[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self.functions)

    def __len__(self):
        return len(self.functions)

    def __contains__(self, name):
        return name in self.functions

    @serialized
    def copy(self) -> "IRModule":
        """A deep copy (locations kept): schedules snapshot modules with it."""
        with get_context(), self.module.operation.location:
            copy = ir.Module.create()
            for key in list(self.module.operation.attributes):
                copy.operation.attributes[key] = self.module.operation.attributes[key]
            with ir.InsertionPoint(copy.body):
                for op in self.module.body.operations:
                    op.operation.clone()
            spelling.copy_to(self.module, copy)
            return IRModule(copy)

    @serialized
    def specialize(self, values: dict) -> "IRModule":
        """A copy with symbolic sizes and scalar parameters bound (`{"n": 128}`; keys are
        names, or objects with a `.name`): constant propagation over the IR
        (tir_mlir/transforms/specialize.py). Each function takes the values of its own
        parameters; a name no function has is a KeyError."""
        named = {getattr(k, "name", k): v for k, v in values.items()}
        copy = self.copy()
        with get_context():
            used = set()
            for op in copy.functions.values():
                params = {str_attr(d, "tir.name") for d in arg_attrs(op)}
                mine = {k: v for k, v in named.items() if k in params}
                if mine:
                    specialize_function(op, mine)
                    used |= set(mine)
            unknown = sorted(set(named) - used)
            if unknown:
                who = (
                    f"{next(iter(copy.functions))} has no"
                    if len(copy) == 1
                    else "no function has a"
                )
                raise KeyError(f"{who} symbolic var or scalar parameter {unknown[0]!r}")
        return type(self)(copy.module)

    def __reduce__(self):
        """Pickled as its MLIR text (parsed back exactly) and its spelling hints: modules
        cross process boundaries."""
        return module_from_mlir, (self.mlir(), spelling.hints(self.module))

    @serialized
    def script(self) -> str:
        """The module as TVMScript, in TVM 0.21's printing style."""
        from tir_mlir.printer import script

        return script(self)

    @serialized
    def mlir(self, debug_info: bool = False) -> str:
        """The module as MLIR text (the `tir` dialect in generic form)."""
        return str(self.module.operation.get_asm(enable_debug_info=debug_info))  # (not binary)

    def show(self, style=None, black_format=None) -> None:
        """Print the script, syntax-highlighted on a terminal (tir_mlir/show.py). `black_format`
        is accepted for TVM compatibility; the printer already lays code out like TVM."""
        from tir_mlir.show import show_text

        show_text(self.script(), style)

    def _repr_html_(self) -> str:
        from tir_mlir.show import html_text

        return html_text(self.script())

    def __str__(self):
        return self.script()

    def __repr__(self):
        return f"IRModule({', '.join(self.functions)})"


def _from_functions(funcs: dict) -> ir.Module:
    with get_context(), ir.Location.unknown():
        module = ir.Module.create()
        with ir.InsertionPoint(module.body):
            for name, f in funcs.items():
                if isinstance(f, ir.Operation) and f.name == "func.func":
                    op = f.clone()  # mod["f"]: a function of another module
                elif isinstance(f, IRModule) and len(f) == 1:
                    op = next(iter(f.functions.values())).clone()
                else:
                    raise TypeError(
                        f"IRModule({{{name!r}: ...}}) expects a PrimFunc or a "
                        f"module's function (mod[name]), got {type(f).__name__}"
                    )
                src = f if isinstance(f, ir.Operation) else next(iter(f.functions.values()))
                op.attributes["sym_name"] = ir.StringAttr.get(name)
                spelling.copy_function(src, module, name)
        return module


def module_from_mlir(text: str, hints: Optional[dict] = None) -> IRModule:
    """The module of `mod.mlir()` text (the `tir` dialect's generic form, parsed back
    exactly): how modules cross process boundaries and live in databases. `hints`: the
    printer's spelling hints the text does not hold (`dialect.spelling.hints`)."""
    with get_context():
        mod = IRModule(ir.Module.parse(text))
        if hints:
            spelling.restore(mod.module, hints)
        return mod
