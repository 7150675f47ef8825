"""TVMScript inside Python files: `from tir_mlir.script import tir as T, ir as I`.

`@T.prim_func`, `@I.ir_module` and `@T.macro` read the decorated definition's source, parse it
with the TVMScript grammar and build it; the body is never run. `parse_python`/`load_python`
read the definitions of a Python file without running any of it (`tir-mlir parse file.py`).
"""

from tir_mlir.script.ir import ir_module  # `@tvm.script.ir_module`, as in TVM

__all__ = ["ir_module"]
