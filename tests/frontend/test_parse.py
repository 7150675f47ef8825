"""TVMScript -> tir dialect: the seed programs, each construct's MLIR form, locations, CLI."""

import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from mlir import ir

import tir_mlir
from tir_mlir.cli import main
from tir_mlir.dialect.buffers import scope_of
from tir_mlir.dialect.ops import Block, Loop

DATA = Path(__file__).parent.parent / "data"
SEEDS = sorted(DATA.glob("*.tir"))
CONSTRUCTS = DATA / "frontend" / "constructs.tir"


def walk(op):
    """All operations nested in op (pre-order), iteratively."""
    out, stack = [], [op.operation if hasattr(op, "operation") else op]
    while stack:
        o = stack.pop()
        out.append(o)
        for region in reversed(list(o.regions)):
            for block in reversed(list(region.blocks)):
                stack.extend(reversed([x.operation for x in block.operations]))
    return out


def ops_named(mod, name):
    return [o for o in walk(mod.module.operation) if o.name == name]


@pytest.mark.parametrize("path", SEEDS + [CONSTRUCTS], ids=lambda p: p.name)
def test_seed_programs_parse_and_verify(path):
    mod = tir_mlir.load(path)
    assert mod.module.operation.verify()
    assert len(mod) >= 1
    for o in walk(mod.module.operation):
        if o.name != "builtin.module":
            assert str(path) in str(o.location), (o.name, o.location)


def test_mm_relu_structure():
    mod = tir_mlir.load(DATA / "mm_relu.tir")
    assert list(mod) == ["mm_relu"]
    assert ir.StringAttr(mod.module.operation.attributes["tir.module_name"]).value == "MyModule"
    f = mod["mm_relu"]
    assert "tir.prim_func" in f.attributes
    attrs = ir.DictAttr(f.attributes["tir.func_attrs"])
    assert ir.StringAttr(attrs["global_symbol"]).value == "mm_relu"
    assert ir.BoolAttr(attrs["tir.noalias"]).value is True
    blocks = [Block(o) for o in ops_named(mod, "tir.block")]
    loops = [Loop(o) for o in ops_named(mod, "affine.for")]
    assert [b.name for b in blocks] == ["Y", "C"]
    assert [(l.name, l.extent, l.kind) for l in loops] == [
        ("i", 128, "serial"),
        ("j", 128, "serial"),
        ("k", 128, "serial"),
        ("i", 128, "serial"),
        ("j", 128, "serial"),
    ]
    y, c = blocks
    assert y.iter_names == ["vi", "vj", "vk"] and y.iter_types == ["S", "S", "R"]
    assert y.domains == [(0, 128)] * 3
    assert str(y.bindings) == "(d0, d1, d2) -> (d0, d1, d2)"
    assert y.dims == [l.iv for l in loops[:3]]
    assert y.init is not None and c.init is None
    init_ops = [o.operation.name for o in y.init.operations]
    assert init_ops == ["arith.constant", "memref.store", "gpu.yield"]
    assert [o.operation.name for o in c.body.operations] == [
        "memref.load",
        "arith.constant",
        "arith.maximumf",
        "memref.store",
        "gpu.yield",
    ]
    alloc = ops_named(mod, "memref.alloc")[0]
    assert ir.StringAttr(alloc.attributes["tir.name"]).value == "Y"
    assert str(alloc.attributes["tir.scope"]) == '#tir.scope<"global">'
    assert scope_of(alloc.attributes) == "global"
    assert str(alloc.results[0].type) == "memref<128x128xf32>"


def test_scheduled_binding_uses_dims_in_first_use_order():
    mod = tir_mlir.load(DATA / "mm_relu_scheduled.tir")
    y = Block(ops_named(mod, "tir.block")[0])
    loops = {Loop(o).name: Loop(o).iv for o in ops_named(mod, "affine.for")}
    assert str(y.bindings) == "(d0, d1, d2, d3) -> (d0, d1 * 4 + d2, d3)"
    assert y.dims == [loops["i"], loops["j_0"], loops["j_1"], loops["k"]]


def test_2021_block_makes_its_own_loops_when_none_enclose_it():
    mod = tir_mlir.load(DATA / "matmul_2021.tir")
    loops = [Loop(o) for o in ops_named(mod, "affine.for")]
    assert [(l.name, l.extent) for l in loops] == [("i", 128), ("j", 128), ("k", 128)]
    z = Block(ops_named(mod, "tir.block")[0])
    assert z.iter_types == ["S", "S", "R"] and z.dims == [l.iv for l in loops]
    handles = [
        ir.StringAttr(ir.DictAttr(a)["tir.param"]).value
        for a in ir.ArrayAttr(mod["matmul"].attributes["arg_attrs"])
    ]
    assert handles == ["x", "y", "z"]


