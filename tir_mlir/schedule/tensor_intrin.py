"""TensorIntrin: the registry of tensor intrinsics that `Schedule.tensorize` maps onto.

    TensorIntrin.register("mac16_f32", DESC_TEXT, IMPL_TEXT)
    sch.tensorize(loop_or_block, "mac16_f32")

An intrinsic is a pair of prim_funcs with the same buffer parameters: `desc` says what
computation it performs (matched structurally against the scheduled block), `impl` how (its
body replaces the block's). Each may be TVMScript text or an IRModule with one function.
The CPU intrinsics shipped in `tir_mlir/intrinsics/` register on first use of the registry.
"""

import importlib
from dataclasses import dataclass
from typing import Dict, Union

from mlir import ir

from tir_mlir.errors import ScheduleError
from tir_mlir.module import IRModule

_BUILTIN_MODULES = (
    "tir_mlir.intrinsics.cpu",
    "tir_mlir.intrinsics.cuda",
    "tir_mlir.intrinsics.dot_product",
)


@dataclass
class TensorIntrin:
    name: str
    desc: IRModule
    impl: IRModule

    @property
    def desc_func(self) -> ir.Operation:
        return next(iter(self.desc.functions.values()))

    @property
    def impl_func(self) -> ir.Operation:
        return next(iter(self.impl.functions.values()))

    @staticmethod
    def register(
        name: str, desc: Union[str, IRModule], impl: Union[str, IRModule], override: bool = False
    ) -> "TensorIntrin":
        reg = _registry()
        if name in reg and not override:
            raise ValueError(f"tensor intrinsic {name!r} is already registered")
        intrin = TensorIntrin(name, _module(desc, name, "desc"), _module(impl, name, "impl"))
        d, i = intrin.desc_func, intrin.impl_func
        dt = [a.type for a in d.regions[0].blocks[0].arguments]
        it = [a.type for a in i.regions[0].blocks[0].arguments]
        if dt != it:
            raise ValueError(
                f"tensor intrinsic {name!r}: desc parameters {dt} differ from impl parameters {it}"
            )
        reg[name] = intrin
        return intrin

    @staticmethod
    def get(name: str) -> "TensorIntrin":
        reg = _registry()
        if name not in reg:
            raise ScheduleError(
                f"tensorize: no tensor intrinsic named {name!r} (registered: "
                f"{', '.join(sorted(reg)) or 'none'})"
            )
        return reg[name]


_REG: Dict[str, TensorIntrin] = {}
_LOADED = []


def _registry() -> Dict[str, TensorIntrin]:
    if not _LOADED:
        _LOADED.append(True)
        for m in _BUILTIN_MODULES:
            importlib.import_module(m)
    return _REG


def _module(x, name, what) -> IRModule:
    if isinstance(x, str):
        from tir_mlir.frontend.parser import parse

        x = parse(x, filename=f"<intrin {name} {what}>")
    if not isinstance(x, IRModule) or len(x) != 1:
        raise ValueError(
            f"tensor intrinsic {name!r}: {what} must be TVMScript text or an "
            f"IRModule with one function"
        )
    return x
