"""`tir-mlir parse file.py`: the TVMScript definitions of a Python file, built without running
any of it.

The file's top-level constants (`N = 128`, `dtype = "float32"`, `M, K = 64, N * 2`) are read
from their text: literals, names read before, and arithmetic on them. Any other right-hand side
makes the name unreadable, and using it is an error that says so. Definitions nested in Python
functions (generated per call) need the call's arguments, so only top-level ones are read.
"""

from tir_mlir.errors import SourceLoc, TIRParseError
from tir_mlir.frontend import ast as A
from tir_mlir.frontend.parser import build, parse_ast
from tir_mlir.script.captures import SizeVar, Unreadable
from tir_mlir.script.extract import split_python
from tir_mlir.script.resolve import macro_options, make_macro_def, resolve_definition

MAX_INT_BITS = 256  # constant arithmetic stays small (no 10 ** 10 ** 9)
MAX_ITEMS = 1024  # nor do concatenated tuples (X = X + X, sixty times)


def _constant(node, consts):
    """The value of a literal expression, or None when it is not one."""
    if isinstance(node, A.Const) and type(node.value) in (bool, int, float, str):
        return node.value
    if (
        isinstance(node, A.Call)
        and not node.args
        and not node.kwargs
        and (name := A.dotted_name(node.func)) in ("T.int32", "T.int64", "tir.int32", "tir.int64")
    ):
        return SizeVar(name.split(".")[1])  # n = T.int32()
    if isinstance(node, A.Name):
        v = consts.get(node.id)
        return None if isinstance(v, Unreadable) else v
    if isinstance(node, (A.Tuple_, A.List_)):
        items = [_constant(x, consts) for x in node.items]
        if any(x is None for x in items):
            return None
        return tuple(items) if isinstance(node, A.Tuple_) else items
    if isinstance(node, A.UnaryOp) and node.op in ("-", "+"):
        v = _constant(node.operand, consts)
        return (-v if node.op == "-" else v) if type(v) in (int, float) else None
    if isinstance(node, A.BinOp) and node.op in ("+", "-", "*", "//", "%", "/"):
        a, b = _constant(node.lhs, consts), _constant(node.rhs, consts)
        if node.op == "+" and type(a) is type(b) and type(a) in (tuple, list):
            return a + b if len(a) + len(b) <= MAX_ITEMS else None  # SHAPE + (4,)
        if type(a) not in (int, float) or type(b) not in (int, float):
            return None
        if node.op in ("//", "%", "/") and b == 0:
            return None
        v = {
            "+": lambda: a + b,
            "-": lambda: a - b,
            "*": lambda: a * b,
            "//": lambda: a // b,
            "%": lambda: a % b,
            "/": lambda: a / b,
        }[node.op]()
        return None if type(v) is int and v.bit_length() > MAX_INT_BITS else v
    return None


def read_constants(statements, filename):
    """name -> value (or Unreadable) for the top-level assignments, in file order."""
    consts = {}
    for line, text in statements:
        try:
            stmts = parse_ast("\n" * (line - 1) + text, filename)
        except TIRParseError:
            stmts = []
        for s in stmts:
            if not isinstance(s, A.Assign):
                continue
            targets = s.target.items if isinstance(s.target, A.Tuple_) else [s.target]
            value = _constant(s.value, consts)
            if len(targets) > 1:
                ok = isinstance(value, tuple) and len(value) == len(targets)
                values = list(value) if ok else [None] * len(targets)
            else:
                values = [value]
            for t, v in zip(targets, values):
                if isinstance(t, A.Name):
                    consts[t.id] = Unreadable(line) if v is None else v
    return consts


def parse_python(text: str, filename: str = "<string>"):
    """The @T.prim_func / @I.ir_module definitions of Python source `text` as one IRModule
    (symbolic shapes and scalar parameters are arguments of the functions: docs/symbolic.md)."""
    return build(_definitions(text, filename), filename)


def script_python(text: str, filename: str = "<string>") -> str:
    """The definitions of Python source `text` printed as TVMScript."""
    return build(_definitions(text, filename), filename).script()


def _definitions(text: str, filename: str) -> list:
    """The top-level definitions of `text`, macros expanded and captured values substituted."""
    source = split_python(text, filename)
    captures = read_constants(source.constants, filename)
    definitions = []
    for s in parse_ast(source.script, filename):
        if isinstance(s, A.FuncDef) and macro_options(s, filename) is not None:
            captures[s.name] = make_macro_def(s, captures, filename)
        else:
            definitions.append(s)
    if not any(isinstance(s, (A.FuncDef, A.ClassDef)) for s in definitions):
        raise TIRParseError(
            "no @T.prim_func or @I.ir_module definition at the top level of this Python file",
            SourceLoc(filename, 1, 1),
        )
    return [resolve_definition(s, captures, filename) for s in definitions]


def load_python(path):
    path = str(path)
    with open(path, encoding="utf-8") as f:
        return parse_python(f.read(), path)
