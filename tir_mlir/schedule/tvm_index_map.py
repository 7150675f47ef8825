"""Index maps in TVM's JSON traces: TVM writes an IndexMap input (reindex_cache_read,
transform_layout, annotate_buffer_access, ...) as the text of its object graph
(`tvm.ir.save_json`): a "nodes" list where a tir.IndexMap names the array of its parameters
(tir.Var) and of its results (integer expressions), nodes referring to others by index.
Our traces record the same map as lambda text; this converts between the two, for integer
expressions of + - * // % and min/max (what index maps use)."""

import ast
import json

_OPS = {
    ast.Add: "tir.Add",
    ast.Sub: "tir.Sub",
    ast.Mult: "tir.Mul",
    ast.FloorDiv: "tir.FloorDiv",
    ast.Mod: "tir.FloorMod",
}
_CALLS = {"min": "tir.Min", "max": "tir.Max"}
_SYMBOLS = {
    "tir.Add": (" + ", 1),
    "tir.Sub": (" - ", 1),
    "tir.Mul": (" * ", 2),
    "tir.FloorDiv": (" // ", 2),
    "tir.FloorMod": (" % ", 2),
}
_VERSION = "0.21.dev0"
MAX_TEXT = 100_000  # longest expression text read from a TVM index map (its lambda's bound)


def lambda_to_tvm(text: str, pairs: bool = False) -> str:
    """TVM's JSON text of the index map `lambda v0, v1: (e0, e1)` (`pairs`: the lambda returns
    [(begin, end), ...], flattened as annotate_buffer_access records it)."""
    fn = ast.parse(text, mode="eval").body
    if not isinstance(fn, ast.Lambda):
        raise ValueError(f"not a lambda: {text!r}")
    nodes = [{"type_key": ""}, None]
    names = [a.arg for a in fn.args.args]

    def add(node) -> int:
        nodes.append(node)
        return len(nodes) - 1

    def var(name: str) -> int:
        string = add({"type_key": "ffi.String", "repr_str": name})
        prim = add({"type_key": "ir.PrimType", "attrs": {"dtype": "int32"}})
        return add(
            {
                "type_key": "tir.Var",
                "attrs": {
                    "dtype": "int32",
                    "name": str(string),
                    "span": "null",
                    "type_annotation": str(prim),
                },
            }
        )

    params = {n: var(n) for n in names}

    def expr(e) -> int:
        if isinstance(e, ast.Name) and e.id in params:
            return params[e.id]
        if isinstance(e, ast.Constant) and type(e.value) is int:
            return add(
                {
                    "type_key": "ir.IntImm",
                    "attrs": {"dtype": "int32", "span": "null", "value": str(e.value)},
                }
            )
        if (
            isinstance(e, ast.UnaryOp)
            and isinstance(e.op, ast.USub)
            and isinstance(e.operand, ast.Constant)
            and type(e.operand.value) is int
        ):
            return expr(ast.Constant(-e.operand.value))
        if isinstance(e, ast.BinOp) and type(e.op) in _OPS:
            return binary(_OPS[type(e.op)], e.left, e.right)
        if (
            isinstance(e, ast.Call)
            and isinstance(e.func, ast.Name)
            and e.func.id in _CALLS
            and len(e.args) == 2
        ):
            return binary(_CALLS[e.func.id], *e.args)
        raise ValueError(f"index map expression not supported in TVM's JSON: {ast.unparse(e)!r}")

    def binary(key, a, b) -> int:
        ia, ib = expr(a), expr(b)
        return add(
            {
                "type_key": key,
                "attrs": {"a": str(ia), "b": str(ib), "dtype": "int32", "span": "null"},
            }
        )

    body = fn.body
    results = list(body.elts) if isinstance(body, (ast.Tuple, ast.List)) else [body]
    if pairs:
        results = [x for r in results for x in (r.elts if isinstance(r, ast.Tuple) else [r])]
    initial = add({"type_key": "ffi.Array", "data": [params[n] for n in names]})
    final = add({"type_key": "ffi.Array", "data": [expr(r) for r in results]})
    nodes[1] = {
        "type_key": "tir.IndexMap",
        "attrs": {
            "final_indices": str(final),
            "initial_indices": str(initial),
            "inverse_index_map": "null",
        },
    }
    return json.dumps(
        {"root": 1, "nodes": nodes, "b64ndarrays": [], "attrs": {"tvm_version": _VERSION}}
    )


