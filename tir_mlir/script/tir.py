"""`T` for TVMScript in Python files: `from tir_mlir.script import tir as T`.

`T.prim_func` and `T.macro` are real decorators. Every other `T.` name (`T.Buffer`, `T.int32`,
`T.handle`, ...) is an inert placeholder: Python evaluates parameter annotations when it
defines a function, and they must not fail; the parser reads their text, not these objects.
"""

import sys

from tir_mlir.errors import TIRError
from tir_mlir.script.captures import SizeVar
from tir_mlir.script.inert import Inert


def _in_class(fn) -> bool:
    parts = fn.__qualname__.split(".")
    return len(parts) > 1 and parts[-2] != "<locals>"


def prim_func(func=None, *, private=False, check_well_formed=True):
    """`@T.prim_func` / `@T.prim_func(private=True)`: the function as a PrimFunc. A method of
    an `@I.ir_module` class is left to the class decorator, which reads the whole class.
    A TVMScript error is raised as a TVMScriptError in the frame the user's decorator line
    calls (here, or in `decorate`), so that the traceback holds one frame of ours."""
    __tracebackhide__ = True  # pytest and IPython show the user's frame only
    frame = sys._getframe(1)

    def decorate(fn):
        __tracebackhide__ = True
        try:
            return _define_func(fn, frame)
        except TIRError as e:
            raise _script_error(e) from None

    if func is None:
        return decorate
    try:
        return _define_func(func, frame)
    except TIRError as e:
        raise _script_error(e) from None


def _define_func(fn, frame):
    if _in_class(fn):
        return Inert()
    from tir_mlir.script.define import define_func

    return define_func(fn, frame)


def macro(func=None, *, hygienic=True):
    """`@T.macro` / `@T.macro(hygienic=False)`: a fragment expanded where a prim_func calls it
    (errors raised as by `prim_func`)."""
    __tracebackhide__ = True
    frame = sys._getframe(1)

    def decorate(fn):
        __tracebackhide__ = True
        try:
            return _define_macro(fn, frame)
        except TIRError as e:
            raise _script_error(e) from None

    if func is None:
        return decorate
    try:
        return _define_macro(func, frame)
    except TIRError as e:
        raise _script_error(e) from None


def _define_macro(fn, frame):
    from tir_mlir.script.define import define_macro

    return define_macro(fn, frame)


def _script_error(e: TIRError) -> TIRError:
    from tir_mlir.script.define import script_error

    return script_error(e)


def int32(*args, **kwargs):
    """`n = T.int32()` outside a definition is a symbolic var (captures.SizeVar); with
    arguments (`T.int32(4)`, in an annotation) an inert placeholder."""
    return Inert() if args or kwargs else SizeVar("int32")


def int64(*args, **kwargs):
    return Inert() if args or kwargs else SizeVar("int64")


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    return Inert()
