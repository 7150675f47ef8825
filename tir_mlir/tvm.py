"""`import tir_mlir.tvm as tvm`: the one line that ports a TVM 0.21 script.

`tvm` is then tir_mlir's API under TVM's names (`tvm.compile`, `tvm.tir.Schedule`,
`tvm.nd.array`, ...), and the script's other TVM imports, `from tvm import te`,
`from tvm.script import tir as T`, `from tvm.script import ir as I`, `import tvm.testing`,
resolve to tir_mlir's modules of those names: a finder first on `sys.meta_path` answers every
`tvm` / `tvm.X` import of the process with them. So the real TVM cannot be used in the same
process afterwards, and importing this module is refused when the real TVM is imported already.
"""

import importlib
import importlib.abc
import importlib.machinery
import sys

import tir_mlir

# `tvm.X` -> the tir_mlir module that plays it.
MODULES = {
    "tvm.te": "tir_mlir.te",
    "tvm.tir": "tir_mlir.compat.tir",
    "tvm.script": "tir_mlir.script",
    "tvm.script.tir": "tir_mlir.script.tir",
    "tvm.script.ir": "tir_mlir.script.ir",
    "tvm.nd": "tir_mlir.compat.nd",
    "tvm.target": "tir_mlir.compat.target",
    "tvm.testing": "tir_mlir.compat.testing",
    "tvm.ir": "tir_mlir.compat.ir",
    "tvm.ir.module": "tir_mlir.compat.ir.module",
    "tvm.meta_schedule": "tir_mlir.meta_schedule",
}

__path__ = []  # a package to the import system, so that `import tvm.X` asks the finder


def __getattr__(name):
    return getattr(tir_mlir, name)


def __dir__():
    return sorted(set(dir(tir_mlir)) | {"__path__"})


class _TvmFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Answers `import tvm.X` with tir_mlir's module for X (MODULES), and refuses the TVM
    modules tir_mlir has no counterpart of (`tvm.relax`) with an ImportError naming them."""

    def find_spec(self, name, path=None, target=None):
        if name != "tvm" and not name.startswith("tvm."):
            return None
        if name != "tvm" and name not in MODULES:
            raise ModuleNotFoundError(
                f"No module named {name!r}: tir_mlir ports TVM's TensorIR, TE and meta schedule "
                f"(tvm.{', tvm.'.join(m[4:] for m in MODULES)}), not {name}",
                name=name,
            )
        return importlib.machinery.ModuleSpec(name, self)

    def create_module(self, spec):
        return (
            sys.modules[__name__]
            if spec.name == "tvm"
            else importlib.import_module(MODULES[spec.name])
        )

    def exec_module(self, module):
        """The module is tir_mlir's, imported (and run) already."""


def _install():
    present = sys.modules.get("tvm")
    if present is not None and present is not sys.modules[__name__]:
        raise ImportError(
            "tir_mlir.tvm: the real TVM is imported already in this process; "
            "`import tir_mlir.tvm as tvm` must come before any `import tvm`"
        )
    if not any(isinstance(f, _TvmFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, _TvmFinder())
    sys.modules["tvm"] = sys.modules[__name__]


_install()
