"""tir-dialect MLIR programs for the lowering/runtime/interpreter tests (hand-written in the
representation of docs/design.md, so these tests do not depend on the parser)."""

from mlir import ir

from tir_mlir.context import get_context
from tir_mlir.module import IRModule


def module(text: str) -> IRModule:
    with get_context():
        return IRModule(ir.Module.parse(text))


def _block(name, dims, iters, types, domains, bindings, body, init="", pred=""):
    args = ", ".join(f"%{v}: index" for v in iters)
    init_region = f"^bb0({args}):\n{init}\n gpu.yield" if init else ""
    names = ", ".join(f'"{v}"' for v in iters)
    kinds = ", ".join(f'"{t}"' for t in types)
    doms = ", ".join(f"[{a}, {b}]" for a, b in domains)
    pred = f", predicate = {pred}" if pred else ""
    return f'''"tir.block"({", ".join("%" + d for d in dims)}) ({{
^bb0({args}):
{body}
 gpu.yield
}}, {{
{init_region}
}}) {{name = "{name}", iter_names = [{names}], iter_types = [{kinds}], domains = [{doms}],
   bindings = {bindings}{pred}}} : ({", ".join("index" for _ in dims)}) -> () loc("{name}.tir":3:5)'''


def _func(name, params, body, noalias=True):
    ps = ", ".join(f'%{n}: {t} {{tir.name = "{n}"{extra}}}' for n, t, extra in params)
    fa = ', "tir.noalias" = true' if noalias else ""
    return f'''func.func @{name}({ps}) attributes {{tir.prim_func,
    tir.func_attrs = {{global_symbol = "{name}"{fa}}}}} {{
{body}
  return
}}'''


def matmul(n, in_t="f32", acc_t="f32", kinds=("serial", "serial", "serial")):
    """C[i, j] = sum_k A[i, k] * B[k, j]; ints are sign-extended to acc_t first."""
    a, c = f"memref<{n}x{n}x{in_t}>", f"memref<{n}x{n}x{acc_t}>"
    is_int = acc_t.startswith("i")
    ext = "arith.extsi" if is_int else "arith.extf"
    conv = (
        f"%x = {ext} %a : {in_t} to {acc_t}\n%y = {ext} %b : {in_t} to {acc_t}"
        if in_t != acc_t
        else ""
    )
    x, y = ("%x", "%y") if in_t != acc_t else ("%a", "%b")
    mul, add, zero = (
        ("arith.muli", "arith.addi", "0") if is_int else ("arith.mulf", "arith.addf", "0.0")
    )
    body = f"""%0 = memref.load %C[%vi, %vj] : {c}
%a = memref.load %A[%vi, %vk] : {a}
%b = memref.load %B[%vk, %vj] : {a}
{conv}
%3 = {mul} {x}, {y} : {acc_t}
%4 = {add} %0, %3 : {acc_t}
memref.store %4, %C[%vi, %vj] : {c}"""
    init = f"%z = arith.constant {zero} : {acc_t}\nmemref.store %z, %C[%vi, %vj] : {c}"
    blk = _block(
        "C",
        ["i", "j", "k"],
        ["vi", "vj", "vk"],
        "SSR",
        [(0, n)] * 3,
        "affine_map<(d0, d1, d2) -> (d0, d1, d2)>",
        body,
        init,
    )
    loops = _nest([("i", n, kinds[0]), ("j", n, kinds[1]), ("k", n, kinds[2])], blk)
    return module(_func("matmul", [("A", a, ""), ("B", a, ""), ("C", c, "")], loops))


def _nest(loops, inner):
    text = inner
    for name, extent, kind in reversed(loops):
        text = (
            f"affine.for %{name} = 0 to {extent} {{\n{text}\n}} "
            f'{{tir.name = "{name}", tir.kind = #tir.for_kind<"{kind}">}} loc("loops.tir":2:{len(name)})'
        )
    return text


def elementwise(n, t, body, out_t=None, kinds=("serial",), extra_in="", extra_out=""):
    """B[i] = body(A[i]) where body is MLIR text reading %a and defining %r."""
    out_t = out_t or t
    a, b = f"memref<{n}x{t}>", f"memref<{n}x{out_t}>"
    blk = _block(
        "B",
        ["i"],
        ["vi"],
        "S",
        [(0, n)],
        "affine_map<(d0) -> (d0)>",
        f"%a = memref.load %A[%vi] : {a}\n{body}\nmemref.store %r, %B[%vi] : {b}",
    )
    return module(
        _func("ew", [("A", a, extra_in), ("B", b, extra_out)], _nest([("i", n, kinds[0])], blk))
    )


