"""Symbolic programs as tir-dialect IR (docs/symbolic.md): the views read symbolic bounds and
domains, the builders make them, mlir-opt reads the dialect, and the checker rejects broken
symbolic IR at its location."""

import re
import subprocess
from pathlib import Path

import mlir
import pytest
from mlir import ir
from tir_mlir.dialect.ops import Block, Loop

import tir_mlir
from tir_mlir.analysis.symbolic import SymExpr
from tir_mlir.frontend.mlir_input import parse_mlir
from tir_mlir.ir.ir_walk import walk

ROOT = Path(__file__).parent.parent.parent
DATA = ROOT / "tests" / "data" / "symbolic"
MLIR_OPT = next(
    Path(p) / "bin" / "mlir-opt" for p in mlir.__path__ if (Path(p) / "bin" / "mlir-opt").exists()
)


def _ops(mod, name):
    f = next(iter(mod.functions.values())).operation
    return [op for op in walk(f) if op.name == name]


def test_views_read_symbolic_bounds_and_domains():
    mod = tir_mlir.load(DATA / "matmul_n.mlir")
    with mod.module.context:
        i, j, _ = [Loop(op) for op in _ops(mod, "affine.for")]
        n = mod.module.body.operations[0].regions[0].blocks[0].arguments[3]
        assert isinstance(i.extent, SymExpr) and i.extent == SymExpr.symbol(n)
        assert i.min == 0 and i.constant_bounds and i.symbolic
        assert j.extent == 128 and type(j.extent) is int and not j.symbolic
        b = Block(_ops(mod, "tir.block")[0])
        assert len(b.dims) == 3 and b.symbols == [n]
        (lo, ext), *rest = b.domains
        assert lo == 0 and ext == SymExpr.symbol(n) and rest == [(0, 128), (0, 128)]
        assert i.iv_range()[1] == SymExpr.symbol(n) - 1


def test_builders_make_symbolic_loops_and_blocks():
    mod = tir_mlir.load(DATA / "matmul_n.mlir")
    with mod.module.context, ir.Location.unknown():
        func = mod.module.body.operations[0]
        body = func.regions[0].blocks[0]
        n = SymExpr.symbol(body.arguments[3])
        ip = ir.InsertionPoint.at_block_terminator(body)
        loop = Loop.build("x", (n + 3) // 4, ip=ip)
        assert loop.extent == (n + 3) // 4 and loop.min == 0
        assert "0 to affine_map<()[s0] -> ((s0 + 3) floordiv 4)>()[%arg3]" in str(func)
        d0 = ir.AffineDimExpr.get(0)
        blk = Block.build(
            "b",
            ["v"],
            ["S"],
            [(0, n * 2)],
            ir.AffineMap.get(1, 0, [d0]),
            [loop.iv],
            ip=ir.InsertionPoint.at_block_terminator(loop.body),
        )
        assert blk.dims == [loop.iv] and blk.symbols == [body.arguments[3]]
        assert blk.domains == [(0, n * 2)]
        assert blk.bindings.n_symbols == 1
        mod.module.operation.verify()


def test_static_loops_stay_ints():
    mod = tir_mlir.load(ROOT / "tests" / "data" / "mm_relu.tir")
    with mod.module.context:
        for op in _ops(mod, "affine.for"):
            assert type(Loop(op).extent) is int and type(Loop(op).min) is int
        for op in _ops(mod, "tir.block"):
            assert all(type(v) is int for d in Block(op).domains for v in d)
            assert Block(op).symbols == []


def test_mlir_opt_reads_symbolic_dialect():
    r = subprocess.run(
        [
            str(MLIR_OPT),
            f"--irdl-file={ROOT / 'dialect' / 'tir.irdl.mlir'}",
            str(DATA / "matmul_n.mlir"),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert r.returncode == 0, r.stderr
    assert '"tir.match_shape"' in r.stdout and '"tir.assume"' in r.stdout


def _broken(old, new):
    text = (DATA / "matmul_n.mlir").read_text()
    assert old in text
    return text.replace(old, new, 1)


@pytest.mark.parametrize(
    "old,new,message",
    [
        (
            (
                '    "tir.match_shape"(%A, %n) {shape = affine_map<()[s0] -> (s0, 128)>} : '
                "(memref<?x128xf32>, index) -> ()\n"
            ),
            "",
            "a buffer of dynamic shape memref<?x128xf32> needs a tir.match_shape",
        ),
        (
            "(%A, %n) {shape = affine_map<()[s0] -> (s0, 128)>}",
            "(%A, %n) {shape = affine_map<()[s0] -> (s0, 64)>}",
            "disagrees with the static sizes",
        ),
        (
            ") attributes {tir.prim_func}",
            ", %z: complex<f32>) attributes {tir.prim_func}",
            "a parameter must be a buffer",
        ),
    ],
)
def test_broken_symbolic_ir_is_rejected(old, new, message):
    with pytest.raises(tir_mlir.TIRParseError, match=re.escape(message)):
        parse_mlir(_broken(old, new), "sym.mlir")
