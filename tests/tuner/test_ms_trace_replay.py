"""A tuned trace rebuilds exactly the program that was measured: every stored record replayed
by `Trace.apply_to_schedule`, and the best one by `tir-mlir schedule --transform` from its
JSON and MLIR forms and from best_schedule.py, prints the module the builder was given
(postprocessors' parallel, vectorize and decompose_reduction included)."""

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from schedule_check import parse

import tir_mlir.meta_schedule as ms
from tir_mlir import Schedule
from tir_mlir.cli import main
from tir_mlir.meta_schedule.builder import LocalBuilder
from tir_mlir.meta_schedule.tune_report import schedule_script
from tir_mlir.schedule.mlir_script import trace_to_mlir

PROGRAMS = Path(__file__).parent.parent / "data" / "programs"
TARGET = "llvm -num-cores=2"


class RecordingBuilder(LocalBuilder):
    """A LocalBuilder that keeps the printed module of every candidate it builds, in order."""

    def __init__(self):
        super().__init__(max_workers=2)
        self.built = []

    def build(self, inputs):
        self.built += [i.mod.script() for i in inputs]
        return super().build(inputs)

    def build_async(self, inputs):
        self.built += [i.mod.script() for i in inputs]
        return super().build_async(inputs)


@pytest.mark.parametrize("name", ["matmul", "softmax", "conv2d_pad"])
def test_tuned_traces_replay_to_the_measured_program(tmp_path, name):
    path = PROGRAMS / f"{name}.tir"
    mod = parse(path.read_text())
    builder = RecordingBuilder()
    db = ms.tune_tir(
        mod,
        TARGET,
        str(tmp_path / "work"),
        max_trials_global=4,
        num_trials_per_iter=4,
        builder=builder,
        seed=0,
        num_tuning_cores=1,
        strategy=ms.search_strategy.EvolutionarySearch(population_size=16, genetic_num_iters=1),
    )
    # records read back from the JSON database (TVM's trace form), in commit order
    records = db.get_all_tuning_records()
    assert len(records) == len(builder.built) == 4
    # trial 0: the unscheduled program, the empty trace (no postprocessor ran on it)
    assert records[0].trace.insts == [] and builder.built[0] == mod.script()
    for record, measured in zip(records, builder.built):
        sch = Schedule(mod)
        record.trace.apply_to_schedule(sch)
        assert sch.mod.script() == measured
        if not record.trace.insts:
            continue
        assert "enter_postproc" in str(record.trace)
        # the postprocessors changed the program: a replay that stopped before them differs
        cut = Schedule(mod)
        record.trace.apply_to_schedule(cut, remove_postproc=True)
        assert cut.mod.script() != measured

    k, best = min(
        ((k, r) for k, r in enumerate(records) if r.is_valid), key=lambda kr: kr[1].mean_sec
    )
    # the best record, and the empty trace (whichever won) through the three forms too
    for k, record in {k: best, 0: records[0]}.items():
        measured = builder.built[k]
        (tmp_path / "best.json").write_text(json.dumps(record.trace.as_json()))
        (tmp_path / "best.mlir").write_text(trace_to_mlir(record.trace))
        (tmp_path / "best_schedule.py").write_text(
            schedule_script(record, str(path), "main", None, str(tmp_path / "best_schedule.py"))
        )
        for script in ("best.json", "best.mlir", "best_schedule.py"):
            r = CliRunner().invoke(
                main, ["schedule", str(path), "--transform", str(tmp_path / script)]
            )
            assert r.exit_code == 0, r.output
            assert r.output.rstrip("\n") == measured.rstrip("\n"), script
