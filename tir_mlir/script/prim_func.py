"""PrimFunc: what `@T.prim_func` and `te.create_prim_func` return, a module of one function.

It is an IRModule, so `Schedule(f)`, `build(f)`, `f.script()` and `f.show()` take it as TVM
takes a PrimFunc.
"""

from mlir import ir

from tir_mlir.context import get_context, serialized
from tir_mlir.module import IRModule


class PrimFunc(IRModule):
    @property
    def name(self) -> str:
        return next(iter(self.functions))

    @serialized
    def with_attr(self, attr_key_or_dict: str | dict, attr_value=None) -> "PrimFunc":
        """TVM's `func.with_attr("global_symbol", "mmult")` (or a dict of attributes): a copy
        with these `T.func_attr` entries set. `global_symbol` also renames the function: it
        is the name a built library exports it under, as in TVM.

        Before/after:
            T.func_attr({"tir.noalias": True})
            T.func_attr({"global_symbol": "mmult", "tir.noalias": True})
        """
        items = (
            attr_key_or_dict
            if isinstance(attr_key_or_dict, dict)
            else {attr_key_or_dict: attr_value}
        )
        copy = self.copy()
        with get_context():
            op = next(iter(copy.functions.values()))
            old = op.attributes["tir.func_attrs"] if "tir.func_attrs" in op.attributes else None
            attrs = {n.name: n.attr for n in ir.DictAttr(old)} if old is not None else {}
            for key, value in items.items():
                attrs[str(key)] = _attribute(value)
            op.attributes["tir.func_attrs"] = ir.DictAttr.get(attrs)
            symbol = items.get("global_symbol")
            if isinstance(symbol, str):
                op.attributes["sym_name"] = ir.StringAttr.get(symbol)
        return PrimFunc(copy.module)

    def __repr__(self):
        return f"PrimFunc({self.name})"


def _attribute(value, depth: int = 0) -> ir.Attribute:
    """A Python value as the MLIR attribute `T.func_attr` gives the same literal."""
    if isinstance(value, ir.Attribute):
        return value
    if depth > 16:
        raise TypeError("attribute value nested too deeply")
    if isinstance(value, str):
        return ir.StringAttr.get(value)
    if isinstance(value, bool):
        return ir.BoolAttr.get(value)
    if isinstance(value, int):
        return ir.IntegerAttr.get(ir.IntegerType.get_signless(64), value)
    if isinstance(value, float):
        return ir.FloatAttr.get(ir.F64Type.get(), value)
    if isinstance(value, (list, tuple)):
        return ir.ArrayAttr.get([_attribute(v, depth + 1) for v in value])
    if isinstance(value, dict):
        return ir.DictAttr.get({str(k): _attribute(v, depth + 1) for k, v in value.items()})
    raise TypeError(
        f"with_attr: unsupported attribute value {value!r} "
        f"({type(value).__name__}; expected str, bool, int, float, list or dict)"
    )
