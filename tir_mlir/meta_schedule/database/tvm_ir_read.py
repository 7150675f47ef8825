"""TVM 0.21's serialised IRModule (`tvm.ir.save_json`'s object graph, what `tvm_ir_json`
writes and TVM's JSONDatabase stores) printed back as TVMScript that tir-mlir parses: the
workloads TVM's tuning logs hold become programs here. Explicit forms are printed (one loop
per `for`, `T.axis.spatial/reduce` per block var, every region written out); a construct
outside what the writer covers raises ValueError."""

import base64
import json
import re
import struct

from tir_mlir.meta_schedule.database.tvm_ir_json import INTRINSICS

_BIN_TEXT = {
    "tir.Add": "+",
    "tir.Sub": "-",
    "tir.Mul": "*",
    "tir.FloorDiv": "//",
    "tir.FloorMod": "%",
    "tir.Div": "/",
    "tir.LT": "<",
    "tir.LE": "<=",
    "tir.GT": ">",
    "tir.GE": ">=",
    "tir.EQ": "==",
    "tir.NE": "!=",
    "tir.And": "and",
    "tir.Or": "or",
}
_KIND_TEXT = {0: "range", 1: "T.parallel", 2: "T.vectorized", 3: "T.unroll"}


_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_DTYPE = re.compile(r"(u?int|float|bfloat)(8|16|32|64)|bool|handle")
# A graph is data from a file: the text printed from it is bounded (an expression DAG whose
# nodes are shared expands exponentially), and so is its nesting (a cycle never ends).
MAX_TEXT = 4_000_000
MAX_DEPTH = 400


