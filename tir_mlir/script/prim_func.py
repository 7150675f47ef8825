"""PrimFunc: what `@T.prim_func` and `te.create_prim_func` return, a module of one function.

It is an IRModule, so `Schedule(f)`, `build(f)`, `f.script()` take it as TVM takes a PrimFunc.
"""
from tir_mlir.module import IRModule


class PrimFunc(IRModule):
    @property
    def name(self) -> str:
        return next(iter(self.functions))

    def show(self):
        print(self.script())

    def __repr__(self):
        return f"PrimFunc({self.name})"
