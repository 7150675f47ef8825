"""`I` for TVMScript in Python files: `from tir_mlir.script import ir as I`."""

import sys

from tir_mlir.errors import TIRError
from tir_mlir.script.inert import Inert


def ir_module(cls=None, *, check_well_formed=True):
    """`@I.ir_module class Module:` -> the IRModule of its @T.prim_func methods. A TVMScript
    error is raised as a TVMScriptError from this frame (or `decorate`), as `T.prim_func`'s."""
    __tracebackhide__ = True  # pytest and IPython show the user's frame only
    frame = sys._getframe(1)

    def decorate(c):
        __tracebackhide__ = True
        try:
            return _define_module(c, frame)
        except TIRError as e:
            raise _script_error(e) from None

    if cls is None:
        return decorate
    try:
        return _define_module(cls, frame)
    except TIRError as e:
        raise _script_error(e) from None


def _define_module(cls, frame):
    from tir_mlir.script.define import define_module

    return define_module(cls, frame)


def _script_error(e: TIRError) -> TIRError:
    from tir_mlir.script.define import script_error

    return script_error(e)


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    return Inert()