def test_2021_block_binds_to_enclosing_loops():
    mod = tir_mlir.load(DATA / "conv2d_2021.tir")
    blocks = [Block(o) for o in ops_named(mod, "tir.block")]
    assert [b.name for b in blocks] == ["Apad", "B"]
    assert blocks[1].iter_types == ["S"] * 4 + ["R"] * 3
    assert blocks[1].domains[4:] == [(0, 16), (0, 3), (0, 3)]
    assert len(ops_named(mod, "affine.for")) == 11
    # tir.if_then_else is lazy: an scf.if with a result
    ifs = ops_named(mod, "scf.if")
    assert len(ifs) == 1 and str(ifs[0].results[0].type) == "f32"


def parse_body(body, params='A: T.Buffer((8, 8), "float32")'):
    return tir_mlir.parse(f"@T.prim_func\ndef f({params}):\n" + body)


def body_ops(mod):
    return [o.name for o in walk(mod["f"]) if o.name != "func.func"]


@pytest.mark.parametrize(
    "expr, expected",
    [
        ("A[i, 0] + 1.0", ["arith.addf"]),
        ("T.max(A[i, 0], 0.0)", ["arith.maximumf"]),
        ("T.exp(A[i, 0])", ["math.exp"]),
        ("T.sigmoid(A[i, 0])", ["tir.call"]),
        ('T.Cast("float32", i)', ["arith.index_cast", "arith.sitofp"]),
        ("T.Select(i < 4, 1.0, 2.0)", ["arith.cmpi", "arith.select"]),
        ("T.if_then_else(i < 4, A[i, 0], 2.0)", ["scf.if", "memref.load", "scf.yield"]),
        ("-A[i, 0]", ["arith.negf"]),
        ("A[i // 2, i % 2]", ["arith.floordivsi", "tir.call"]),
        ("A[T.truncdiv(i, 2), T.truncmod(i, 2)]", ["arith.divsi", "arith.remsi"]),
        ("T.float32(2 * 3 + 1)", []),
    ],
)
def test_expression_ops(expr, expected):
    mod = parse_body(f"    for i in range(8):\n        A[i, 1] = {expr}\n")
    names = body_ops(mod)
    pos = 0
    for e in expected:  # expected ops appear in this order
        assert e in names[pos:], (e, names)
        pos = names.index(e, pos) + 1
    consts = [o for o in walk(mod["f"]) if o.name == "arith.constant"]
    if expr.startswith("T.float32(2"):
        assert [str(c.attributes["value"]) for c in consts] == ["1 : index", "7.000000e+00 : f32"]


def test_literal_types_follow_their_use():
    mod = parse_body(
        "    for i in range(8):\n        B[i] = i + 1\n        A[i, 0] = A[i, 0] * 2\n",
        'A: T.Buffer((8, 8), "float32"), B: T.Buffer((8,), "int64")',
    )
    consts = [str(o.attributes["value"]) for o in walk(mod["f"]) if o.name == "arith.constant"]
    assert "1 : index" in consts and "2.000000e+00 : f32" in consts
    casts = [o for o in walk(mod["f"]) if o.name == "arith.index_cast"]
    assert [str(c.results[0].type) for c in casts] == ["i64"]


def test_let_statement_names_its_op():
    mod = parse_body(
        "    for i in range(8):\n        x = A[i, 0] * 2.0\n"
        "        y: T.float32 = x + x\n        A[i, 1] = y\n"
    )
    named = {
        ir.StringAttr(o.attributes["tir.let_name"]).value: o.name
        for o in walk(mod["f"])
        if "tir.let_name" in o.attributes
    }
    assert named == {"x": "arith.mulf", "y": "arith.addf"}


def test_where_becomes_integer_set_and_loop_attrs():
    mod = parse_body(
        '    for i in T.thread_binding(4, thread="threadIdx.x"):\n'
        '        for j in T.unroll(2, 6, annotations={"k": 1}):\n'
        '            with T.block("B"):\n'
        "                vi = T.axis.spatial((0, 16), i * 4 + j)\n"
        "                T.where(i * 4 + j < 10 and j >= 3)\n"
        '                T.block_attr({"tag": "x"})\n'
        "                A[vi // 8, vi % 8] = 0.0\n"
    )
    b = Block(ops_named(mod, "tir.block")[0])
    assert str(b.bindings) == "(d0, d1) -> (d0 * 4 + d1)"
    assert str(b.predicate) == "(d0, d1) : (d0 * -4 - d1 + 9 >= 0, d1 - 3 >= 0)"
    assert b.domains == [(0, 16)]
    assert ir.StringAttr(b.annotations["tag"]).value == "x"
    outer, inner = [Loop(o) for o in ops_named(mod, "affine.for")]
    assert (outer.kind, outer.thread) == ("thread_binding", "threadIdx.x")
    assert (inner.kind, inner.min, inner.extent) == ("unroll", 2, 4)
    assert ir.IntegerAttr(inner.annotations["k"]).value == 1


