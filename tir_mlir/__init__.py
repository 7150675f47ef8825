"""tir-mlir: TVM's TensorIR on MLIR.

mod = tir_mlir.load("mm_relu.tir")          # or tir_mlir.parse(text)
sch = tir_mlir.Schedule(mod)
j0, j1 = sch.split(sch.get_loops(sch.get_block("Y"))[1], factors=[None, 4])
lib = tir_mlir.build(sch.mod, target="llvm")
lib["mm_relu"](a, b, c)
"""

import importlib

from tir_mlir.errors import BuildError, ScheduleError, TIRError, TIRParseError
from tir_mlir.module import IRModule

__version__: str  # read from the installed package's metadata on first use (__getattr__)

# Public name -> module that defines it; imported on first use so `import tir_mlir` stays cheap.
_LAZY = {
    "parse": "tir_mlir.frontend.parser",
    "load": "tir_mlir.frontend.parser",
    "from_linalg": "tir_mlir.frontend.linalg_import",
    "structural_equal": "tir_mlir.printer.equality",
    "assert_structural_equal": "tir_mlir.printer.equality",
    "structural_hash": "tir_mlir.printer.equality",
    "Schedule": "tir_mlir.schedule.schedule",
    "Trace": "tir_mlir.schedule.trace",
    "TensorIntrin": "tir_mlir.schedule.tensor_intrin",
    "build": "tir_mlir.runtime.build",
    "load_module": "tir_mlir.runtime.build",
    "interpret": "tir_mlir.interpreter",
    "lower": "tir_mlir.te.schedule",
    "register_func": "tir_mlir.runtime.packed",
    "get_global_func": "tir_mlir.runtime.packed",
    "cpu": "tir_mlir.compat.nd",
    "cuda": "tir_mlir.compat.nd",
    "compile": "tir_mlir.compat.entry",
    "device": "tir_mlir.compat.entry",
}
# Subpackages reachable as attributes (`tir_mlir.te.placeholder`), also imported on first use.
_SUBMODULES = {
    "te": "tir_mlir.te",
    "script": "tir_mlir.script",
    "tir": "tir_mlir.compat.tir",
    "nd": "tir_mlir.compat.nd",
    "target": "tir_mlir.compat.target",
    "testing": "tir_mlir.compat.testing",
    "ir": "tir_mlir.compat.ir",
    "meta_schedule": "tir_mlir.meta_schedule",
}

__all__ = [
    "IRModule",
    "TIRError",
    "TIRParseError",
    "ScheduleError",
    "BuildError",
    *_LAZY,
    *_SUBMODULES,
]


def __getattr__(name):
    if name == "__version__":
        return _version()
    if name in _SUBMODULES:
        return importlib.import_module(_SUBMODULES[name])
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'tir_mlir' has no attribute {name!r}")


def __dir__():
    """Every public name, the lazily imported ones too (tab completion)."""
    return sorted(set(globals()) | set(_LAZY) | set(_SUBMODULES) | {"__version__"})


def _version() -> str:
    """The installed distribution's version ("unknown" when run from a source tree that was
    never installed)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("tir-mlir")
    except PackageNotFoundError:
        return "unknown"
