"""An `@I.ir_module` class with symbolic functions (`n = T.int32()`, scalar parameters).

    @I.ir_module
    class Module:
        @T.prim_func
        def main(a: T.handle, ...): n = T.int32(); A = T.match_buffer(a, (n, 16)) ...
        @T.prim_func
        def fixed(A: T.Buffer((8,), "float32")): ...

`Module` is a SymbolicIRModule: `Module["main"]` is a SymbolicPrimFunc, `Module["fixed"]` the
function op of an ordinary module; `Module.specialize({"n": 4})` binds the vars of every
function that has them (an IRModule once none is left); `tir_mlir.build(Module)` runs each
function as its kind runs (symbolic ones specialized per call: symbolic.py);
`tir_mlir.Schedule(Module)` schedules a module of one symbolic function like that function.
"""
from typing import Dict, List

from tir_mlir.frontend import ast as A
from tir_mlir.script.symbolic import SymbolicPrimFunc, symbolic_vars


class SymbolicIRModule:
    def __init__(self, cls: A.ClassDef, filename: str):
        self.cls, self.filename = cls, filename
        self.defs: List[A.FuncDef] = [f for f in cls.body if isinstance(f, A.FuncDef)]
        self._concrete = None

    def __repr__(self):
        return f"SymbolicIRModule({self.cls.name}: {', '.join(self)})"

    def __iter__(self):
        return iter([f.name for f in self.defs])

    def __len__(self):
        return len(self.defs)

    def __contains__(self, name):
        return any(f.name == name for f in self.defs)

    def __getitem__(self, name):
        f = next((f for f in self.defs if f.name == name), None)
        if f is None:
            raise KeyError(f"no function named {name!r}; the module has {sorted(self)}")
        if symbolic_vars(f):
            return SymbolicPrimFunc(f, self.filename)
        return self.concrete()[name]

    def symbolic_functions(self) -> Dict[str, SymbolicPrimFunc]:
        return {f.name: SymbolicPrimFunc(f, self.filename) for f in self.defs
                if symbolic_vars(f)}

    def concrete(self):
        """The IRModule of the functions without symbolic vars (None when there is none)."""
        if self._concrete is None and any(not symbolic_vars(f) for f in self.defs):
            from tir_mlir.frontend.parser import build
            body = [s for s in self.cls.body if not (isinstance(s, A.FuncDef) and
                                                      symbolic_vars(s))]
            self._concrete = build([A.ClassDef(self.cls.name, body, self.cls.pos,
                                               self.cls.decorators)], self.filename)
        return self._concrete

    def specialize(self, values: Dict):
        """Bind symbolic vars / scalar parameters by name in every function that has them
        (each name must belong to some function)."""
        named = {getattr(k, "name", k): v for k, v in values.items()}
        known = {v for f in self.defs for v in symbolic_vars(f)}
        unknown = [k for k in named if k not in known]
        if unknown:
            raise KeyError(f"{self.cls.name} has no symbolic var or scalar parameter "
                           f"{unknown[0]!r} (it has {', '.join(sorted(known)) or 'none'})")
        body = []
        for s in self.cls.body:
            if isinstance(s, A.FuncDef) and symbolic_vars(s):
                mine = {k: v for k, v in named.items() if k in symbolic_vars(s)}
                s = SymbolicPrimFunc(s, self.filename).specialized_def(mine)[0] if mine else s
            body.append(s)
        cls = A.ClassDef(self.cls.name, body, self.cls.pos, self.cls.decorators)
        if any(isinstance(f, A.FuncDef) and symbolic_vars(f) for f in body):
            return SymbolicIRModule(cls, self.filename)
        from tir_mlir.frontend.parser import build
        return build([cls], self.filename)

    def script(self) -> str:
        """The module as TVM prints it: its symbolic functions printed symbolically
        (symbolic_print.py; a TypeError when one cannot be), the others as in an IRModule."""
        from tir_mlir.script.symbolic_print import script_text
        chunks = {}
        for name, f in self.symbolic_functions().items():
            text = script_text(f)
            if text is None:
                raise TypeError(f"{self.cls.name}.{name} uses its symbolic shapes or scalar "
                                "parameters in a way tir-mlir cannot print symbolically: print "
                                "mod.specialize({...}).script()")
            lines = text.split("\n")
            start = next(k for k, line in enumerate(lines) if line.startswith("@"))
            chunks[name] = ["    " + line if line else line for line in lines[start:]]
        if self.concrete() is not None:
            lines = self.concrete().script().split("\n")
            starts = [k for k, line in enumerate(lines) if line.startswith("    @")] + \
                [len(lines)]
            for a, b in zip(starts, starts[1:]):
                chunk = lines[a:b]
                while chunk and not chunk[-1].strip():
                    chunk.pop()
                name = next(line.split("def ")[1].split("(")[0] for line in chunk
                            if line.lstrip().startswith("def "))
                chunks[name] = chunk
        body = "\n\n".join("\n".join(chunks[f.name]) for f in self.defs)
        return ("# from tvm.script import ir as I\n# from tvm.script import tir as T\n\n"
                f"@I.ir_module\nclass {self.cls.name}:\n{body}")

    def __str__(self):
        return self.script()

    def only_function(self) -> SymbolicPrimFunc:
        """The module's one function, for Schedule (a module of several is refused)."""
        if len(self.defs) != 1:
            raise TypeError(f"Schedule of a module with symbolic functions takes one function: "
                            f"schedule mod[name] (one of {', '.join(self)})")
        return self[self.defs[0].name]

    def _tir_mlir_build(self, target="llvm", **kwargs):
        return _Built(self, target, kwargs)


class _Built:
    """`tir_mlir.build(mod)` of a SymbolicIRModule: `lib[name](...)` per function kind."""

    def __init__(self, mod: SymbolicIRModule, target, kwargs):
        from tir_mlir.runtime.build import build
        self.mod = mod
        concrete = mod.concrete()
        self.concrete = build(concrete, target, **kwargs) if concrete is not None else None
        self.symbolic = {name: build(f, target, **kwargs)
                         for name, f in mod.symbolic_functions().items()}

    def __getitem__(self, name):
        if name in self.symbolic:
            return self.symbolic[name][name]
        if self.concrete is None or name not in self.mod:
            raise KeyError(f"no function named {name!r}; the module has {sorted(self.mod)}")
        return self.concrete[name]

    def time_evaluator(self, name, dev=None, **kwargs):
        lib = self.symbolic.get(name, self.concrete)
        return lib.time_evaluator(name, dev, **kwargs)

