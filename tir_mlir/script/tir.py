"""`T` for TVMScript in Python files: `from tir_mlir.script import tir as T`.

`T.prim_func` and `T.macro` are real decorators. Every other `T.` name (`T.Buffer`, `T.int32`,
`T.handle`, ...) is an inert placeholder: Python evaluates parameter annotations when it
defines a function, and they must not fail; the parser reads their text, not these objects.
"""
import sys

from tir_mlir.errors import TIRError
from tir_mlir.script.inert import Inert


def _in_class(fn) -> bool:
    parts = fn.__qualname__.split(".")
    return len(parts) > 1 and parts[-2] != "<locals>"


def prim_func(func=None, *, private=False, check_well_formed=True):
    """`@T.prim_func` / `@T.prim_func(private=True)`: the function as a PrimFunc. A method of
    an `@I.ir_module` class is left to the class decorator, which reads the whole class."""
    __tracebackhide__ = True
    frame = sys._getframe(1)

    def decorate(fn):
        if _in_class(fn):
            return Inert()
        from tir_mlir.script.define import define_func, script_error
        __tracebackhide__ = True    # pytest and IPython show the user's frame only
        try:
            return define_func(fn, frame)
        except TIRError as e:
            raise script_error(e) from None
    return decorate if func is None else decorate(func)


def macro(func=None, *, hygienic=True):
    """`@T.macro` / `@T.macro(hygienic=False)`: a fragment expanded where a prim_func calls it."""
    __tracebackhide__ = True
    frame = sys._getframe(1)

    def decorate(fn):
        from tir_mlir.script.define import define_macro, script_error
        __tracebackhide__ = True    # pytest and IPython show the user's frame only
        try:
            return define_macro(fn, frame)
        except TIRError as e:
            raise script_error(e) from None
    return decorate if func is None else decorate(func)


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    return Inert()
