"""`tir-mlir tune` on a model: a module of several functions (duplicates among them) tuned end
to end: the per-task table with weights and the end-to-end estimate, best_schedule.py run on
every function against the unscheduled program, --resume without redoing trials, and a
recorded torch-mlir model (linalg .mlir) imported and tuned."""

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from tir_mlir.cli import main
from tir_mlir.meta_schedule.database import SQLiteDatabase
from tir_mlir.meta_schedule.tune_model_progress import TaskRow, task_table

DATA = Path(__file__).parent.parent / "data" / "linalg"
FAST = ["--strategy", "replay-trace", "--seed", "0", "--timeout", "60", "--trials-per-iter", "2"]
MM = """
    @T.prim_func
    def {name}({a}: T.Buffer((32, 32), "float32"), {b}: T.Buffer((32, 32), "float32"), {c}: T.Buffer((32, 32), "float32")):
        for i, j, k in T.grid(32, 32, 32):
            with T.block("C"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    {c}[vi, vj] = T.float32(0)
                {c}[vi, vj] = {c}[vi, vj] + {a}[vi, vk] * {b}[vk, vj]
"""
RELU = """
    @T.prim_func
    def {name}(X: T.Buffer((256,), "float32"), Y: T.Buffer((256,), "float32")):
        for i in range(256):
            with T.block("Y"):
                vi = T.axis.remap("S", [i])
                Y[vi] = T.max(X[vi], T.float32(0))
"""
MODEL = "@I.ir_module\nclass Module:" + "".join(
    [
        MM.format(name="mm", a="A", b="B", c="C"),
        RELU.format(name="relu"),
        MM.format(name="mm_again", a="A", b="B", c="C"),
        MM.format(name="mm_renamed", a="P", b="Q", c="R"),
        RELU.format(name="relu_2"),
    ]
)


def _cli(*args):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


