"""`I` for TVMScript in Python files: `from tir_mlir.script import ir as I`."""
import sys

from tir_mlir.errors import TIRError
from tir_mlir.script.inert import Inert


def ir_module(cls=None, *, check_well_formed=True):
    """`@I.ir_module class Module:` -> the IRModule of its @T.prim_func methods."""
    __tracebackhide__ = True
    frame = sys._getframe(1)

    def decorate(c):
        from tir_mlir.script.define import define_module, script_error
        __tracebackhide__ = True    # pytest and IPython show the user's frame only
        try:
            return define_module(c, frame)
        except TIRError as e:
            raise script_error(e) from None
    return decorate if cls is None else decorate(cls)


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    return Inert()
