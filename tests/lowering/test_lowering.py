"""Lowering stages: what each `--emit` stage contains, loop kinds, errors with locations."""

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from tir_mlir.cli import main
from tir_mlir.errors import BuildError
from tir_mlir.passes.lowering.pipeline import emit_text, emits

import lowering_programs as P

MM_RELU = str(Path(__file__).parent.parent / "data" / "mlir" / "mm_relu.mlir")


def test_emit_stage_names():
    assert emits("cpu") == ["tir", "affine", "scf", "llvm-dialect", "llvm-ir", "asm"]


def test_affine_stage_flattens_blocks_and_peels_init():
    text = emit_text(P.matmul(16).module, "affine")
    assert "tir.block" not in text and "gpu.yield" not in text and "tir.call" not in text
    # init runs once before the reduction loop, not under `if k == 0` inside it
    assert re.search(r"memref.store %cst, %arg2\[%arg3, %arg4\].*\n\s*affine.for %arg5", text)
    assert "affine.if" not in text


def test_affine_stage_keeps_predicate_as_affine_if():
    text = emit_text(P.split_where(37, 8).module, "affine")
    assert "affine.if" in text and "(d0, d1) : (d0 * -8 - d1 + 36 >= 0)" in text
    assert "math.exp" in text and "arith.floordivsi" in text  # sigmoid, floormod expanded


def test_scf_stage_honours_loop_kinds():
    # a vectorized loop of more than MAX_LANES iterations runs as 16-lane chunks (the loop
    # hint for LLVM: tests/lowering/test_codegen_vector_asm.py)
    text = emit_text(P.scale_2d(64, 96, ("parallel", "vectorized")).module, "scf")
    assert "scf.parallel" in text
    assert "vector.store" in text and "vector<16xf32>" in text
    assert "fastmath<contract>" in text and "llvm.emit_c_interface" in text
    assert "llvm.noalias" in text and "tir." not in text
    # T.unroll loops are unrolled in the IR (like TVM): four copies of the inner loop remain
    unrolled = emit_text(P.scale_2d(4, 48, ("unroll", "serial")).module, "scf")
    assert unrolled.count("scf.for") == 4 and "loop_unroll" not in unrolled


def test_vectorized_loop_reaches_avx512():
    asm = emit_text(P.scale_2d(64, 64, ("serial", "vectorized")).module, "asm")
    assert "zmm" in asm


def test_unknown_intrinsic_is_a_build_error_with_location():
    mod = P.elementwise(
        4, "f32", '%r = "tir.call"(%a) {callee = "frobnicate"} : (f32) -> f32 loc("ew.tir":4:7)'
    )
    with pytest.raises(BuildError, match="cannot lower intrinsic T.frobnicate") as info:
        emit_text(mod.module, "affine")
    assert str(info.value.loc) == "ew.tir:4:7"


def test_thread_binding_is_rejected_on_cpu():
    mod = P.scale_2d(4, 4, ("thread_binding", "serial"))
    with pytest.raises(BuildError, match="loop kind 'thread_binding' is not supported") as info:
        emit_text(mod.module, "scf")
    assert info.value.loc is not None and info.value.loc.file == "loops.tir"


def test_cli_lower_emits_each_stage(tmp_path):
    runner = CliRunner()
    for stage, marker in [
        ("tir", "with T.block"),
        ("mlir", "tir.block"),
        ("affine", "affine.for"),
        ("scf", "scf.for"),
        ("llvm-dialect", "llvm.func"),
        ("llvm-ir", "define void @mm_relu"),
        ("asm", "mm_relu:"),
    ]:
        out = tmp_path / f"{stage}.txt"
        r = runner.invoke(main, ["lower", MM_RELU, "--emit", stage, "-o", str(out)])
        assert r.exit_code == 0, r.output
        assert marker in out.read_text(), stage


def test_cli_run_check_and_bench():
    r = CliRunner().invoke(
        main,
        [
            "run",
            str(Path(__file__).parent.parent / "data" / "mlir" / "small_mm.mlir"),
            "--check",
            "--bench",
        ],
    )
    assert r.exit_code == 0, r.output
    assert "check: OK" in r.output
    assert re.search(r"median: [0-9.]+ ms, [0-9.]+ GFLOP/s", r.output)