@pytest.fixture(scope="module")
def tuned(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("model")
    src = tmp / "model.tir"
    src.write_text(MODEL)
    work = tmp / "work"
    r = _cli("tune", str(src), "--trials", "4", "--work-dir", str(work), *FAST)
    return src, work, r


def test_task_table_format():
    rows = [TaskRow("mm", 3.0, 4, 0.002), TaskRow("relu", 2.0, 0)]
    assert task_table(rows) == (
        "task  weight  trials   best (ms)  weight x best (ms)\n"
        "mm         3       4      2.0000              6.0000\n"
        "relu       2       0           -                   -\n"
        "estimated end-to-end latency: 6.0000 ms (1 of 2 tasks without a valid time yet, "
        "not counted)"
    )


def test_model_is_tuned_as_weighted_tasks(tuned):
    src, work, r = tuned
    assert r.exit_code == 0, r.output
    assert "5 functions, 2 tasks: mm x3, relu x2" in r.output
    rows = [line.split() for line in r.output.splitlines() if line.startswith(("mm ", "relu "))]
    # each task's trial 0 is its unscheduled program; the gradient scheduler's first round
    # (2 candidates) goes to mm
    assert [row[:3] for row in rows[-2:]] == [["mm", "3", "3"], ["relu", "2", "1"]]
    summary = json.loads((work / "summary.json").read_text())
    assert [(t["task"], t["functions"], t["weight"], t["trials"]) for t in summary["tasks"]] == [
        ("mm", ["mm", "mm_again", "mm_renamed"], 3, 3),
        ("relu", ["relu", "relu_2"], 2, 1),
    ]
    relu = summary["tasks"][1]
    assert relu["best_is_unscheduled"] and relu["best_ms"] == relu["unscheduled_ms"]
    for t in summary["tasks"]:
        assert t["best_ms"] <= t["unscheduled_ms"]
        unscheduled_row = rows[-2 + summary["tasks"].index(t)][3].endswith("*")
        assert unscheduled_row == t["best_is_unscheduled"]
    if any(t["best_is_unscheduled"] for t in summary["tasks"]):
        assert "* the unscheduled program: no schedule measured was faster" in r.output
    assert summary["end_to_end_ms"] == pytest.approx(
        sum(t["weight"] * t["best_ms"] for t in summary["tasks"])
    )
    assert f"estimated end-to-end latency: {summary['end_to_end_ms']:.4f} ms" in r.output
    db = SQLiteDatabase(work / "database.sqlite")
    assert len(db) == 4
    db.close()


def _runs_every_function(src, script_path):
    for name in ("mm", "mm_again", "mm_renamed", "relu_2"):
        r = _cli("run", str(src), "--func", name, "--transform", str(script_path), "--check")
        assert r.exit_code == 0, r.output
        assert "check: OK (matches the unscheduled program, compiled)" in r.output


def test_best_schedule_says_which_tasks_stay_unscheduled(tuned):
    src, work, _ = tuned
    script = (work / "best_schedule.py").read_text()
    summary = json.loads((work / "summary.json").read_text())
    for t in summary["tasks"]:
        header = f"  # task {t['task']} (weight {t['weight']}): {t['best_ms']:.4f} ms"
        said = f"{header}\n  # the unscheduled program was the fastest: left unscheduled"
        assert (said in script) == t["best_is_unscheduled"], script
        assert (f'func_name="{t["task"]}"' in script) != t["best_is_unscheduled"], script
    _runs_every_function(src, work / "best_schedule.py")


def test_best_schedule_runs_every_function_as_the_unscheduled_program(tuned, tmp_path):
    """A schedule (the fastest of the sampled ones, whether or not it beat the unscheduled
    program) applied to every function of its task."""
    import tir_mlir
    from tir_mlir.meta_schedule.database.workload import Workload
    from tir_mlir.meta_schedule.extracted_task import extract_tasks
    from tir_mlir.meta_schedule.tune_model import model_schedule_script
    from tir_mlir.meta_schedule.unscheduled import is_unscheduled

    src, work, _ = tuned
    mod = tir_mlir.parse(src.read_text())
    db = SQLiteDatabase(work / "database.sqlite")
    records = db.get_all_tuning_records()
    db.close()
    extracted = extract_tasks(mod)
    best = {}
    for t in extracted:
        shash = Workload(t.mod).shash
        mine = [r for r in records if r.is_valid and r.workload.shash == shash]
        scheduled = [r for r in mine if not is_unscheduled(r.trace)]
        best[t.task_name] = min(scheduled or mine, key=lambda r: r.mean_sec)
    assert not is_unscheduled(best["mm"].trace)  # mm had a round of the search
    text = model_schedule_script(extracted, best, str(src), "llvm", None, mod=mod)
    for name in ("mm", "mm_again"):
        assert f'func_name="{name}"' in text
    # its caches would be named after P, Q, R: the trace of mm cannot name them
    assert "# mm_renamed: left unscheduled, the schedule of mm does not replay" in text
    script = tmp_path / "scheduled.py"
    script.write_text(text)
    _runs_every_function(src, script)


def test_resume_continues_without_redoing_trials(tuned, tmp_path):
    src, work, _ = tuned
    copy = tmp_path / "work"
    copy.mkdir()
    for f in ("database.sqlite",):
        (copy / f).write_bytes((work / f).read_bytes())
    r = _cli("tune", str(src), "--trials", "4", "--work-dir", str(copy), *FAST)
    assert r.exit_code == 1 and "pass --resume" in r.output
    r = _cli("tune", str(src), "--trials", "4", "--work-dir", str(copy), "--resume", *FAST)
    assert r.exit_code == 0, r.output
    assert "resuming: 4 trials" in r.output and "[5/" not in r.output
    r = _cli("tune", str(src), "--trials", "6", "--work-dir", str(copy), "--resume", *FAST)
    assert r.exit_code == 0, r.output
    assert "resuming: 4 trials" in r.output and "[6/6]" in r.output and "[7/" not in r.output
    db = SQLiteDatabase(copy / "database.sqlite")
    assert len(db) == 6
    db.close()


def test_linalg_model_is_imported_and_tuned(tmp_path):
    src = tmp_path / "layernorm.mlir"
    src.write_text((DATA / "layernorm.mlir").read_text())
    work = tmp_path / "work"
    r = _cli("tune", str(src), "--trials", "2", "--work-dir", str(work), *FAST)
    assert r.exit_code == 0, r.output
    assert "1 function, 1 task: main x1" in r.output
    assert "estimated end-to-end latency:" in r.output
    r = _cli("run", str(src), "--transform", str(work / "best_schedule.py"), "--check")
    assert r.exit_code == 0, r.output
    assert "check: OK (matches the unscheduled program, compiled)" in r.output


def test_recorded_resnet_block_matches_torch():
    """The ResNet basic block bench_model_tune.py tunes: imported, it computes torch's
    recorded output (conv, eval-mode batch norm, ReLU, the residual add)."""
    import numpy as np

    import tir_mlir

    data = np.load(DATA / "resnet_block.npz")
    mod = tir_mlir.from_linalg((DATA / "resnet_block.mlir").read_text(), "resnet_block.mlir")
    out = np.zeros_like(data["out0"])
    tir_mlir.build(mod)["main"](data["in0"], out)
    np.testing.assert_allclose(out, data["out0"], rtol=1e-4, atol=1e-5)
    assert (out >= 0).all() and (out > 0).any()
