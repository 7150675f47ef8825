"""TVMScript printer: an IRModule (MLIR, `tir` dialect) -> text in TVM 0.21's style.

    script(mod)       the module: `@I.ir_module class Module:` (or one bare `@T.prim_func`)
    script_func(op)   one prim_func

The printer only reads the IR; `print(parse(print(m))) == print(m)` holds.
"""

from tir_mlir.ir.deep import deep_recursion
from tir_mlir.printer.stmt import IND, FuncPrinter

_HEADER_IR = "# from tvm.script import ir as I"
_HEADER_TIR = "# from tvm.script import tir as T"


def script_func(func_op, header: bool = True) -> str:
    """One `func.func` prim_func as `@T.prim_func def name(...)`."""
    with func_op.operation.context:
        text = FuncPrinter(func_op.operation).print()
    return f"{_HEADER_TIR}\n\n{text}" if header else text


def script(mod) -> str:
    """A module. Like TVM, a module made with @I.ir_module prints as `class Module`; a single
    function parsed from a bare @T.prim_func prints on its own."""
    with deep_recursion("print the program"):
        return _script(mod)


def _script(mod) -> str:
    funcs = list(mod.functions.values())
    is_module = "tir.module_name" in mod.module.operation.attributes or len(funcs) != 1
    if not is_module:
        return script_func(funcs[0])
    parts = [_HEADER_IR, _HEADER_TIR, "", "@I.ir_module", "class Module:"]
    for k, f in enumerate(funcs):
        if k:
            parts.append("")
        body = script_func(f, header=False)
        parts += [IND + line if line else line for line in body.split("\n")]
    if not funcs:
        parts.append(IND + "pass")  # TVM's spelling of an empty module
    return "\n".join(parts)