class _Reader:
    """Prints a graph's PrimFuncs as TVMScript that tir-mlir's parser reads (explicit forms:
    one loop per `for`, `T.axis.spatial/reduce` per block var, every region written out).
    Names, numbers and dtypes are checked before they are printed."""

    def __init__(self, graph: dict):
        self.nodes, self.root = graph["nodes"], graph["root"]
        self.printed, self.depth = 0, 0

    def node(self, ref) -> dict:
        node = self.nodes[int(ref)]
        if not node["type_key"]:
            raise ValueError("unexpected null node")
        return node

    def attr(self, node: dict, key: str) -> dict | None:
        ref = node["attrs"][key]
        return None if ref == "null" else self.node(ref)

    def need(self, node: dict, key: str) -> dict:
        """The node of an attribute that must not be null."""
        found = self.attr(node, key)
        if found is None:
            raise ValueError(f"{node['type_key']}.{key} is null")
        return found

    def items(self, node: dict | None) -> list[dict]:
        return [] if node is None else [self.node(i) for i in node.get("data", [])]

    def string(self, node: dict | None) -> str:
        return "" if node is None else str(node.get("repr_str", ""))

    def name(self, node: dict | None) -> str:
        """A function, buffer or variable name: an identifier, else refused."""
        text = self.string(node)
        if not _NAME.fullmatch(text):
            raise ValueError(f"{text[:40]!r} is not a name")
        return text

    def module(self) -> str:
        root = self.node(self.root)
        if root["type_key"] != "ir.IRModule":
            raise ValueError(f"the graph's root is a {root['type_key']}, not an IRModule")
        data = self.need(root, "functions").get("data", [])
        funcs = [
            (self.name(self.attr(self.node(gvar), "name_hint")), self.node(func))
            for gvar, func in zip(data[::2], data[1::2])
        ]
        if len(funcs) == 1:  # printed as tir-mlir and TVM print one function
            return (
                "\n".join(["# from tvm.script import tir as T", "", *self.prim_func(*funcs[0])])
                + "\n"
            )
        out = [
            "# from tvm.script import ir as I",
            "# from tvm.script import tir as T",
            "",
            "@I.ir_module",
            "class Module:",
        ]
        for name, func in funcs:
            out += ["    " + line for line in self.prim_func(name, func)]
        return "\n".join(out) + "\n"

    def prim_func(self, name: str, func: dict) -> list[str]:
        if func["type_key"] != "tir.PrimFunc":
            raise ValueError(f"function {name} is a {func['type_key']}, not a PrimFunc")
        bmap = self.need(func, "buffer_map").get("data", [])
        by_var = dict(zip(bmap[::2], bmap[1::2]))
        params, matched, scalars = [], [], set()
        for p in self.need(func, "params").get("data", []):
            var = self.node(p)
            if p not in by_var:  # a scalar parameter
                params.append(f"{self.expr(var)}: T.{var['attrs']['dtype']}")
                scalars.add(p)
            elif self.symbolic(by_var[p]):  # a handle bound by T.match_buffer
                params.append(f"{self.expr(var)}: T.handle")
                matched.append(
                    f"{self.buffer_name(by_var[p])} = T.match_buffer("
                    f"{self.expr(var)}, {self.buffer_type(by_var[p], shape_only=True)})"
                )
            else:
                params.append(f"{self.buffer_name(by_var[p])}: {self.buffer_type(by_var[p])}")
        lines = ["@T.prim_func", f"def {name}({', '.join(params)}):"]
        attrs = self.need(self.need(func, "attrs"), "__dict__")
        entries = []
        for key, ref in zip(attrs.get("keys", []), attrs.get("data", [])):
            if key != "global_symbol":
                entries.append(f"{json.dumps(key)}: {self.attr_value(self.node(ref))}")
        if entries:
            lines.append(f"    T.func_attr({{{', '.join(entries)}}})")
        sizes = {}  # the size variables the shapes use
        for b in by_var.values():
            for dim in self.items(self.attr(self.node(b), "shape")):
                self.size_vars(dim, sizes, scalars)
        lines += [f"    {n} = T.{dtype}()" for n, dtype in sizes.values()]
        lines += ["    " + line for line in matched]
        body = self.need(func, "body")
        if (
            body["type_key"] == "tir.BlockRealize"
            and self.string(self.attr(self.need(body, "block"), "name_hint")) == "root"
        ):
            root = self.need(body, "block")
            lines += ["    " + line for line in self.allocs(root)]
            body = self.need(root, "body")
        return lines + ["    " + line for line in self.stmt(body)] + [""]

    def symbolic(self, ref) -> bool:
        """Whether a buffer's shape has a dimension that is not a number."""
        return any(
            d["type_key"] != "ir.IntImm" for d in self.items(self.attr(self.node(ref), "shape"))
        )

    def size_vars(self, node: dict, out: dict, params: set, seen=None) -> None:
        """The variables of an expression that are not parameters, by node, in order."""
        seen = set() if seen is None else seen
        if id(node) in seen:
            return
        seen.add(id(node))
        if len(seen) > MAX_TEXT // 100:
            raise ValueError("a shape expression too large to read")
        if node["type_key"] == "tir.Var":
            if all(self.nodes[p] is not node for p in params) and id(node) not in out:
                out[id(node)] = (self.expr(node), self.dtype(node["attrs"]["dtype"]))
            return
        for key, ref in node.get("attrs", {}).items():
            if key not in ("dtype", "value", "span") and isinstance(ref, str) and ref.isdigit():
                self.size_vars(self.node(ref), out, params, seen)

    def buffer_name(self, ref) -> str:
        return self.name(self.attr(self.node(ref), "name"))

    @staticmethod
    def dtype(text) -> str:
        if not isinstance(text, str) or not _DTYPE.fullmatch(text):
            raise ValueError(f"{str(text)[:20]!r} is not a dtype")
        return text

    def buffer_type(self, ref, alloc: bool = False, shape_only: bool = False) -> str:
        buf = self.node(ref)
        shape = [self.expr(s) for s in self.items(self.attr(buf, "shape"))]
        text = "(" + ", ".join(shape) + ("," if len(shape) == 1 else "") + ")"
        scope = self.string(
            self.attr(self.need(self.need(buf, "data"), "type_annotation"), "storage_scope")
        )
        extra = f", scope={json.dumps(scope)}" if scope and scope != "global" else ""
        dtype = json.dumps(self.dtype(buf["attrs"]["dtype"]))
        if shape_only:
            return f"{text}, {dtype}"
        return f"T.alloc_buffer({text}, {dtype}{extra})" if alloc else f"T.Buffer({text}, {dtype})"

    def allocs(self, block: dict) -> list[str]:
        return [
            f"{self.buffer_name(r)} = {self.buffer_type(r, alloc=True)}"
            for r in self.need(block, "alloc_buffers").get("data", [])
        ]

    def attr_value(self, node: dict) -> str:
        if node["type_key"] == "bool":
            return str(bool(int(node["attrs"]["v_int64"])))
        if node["type_key"] == "ffi.String":
            return json.dumps(self.string(node))
        if node["type_key"] == "ir.IntImm":
            return self.expr_node(node)
        raise ValueError(f"attribute of type {node['type_key']} is not supported")

    def stmt(self, node: dict) -> list[str]:
        lines = self.stmt_lines(node)
        self.printed += sum(len(line) for line in lines)
        if self.printed > MAX_TEXT:
            raise ValueError("the program is too large to read")
        return lines

    def stmt_lines(self, node: dict) -> list[str]:
        kind = node["type_key"]
        if kind == "tir.SeqStmt":
            return [line for s in self.items(self.attr(node, "seq")) for line in self.stmt(s)]
        if kind == "tir.For":
            return self.for_(node)
        if kind == "tir.BlockRealize":
            return self.block(node)
        if kind == "tir.BufferStore":
            idx = ", ".join(self.expr(i) for i in self.items(self.attr(node, "indices")))
            return [
                (
                    f"{self.buffer_name(node['attrs']['buffer'])}[{idx}] = "
                    f"{self.expr(self.attr(node, 'value'))}"
                )
            ]
        raise ValueError(f"statement {kind} is not supported")

    def for_(self, node: dict) -> list[str]:
        a = node["attrs"]
        kind = int(a["kind"])
        if (
            kind not in _KIND_TEXT
            or a["thread_binding"] != "null"
            or self.need(node, "annotations").get("data")
        ):
            raise ValueError("thread-bound or annotated loops are not supported")
        var = self.expr(self.attr(node, "loop_var"))
        lo, ext = self.need(node, "min"), self.need(node, "extent")
        rng = (
            self.expr(ext)
            if lo["type_key"] == "ir.IntImm" and lo["attrs"]["value"] == "0"
            else f"{self.expr(lo)}, {self.expr(lo)} + {self.expr(ext)}"
        )
        body = self.stmt(self.need(node, "body"))
        return [f"for {var} in {_KIND_TEXT[kind]}({rng}):"] + ["    " + s for s in body]

    def block(self, realize: dict) -> list[str]:
        block = self.need(realize, "block")
        lines = []
        values = self.items(self.attr(realize, "iter_values"))
        for iv, value in zip(self.items(self.attr(block, "iter_vars")), values):
            axis = {"0": "spatial", "2": "reduce"}.get(iv["attrs"]["iter_type"])
            if axis is None:
                raise ValueError("an opaque or thread block var is not supported")
            extent = self.expr(self.attr(self.need(iv, "dom"), "extent"))
            lines.append(
                f"{self.expr(self.attr(iv, 'var'))} = T.axis.{axis}({extent}, {self.expr(value)})"
            )
        pred = self.need(realize, "predicate")
        if not (pred["type_key"] == "ir.IntImm" and pred["attrs"]["value"] == "1"):
            lines.append(f"T.where({self.expr(pred)})")
        lines.append(f"T.reads({self.regions(block, 'reads')})")
        lines.append(f"T.writes({self.regions(block, 'writes')})")
        ann = self.need(block, "annotations")
        if ann.get("data"):
            entries = [
                f"{json.dumps(k)}: {self.attr_value(self.node(v))}"
                for k, v in zip(ann.get("keys", []), ann["data"])
            ]
            lines.append(f"T.block_attr({{{', '.join(entries)}}})")
        lines += self.allocs(block)
        init = self.attr(block, "init")
        if init is not None:
            lines += ["with T.init():"] + ["    " + s for s in self.stmt(init)]
        lines += self.stmt(self.need(block, "body"))
        name = json.dumps(self.string(self.attr(block, "name_hint")))
        return [f"with T.block({name}):"] + ["    " + s for s in lines]

    def regions(self, block: dict, key: str) -> str:
        out = []
        for region in self.items(self.attr(block, key)):
            dims = []
            for r in self.items(self.attr(region, "region")):
                lo, ext = self.need(r, "min"), self.need(r, "extent")
                one = ext["type_key"] == "ir.IntImm" and ext["attrs"]["value"] == "1"
                dims.append(
                    self.expr(lo) if one else f"{self.expr(lo)}:{self.expr(lo)} + {self.expr(ext)}"
                )
            out.append(f"{self.buffer_name(region['attrs']['buffer'])}[{', '.join(dims)}]")
        return ", ".join(out)

    def expr(self, node: dict | None) -> str:
        if node is None:
            raise ValueError("missing expression")
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise ValueError("an expression nested too deeply (or a cycle)")
        try:
            text = self.expr_node(node)
        finally:
            self.depth -= 1
        self.printed += len(text)
        if self.printed > MAX_TEXT:
            raise ValueError("the program is too large to read")
        return text

    def expr_node(self, node: dict) -> str:
        kind, a = node["type_key"], node.get("attrs", {})
        if kind == "tir.Var":
            return self.name(self.attr(node, "name"))
        if kind == "ir.IntImm":
            dtype, value = self.dtype(a["dtype"]), int(a["value"])
            if dtype == "bool":
                return str(bool(value))
            return str(value) if dtype == "int32" else f"T.{dtype}({value})"
        if kind == "ir.FloatImm":
            return f"T.{self.dtype(a['dtype'])}({float(a['value'])!r})"
        if kind in _BIN_TEXT:
            return (
                f"({self.expr(self.attr(node, 'a'))} {_BIN_TEXT[kind]} "
                f"{self.expr(self.attr(node, 'b'))})"
            )
        if kind in ("tir.Max", "tir.Min"):
            return (
                f"T.{kind[4:].lower()}({self.expr(self.attr(node, 'a'))}, "
                f"{self.expr(self.attr(node, 'b'))})"
            )
        if kind == "tir.Not":
            return f"(not {self.expr(self.attr(node, 'a'))})"
        if kind == "tir.Cast":
            return (
                f"T.Cast({json.dumps(self.dtype(a['dtype']))}, "
                f"{self.expr(self.attr(node, 'value'))})"
            )
        if kind == "tir.Select":
            return (
                f"T.Select({self.expr(self.attr(node, 'condition'))}, "
                f"{self.expr(self.attr(node, 'true_value'))}, "
                f"{self.expr(self.attr(node, 'false_value'))})"
            )
        if kind == "tir.BufferLoad":
            idx = ", ".join(self.expr(i) for i in self.items(self.attr(node, "indices")))
            return f"{self.buffer_name(a['buffer'])}[{idx}]"
        if kind == "tir.Call":
            op = self.string(self.attr(node, "op"))
            if not op.startswith("tir.") or op[4:] not in INTRINSICS:
                raise ValueError(f"call of {op!r} is not supported")
            args = ", ".join(self.expr(x) for x in self.items(self.attr(node, "args")))
            return f"T.{op[4:]}({args})"
        raise ValueError(f"expression {kind} is not supported")


def tvm_json_to_script(graph_text: str) -> str:
    """TVMScript of a graph `module_to_tvm_json` (or TVM's save_json) wrote; ValueError for a
    construct outside what the writer covers, or for a graph that is not one."""
    try:
        return _Reader(json.loads(graph_text)).module()
    except (KeyError, IndexError, TypeError, AttributeError, RecursionError) as e:
        raise ValueError(f"not a TVM IRModule graph tir-mlir reads ({type(e).__name__})") from None


def graph_from_payload(payload: str) -> str | None:
    """The graph text of a workload line's second field in TVM's form, None if it is not."""
    data = base64.b64decode(payload)
    if len(data) < 8 or struct.unpack("<Q", data[:8])[0] != len(data) - 8:
        return None
    return data[8:].decode("utf-8", "replace")