def test_explicit_root_block_is_unwrapped_and_block_alloc_stays_in_block():
    mod = parse_body(
        '    with T.block("root"):\n        B = T.alloc_buffer((4,), "int8")\n'
        '        with T.block("inner"):\n            C = T.alloc_buffer((2,))\n'
        "            C[0] = A[0, 0]\n"
    )
    assert [Block(o).name for o in ops_named(mod, "tir.block")] == ["inner"]
    allocs = ops_named(mod, "memref.alloc")
    assert allocs[0].parent.name == "func.func"
    assert allocs[1].parent.name == "tir.block"


def test_locations_point_at_constructs():
    src = (
        '@T.prim_func\ndef f(A: T.Buffer((8,), "float32")):\n'
        "    for i in range(8):\n"
        '        with T.block("B"):\n'
        "            vi = T.axis.spatial(8, i)\n"
        "            A[vi] = A[vi] * 2.0\n"
    )
    mod = tir_mlir.parse(src, filename="prog.tir")
    locs = {o.name: str(o.location) for o in walk(mod["f"])}
    assert locs["func.func"] == 'loc("prog.tir":2:1)'
    assert locs["affine.for"] == 'loc("prog.tir":3:5)'
    assert locs["tir.block"] == 'loc("prog.tir":4:9)'
    assert locs["memref.store"] == 'loc("prog.tir":6:13)'
    assert locs["memref.load"] == 'loc("prog.tir":6:21)'
    assert tir_mlir.parse(src).mlir(debug_info=True).count('"<string>"') > 0


def test_several_functions_in_a_module_and_imports():
    src = (
        "from tvm.script import ir as I\nfrom tvm.script import tir as T\n\n"
        "@I.ir_module\nclass M:\n"
        '    @T.prim_func\n    def a(A: T.Buffer((4,), "float32")):\n        A[0] = 1.0\n'
        '    @T.prim_func(private=True)\n    def b(B: T.Buffer[(4,), "int32"]) -> None:\n'
        "        B[0] = 1\n"
    )
    mod = tir_mlir.parse(src)
    assert list(mod) == ["a", "b"]


def test_deep_expressions_build_without_recursion():
    terms = " + ".join(["A[0]"] * 5000)
    mod = parse_body(f"    A[1] = {terms}\n", 'A: T.Buffer((4,), "float32")')
    assert len(ops_named(mod, "arith.addf")) == 4999
    parens = "(" * 3000 + "A[0]" + ")" * 3000
    assert ops_named(
        parse_body(f"    A[1] = {parens}\n", 'A: T.Buffer((4,), "float32")'), "memref.load"
    )


def test_cli_parse_emits_mlir_and_reports_errors(tmp_path):
    runner = CliRunner()
    r = runner.invoke(main, ["parse", str(DATA / "mm_relu.tir"), "--emit", "mlir"])
    assert r.exit_code == 0, r.output
    assert '"tir.block"' in r.output and "affine.for" in r.output
    out = tmp_path / "o.mlir"
    r = runner.invoke(main, ["parse", str(DATA / "mm_relu.tir"), "--emit", "mlir", "-o", str(out)])
    assert r.exit_code == 0 and "func.func @mm_relu" in out.read_text()
    bad = tmp_path / "bad.tir"
    bad.write_text('@T.prim_func\ndef f(A: T.Buffer((8,), "float32")):\n    A[0] = T.nope(1)\n')
    r = runner.invoke(main, ["parse", str(bad), "--emit", "mlir"])
    assert r.exit_code == 1
    assert re.search(rf"{re.escape(str(bad))}:3:12: error: unknown function 'T.nope'", r.output)
    assert "Traceback" not in r.output


@pytest.mark.parametrize("path", SEEDS + [CONSTRUCTS], ids=lambda p: p.name)
def test_printed_program_parses_back_to_a_fixed_point(path):
    text = tir_mlir.load(path).script()
    assert tir_mlir.parse(text).script() == text
