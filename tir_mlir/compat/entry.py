"""TVM 0.21's top-level entry points: `tvm.compile(mod, target)` and `tvm.device(kind, i)`."""

from tir_mlir.compat.nd import Device, cpu, cuda
from tir_mlir.errors import BuildError
from tir_mlir.runtime.build import Module, build


def compile(mod, target="llvm", **kwargs) -> Module:  # TVM 0.21 shadows the builtin too
    """`tvm.compile(mod, target="llvm")`: `build`. The module it returns also answers
    TVM 0.21 Executable's `lib.mod` (itself: `lib.mod.time_evaluator(...)`) and `jit()`."""
    return build(mod, target=target if target is not None else "llvm", **kwargs)


def device(kind: str | int, index: int = 0) -> Device:
    """`tvm.device("cpu", 0)`, `tvm.device("llvm")`, `tvm.device("cuda", 1)`."""
    name = str(kind).split()[0]
    if name in ("cpu", "llvm", "c", "1"):
        return cpu(index)
    if name in ("cuda", "gpu", "nvptx", "2"):
        return cuda(index)
    raise BuildError(f"unknown device {kind!r}; known: cpu (llvm), cuda")