def scale_2d(m, n, kinds):
    """B[i, j] = A[i, j] * 2 + 1 with loop kinds for (i, j)."""
    t = f"memref<{m}x{n}xf32>"
    blk = _block(
        "B",
        ["i", "j"],
        ["vi", "vj"],
        "SS",
        [(0, m), (0, n)],
        "affine_map<(d0, d1) -> (d0, d1)>",
        f"""%a = memref.load %A[%vi, %vj] : {t}
%two = arith.constant 2.0 : f32
%one = arith.constant 1.0 : f32
%p = arith.mulf %a, %two : f32
%r = arith.addf %p, %one : f32
memref.store %r, %B[%vi, %vj] : {t}""",
    )
    return module(
        _func(
            "scale",
            [("A", t, ""), ("B", t, "")],
            _nest([("i", m, kinds[0]), ("j", n, kinds[1])], blk),
        )
    )


def split_where(n, factor):
    """B[v] = sigmoid(A[v]) + floormod(v - 5, 3) with v = io * factor + ii, T.where(v < n),
    over a split loop that overshoots n: checks bindings, predicate and intrinsics."""
    outer = -(-n // factor)
    a = f"memref<{n}xf32>"
    body = f"""%a = memref.load %A[%v] : {a}
%s = "tir.call"(%a) {{callee = "sigmoid"}} : (f32) -> f32
%vi = arith.index_cast %v : index to i32
%c5 = arith.constant 5 : i32
%c3 = arith.constant 3 : i32
%d = arith.subi %vi, %c5 : i32
%m = "tir.call"(%d, %c3) {{callee = "floormod"}} : (i32, i32) -> i32
%mf = arith.sitofp %m : i32 to f32
%r = arith.addf %s, %mf : f32
memref.store %r, %B[%v] : {a}"""
    blk = _block(
        "B",
        ["io", "ii"],
        ["v"],
        "S",
        [(0, n)],
        f"affine_map<(d0, d1) -> (d0 * {factor} + d1)>",
        body,
        pred=f"affine_set<(d0, d1) : ({n - 1} - d0 * {factor} - d1 >= 0)>",
    )
    return module(
        _func(
            "where",
            [("A", a, ""), ("B", a, "")],
            _nest([("io", outer, "serial"), ("ii", factor, "serial")], blk),
        )
    )


def out_of_bounds(n):
    """B[i + 1] = A[i]: the last iteration writes past the end of B (at oob.tir:7:9)."""
    t = f"memref<{n}xf32>"
    body = f"""%a = memref.load %A[%vi] : {t} loc("oob.tir":7:16)
%c1 = arith.constant 1 : index
%w = arith.addi %vi, %c1 : index
memref.store %a, %B[%w] : {t} loc("oob.tir":7:9)"""
    blk = _block("B", ["i"], ["vi"], "S", [(0, n)], "affine_map<(d0) -> (d0)>", body)
    return module(_func("shift", [("A", t, ""), ("B", t, "")], _nest([("i", n, "serial")], blk)))


def buffer_chain(n: int, size: int, index: str = "vi") -> str:
    """A(size) -> X0 -> ... -> X{n-1} -> B, each X{k}[vi] = previous[`index`] + 1: n
    intermediate buffers of `size` floats (many allocation sites, many stack or heap buffers)."""
    lines = [
        "@T.prim_func",
        f'def main(A: T.Buffer(({size},), "float32"), B: T.Buffer(({size},), "float32")):',
    ]
    lines += [f'    X{k} = T.alloc_buffer(({size},), "float32")' for k in range(n)]
    prev = "A"
    for k in range(n):
        lines += [
            f"    for i in range({size}):",
            f'        with T.block("X{k}"):',
            f"            vi = T.axis.spatial({size}, i)",
            f"            X{k}[vi] = {prev}[{index}] + T.float32(1)",
        ]
        prev = f"X{k}"
    lines += [
        f"    for i in range({size}):",
        '        with T.block("B"):',
        f"            vi = T.axis.spatial({size}, i)",
        f"            B[vi] = {prev}[vi]",
    ]
    return "\n".join(lines) + "\n"