def tvm_to_lambda(text: str, pairs: bool = False) -> str:
    """Our lambda text of TVM's JSON index map (`pairs`: results grouped as [(b, e), ...])."""
    try:
        graph = json.loads(text)
        nodes = graph["nodes"]
        root = nodes[graph["root"]]
        if root["type_key"] != "tir.IndexMap":
            raise ValueError(f"expected a tir.IndexMap, got {root['type_key']!r}")
        attrs = root["attrs"]
        params = [_var_name(nodes, k) for k in nodes[int(attrs["initial_indices"])]["data"]]
        results = [_expr(nodes, k, 0) for k in nodes[int(attrs["final_indices"])]["data"]]
    except (
        KeyError,
        IndexError,
        TypeError,
        AttributeError,
        RecursionError,
        json.JSONDecodeError,
    ) as e:
        raise ValueError(f"not a TVM index map: {type(e).__name__}: {e}") from None
    if pairs:
        body = "[" + ", ".join(f"({a}, {b})" for a, b in zip(results[::2], results[1::2])) + "]"
    else:
        body = "(" + "".join(r + ", " for r in results).rstrip(" ") + ")"
    return f"lambda {', '.join(params)}: {body}"


def _var_name(nodes, k) -> str:
    node = nodes[k]
    if node["type_key"] != "tir.Var":
        raise ValueError(f"an index map parameter is a {node['type_key']!r}")
    name = nodes[int(node["attrs"]["name"])]["repr_str"]
    if not name.isidentifier():
        raise ValueError(f"bad variable name {name!r}")
    return name


def _expr(nodes, root: int, parent: int) -> str:
    """Text of node `root`; `parent`: the precedence the context needs (parenthesised below
    it). The graph is data: a node shared by many parents is expanded once per precedence
    (memoized), a text past MAX_TEXT or a cycle is refused, and the walk keeps its own stack."""
    memo, open_nodes = {}, set()
    todo = [(root, parent, False)]
    while todo:
        k, prec_needed, ready = todo.pop()
        if (k, prec_needed) in memo:
            continue
        node = nodes[k]
        key = node["type_key"]
        if key == "tir.Var":
            memo[k, prec_needed] = _var_name(nodes, k)
            continue
        if key == "ir.IntImm":
            text = str(int(node["attrs"]["value"]))
            memo[k, prec_needed] = f"({text})" if text.startswith("-") and prec_needed else text
            continue
        a, b = int(node["attrs"]["a"]), int(node["attrs"]["b"])
        if key in ("tir.Min", "tir.Max"):
            need = [(a, 0), (b, 0)]
        elif key in _SYMBOLS:
            prec = _SYMBOLS[key][1]
            need = [(a, prec), (b, prec + 1)]
        else:
            raise ValueError(f"index map expression {key!r} not supported")
        if not ready:
            if any(c in open_nodes or c == k for c, _ in need):
                raise ValueError("the index map's expression graph has a cycle")
            open_nodes.add(k)
            todo.append((k, prec_needed, True))
            todo += [x + (False,) for x in need if x not in memo]
            continue
        open_nodes.discard(k)
        lhs, rhs = memo[need[0]], memo[need[1]]
        if len(lhs) + len(rhs) > MAX_TEXT:
            raise ValueError(f"the index map's expression is longer than {MAX_TEXT} characters")
        if key in ("tir.Min", "tir.Max"):
            memo[k, prec_needed] = f"{key[4:].lower()}({lhs}, {rhs})"
        else:
            text = lhs + _SYMBOLS[key][0] + rhs
            memo[k, prec_needed] = f"({text})" if prec < prec_needed else text
    return memo[root, parent]
