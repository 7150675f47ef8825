"""The `tir` attributes that sit on upstream ops (declared in tir.irdl.mlir).

A TensorIR property of a loop or a buffer is a discardable `tir.*` attribute whose value is a
dialect attribute with one parameter: `tir.kind = #tir.for_kind<"parallel">`. MLIR's parser
checks the parameter against the IRDL constraint, so a module cannot hold a loop kind or a
thread tag TensorIR lacks. IRDL attributes (LLVM 22) have no Python accessors: `make` builds one
from its text and `param` reads the parameter back from its text, both once per distinct
attribute (attributes are uniqued and immutable, so a table keyed by them stays valid).
"""

from typing import Optional

from mlir import ir

_MADE: dict = {}
_MADE_CONTEXT: list = [None]
_PARAMS: dict = {}


def make(mnemonic: str, param: ir.Attribute) -> ir.Attribute:
    """`#tir.<mnemonic><param>` in the current context."""
    ctx = ir.Context.current
    if _MADE_CONTEXT[0] is not ctx or len(_MADE) > 4096:
        _MADE.clear()
        _MADE_CONTEXT[0] = ctx
    key = (mnemonic, param)
    got = _MADE.get(key)
    if got is None:
        got = _MADE[key] = ir.Attribute.parse(f"#tir.{mnemonic}<{param}>")
    return got


def mnemonic(attr: ir.Attribute) -> Optional[str]:
    """ "for_kind" for `#tir.for_kind<...>`; None for any other attribute."""
    return _decode(attr)[0]


def param(attr: ir.Attribute, expected: str) -> ir.Attribute:
    """The parameter of `#tir.<expected><param>`; ValueError for any other attribute (a
    module written with an older spelling, `tir.kind = "parallel"`)."""
    name, value = _decode(attr)
    if name != expected:
        raise ValueError(f"expected #tir.{expected}<...>, got {attr}")
    return value


def _decode(attr: ir.Attribute) -> tuple:
    got = _PARAMS.get(attr)
    if got is None:
        if len(_PARAMS) > 4096:
            _PARAMS.clear()
        got = _PARAMS[attr] = _split(attr)
    return got


def _split(attr: ir.Attribute) -> tuple:
    text = str(attr)
    if not text.startswith("#tir.") or not text.endswith(">"):
        return None, None
    name, _, rest = text[len("#tir.") : -1].partition("<")
    return name, ir.Attribute.parse(rest, attr.context)


# --- the attributes, by what they hold ----------------------------------------------------------


def string(mnemonic_: str, value: str) -> ir.Attribute:
    return make(mnemonic_, ir.StringAttr.get(value))


def string_value(attr: ir.Attribute, mnemonic_: str) -> str:
    return ir.StringAttr(param(attr, mnemonic_)).value


def for_kind(kind: str) -> ir.Attribute:
    return string("for_kind", kind)


def thread(tag: str) -> ir.Attribute:
    return string("thread", tag)


def annotations(values: dict) -> ir.Attribute:
    return make("annotations", ir.DictAttr.get(dict(values)))


def annotations_value(attr: ir.Attribute) -> dict:
    return {n.name: n.attr for n in ir.DictAttr(param(attr, "annotations"))}


def axis_separators(values) -> ir.Attribute:
    i64 = ir.IntegerType.get_signless(64)
    return make("axis_separators", ir.ArrayAttr.get([ir.IntegerAttr.get(i64, v) for v in values]))


def axis_separators_value(attr: ir.Attribute) -> tuple:
    return tuple(ir.IntegerAttr(x).value for x in ir.ArrayAttr(param(attr, "axis_separators")))
