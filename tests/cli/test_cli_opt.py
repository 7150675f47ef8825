"""`tir-mlir opt` and the stage registry it shares with the lowering pipeline; `tir-mlir lower
--emit affine` of the scheduled mm_relu example holds a real parallel loop."""

from pathlib import Path

import pytest
from click.testing import CliRunner

from tir_mlir.cli import main
from tir_mlir.errors import BuildError
from tir_mlir.passes.lowering.opt import expand
from tir_mlir.passes.lowering.pipeline import STAGE_NAMES
from tir_mlir.passes.lowering.stages import names, stage

ROOT = Path(__file__).parent.parent.parent
SUM = ROOT / "tests" / "lowering" / "filecheck" / "tir-to-affine.mlir"


def test_registry_is_the_pipelines_source_of_names():
    for stages in STAGE_NAMES.values():
        for _, name in stages:
            assert name in names()
    for name in names():
        assert stage(name).name == name
    with pytest.raises(BuildError, match="unknown lowering stage 'nope'"):
        stage("nope")


def test_prefix_expands_to_the_checks_and_the_stages_up_to_it():
    cpu = [n for _, n in STAGE_NAMES["cpu"]]
    upto = cpu[: cpu.index("tir-to-affine") + 1]
    assert expand("cpu:affine") == ["static-bounds", "indirect-mark"] + upto
    assert expand("llvm:tir-to-affine") == expand("cpu:affine")
    assert expand("cpu:affine,affine-to-scf")[-1] == "affine-to-scf"
    with pytest.raises(BuildError, match="empty stage name"):
        expand("tir-to-affine,,affine-to-scf")


def test_list_stages_in_pipeline_order():
    r = CliRunner().invoke(main, ["opt", "--list-stages"])
    assert r.exit_code == 0, r.output
    lines = r.stdout.splitlines()
    cpu = [line.split()[0] for line in lines[1 : len(STAGE_NAMES["cpu"]) + 1]]
    assert cpu == [n for _, n in STAGE_NAMES["cpu"]]
    assert "  tir-to-affine  [affine]" in lines and "  prefetch-strided  [scf]" in lines


def test_opt_reads_stdin_and_writes_a_file(tmp_path):
    out = tmp_path / "out.mlir"
    r = CliRunner().invoke(
        main,
        ["opt", "-", "-p", "tir-to-affine,affine-to-scf", "-o", str(out)],
        input=SUM.read_text(),
    )
    assert r.exit_code == 0, r.output
    text = out.read_text()
    assert "scf.for" in text and "tir.block" not in text and "affine." not in text


def test_opt_without_stages_is_a_usage_error():
    r = CliRunner().invoke(main, ["opt", str(SUM)])
    assert r.exit_code == 2 and "-p STAGES" in r.output


def test_lower_emit_affine_holds_the_parallel_loop(tmp_path):
    """The reverse_compute_at + parallel(i) schedule of examples/mm_relu.tir: the affine stage
    has an affine.parallel (not a `tir.kind` attribute upstream tools drop)."""
    script = tmp_path / "schedule.py"
    script.write_text(
        (ROOT / "examples" / "mm_relu_schedule.py").read_text() + "    sch.parallel(i)\n"
    )
    for emit, op in (("affine", "affine.parallel"), ("scf", "scf.parallel")):
        r = CliRunner().invoke(
            main,
            [
                "lower",
                str(ROOT / "examples" / "mm_relu.tir"),
                "--transform",
                str(script),
                "--emit",
                emit,
            ],
        )
        assert r.exit_code == 0, r.output
        assert r.stdout.count(op) == 1 and "tir." not in r.stdout
