"""Argument information of a function (TVM's `ms.arg_info`): what the runner allocates.

JSON form, as TVM writes it in tuning records: `["TENSOR", "float32", [128, 128]]`."""

from dataclasses import dataclass
from typing import List, Optional, Tuple, Union

from tir_mlir.module import IRModule


class ArgInfo:
    """Base class; `ArgInfo.from_json` and the `from_*` constructors return TensorInfo."""

    def as_json(self):
        raise NotImplementedError

    @staticmethod
    def from_json(obj) -> "ArgInfo":
        if not (isinstance(obj, (list, tuple)) and len(obj) == 3 and obj[0] == "TENSOR"):
            raise ValueError(f'not an argument info: {obj!r} (expected ["TENSOR", dtype, shape])')
        return TensorInfo(str(obj[1]), tuple(obj[2]))

    @staticmethod
    def from_prim_func(func) -> List["ArgInfo"]:
        """One TensorInfo per buffer parameter of a function op (`mod["main"]`; a module
        of one function stands for that function, as a PrimFunc parsed alone is one)."""
        if isinstance(func, IRModule):
            func = func[entry_func_name(func)]
        return _infos(func.operation)

    @staticmethod
    def from_entry_func(mod, remove_preproc: bool = True) -> List["ArgInfo"]:
        """The arguments of `mod`'s entry function: "main", else its only function."""
        return ArgInfo.from_prim_func(mod[entry_func_name(mod)])


@dataclass(frozen=True)
class TensorInfo(ArgInfo):
    """A buffer parameter; a symbolic dimension is its size as text (`"n"`, `"n * 4"`)."""

    dtype: str
    shape: Tuple[Union[int, str], ...]

    def __post_init__(self):
        object.__setattr__(
            self, "shape", tuple(x if isinstance(x, str) else int(x) for x in self.shape)
        )

    def as_json(self):
        return ["TENSOR", self.dtype, list(self.shape)]

    def __str__(self):
        return f'TensorInfo("{self.dtype}", {list(self.shape)})'


def entry_func_name(mod, func_name: Optional[str] = None) -> str:
    """`func_name` if given, else "main", else the module's only function."""
    names = list(mod)
    if func_name is not None:
        if func_name not in names:
            raise KeyError(f"no function named {func_name!r}; the module has {sorted(names)}")
        return func_name
    if "main" in names or len(names) != 1:
        if "main" not in names:
            raise KeyError(
                f"the module has several functions {sorted(names)} and none is "
                f"'main': name the one to tune"
            )
        return "main"
    return names[0]


def _infos(func_op) -> List[ArgInfo]:
    from mlir import ir

    from tir_mlir.context import get_context
    from tir_mlir.runtime.signature import signatures

    with get_context(), ir.Location.unknown():
        module = ir.Module.create()
        with ir.InsertionPoint(module.body):
            func_op.clone()
        (params,) = signatures(module).values()
    from tir_mlir.analysis.size_exprs import to_text

    return [
        TensorInfo(p.dtype, tuple(s if isinstance(s, int) else to_text(s) for s in p.shape))
        for p in params
        if p.kind != "var"
    ]
