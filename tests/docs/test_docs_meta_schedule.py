"""docs/meta_schedule.md cannot rot: its examples run as written, in a scratch folder holding
the repository's examples/, with tuning budgets cut to a few trials (the examples' numbers are
what a user would tune with; the test checks that the calls work, not how fast the result is).

Fences: ```python (run in order, in one namespace: later examples use `mod`, `sch`, `ms` of
earlier ones), ```python tvm (needs TVM), ```python dask (needs a Dask cluster: run on a
LocalCluster started here, the scheduler's address replaced by its), ```sh (tir-mlir commands,
run with --trials cut), ```sh cluster (starts servers: not run), ```text (output).
"""

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

import tir_mlir.meta_schedule as ms
from tir_mlir.meta_schedule import task_tuning, tune

ROOT = Path(__file__).parent.parent.parent
TEXT = (ROOT / "docs" / "meta_schedule.md").read_text()
FENCE = re.compile(r"^```(\w+)((?: \w+)?)\n(.*?)^```$", re.MULTILINE | re.DOTALL)
BLOCKS = [(m[1] + m[2], m[3], TEXT.count("\n", 0, m.start()) + 2) for m in FENCE.finditer(TEXT)]
KNOWN = {"python", "python tvm", "python dask", "sh", "sh cluster", "text"}
TRIALS = 4


def _blocks(tag):
    return [(src, line) for t, src, line in BLOCKS if t == tag]


def test_every_fence_has_a_known_kind():
    assert {t for t, _, _ in BLOCKS} <= KNOWN, [
        (t, line) for t, _, line in BLOCKS if t not in KNOWN
    ]
    assert len(_blocks("python")) >= 4 and _blocks("sh")


def _cap_tuning(monkeypatch):
    real, real_tasks = tune.tune_tir, task_tuning.tune_tasks

    def capped(mod, target, work_dir, max_trials_global, **kwargs):
        return real(
            mod,
            target,
            work_dir,
            min(max_trials_global, TRIALS),
            **{**kwargs, "num_trials_per_iter": TRIALS},
        )

    def capped_tasks(*, max_trials_global, **kwargs):
        return real_tasks(
            max_trials_global=min(max_trials_global, TRIALS),
            **{**kwargs, "num_trials_per_iter": TRIALS},
        )

    monkeypatch.setattr(ms, "tune_tir", capped, raising=False)
    monkeypatch.setattr(ms, "tune_tasks", capped_tasks, raising=False)


def _run(src, line, namespace):
    exec(compile(src, f"meta_schedule.md:{line}", "exec"), namespace)  # noqa: S102 - the doc is ours


@pytest.fixture
def scratch(tmp_path, monkeypatch):
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    monkeypatch.chdir(tmp_path)
    _cap_tuning(monkeypatch)
    return tmp_path


def _python_examples(namespace):
    """Run the ```python examples in order; check what each one promises."""
    for src, line in _blocks("python"):
        _run(src, line, namespace)
        if "compile_tir" in src:  # the first: tuned, compiled, built
            assert namespace["lib"] is not None
        if "def tile_inner" in src:  # a rule written as a function, tuned with
            records = namespace["db"].get_all_tuning_records()
            assert any(r.is_valid for r in records)
            assert any(
                "sample_perfect_tile(loop=" in str(r.trace)
                and "n=2, max_innermost_factor=16" in str(r.trace)
                for r in records
            )
        if "MultiLevelTilingWithIntrin" in src:
            assert len(namespace["space"].sch_rules) == 2
        if "tune_tasks(" in src:
            assert namespace["sch"] is not None and len(namespace["db"].get_all_tuning_records())
        if "LocalRunner(" in src:
            result = namespace["future"].result()
            assert result.error_msg is None and result.run_secs


def test_python_examples(scratch, capsys):
    namespace = {}
    _python_examples(namespace)
    assert "RunnerResult(run_secs=[" in capsys.readouterr().out


@pytest.mark.tvm
def test_tvm_example_reads_our_log(scratch):
    """TVM's JSONDatabase reads the work directory the first example tuned, as it is."""
    namespace = {}
    _python_examples(namespace)
    ((src, line),) = _blocks("python tvm")
    _run(src, line, namespace)
    ours = ms.database.JSONDatabase(
        str(scratch / "work" / "database_workload.json"),
        str(scratch / "work" / "database_tuning_record.json"),
    )
    assert len(namespace["records"]) == len(ours) > 0


def test_dask_example(scratch):
    distributed = pytest.importorskip("distributed")
    namespace = {}
    _python_examples(namespace)
    ((src, line),) = _blocks("python dask")
    with distributed.LocalCluster(
        n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None
    ) as cluster:
        _run(src.replace('"tcp://10.0.0.1:8786"', repr(cluster.scheduler_address)), line, namespace)
    assert namespace["runner"] is not None


def _cut_trials(command: str) -> str:
    """`--trials N` -> a few trials, so that resuming adds a few more."""
    return re.sub(
        r"--trials (\d+)",
        lambda m: f"--trials {TRIALS * int(m[1]) // 256} --trials-per-iter {TRIALS}",
        command,
    )


def test_sh_examples(scratch):
    for src, line in _blocks("sh"):
        for command in src.splitlines():
            command = command.split("#")[0].strip()
            if not command:
                continue
            args = shlex.split(_cut_trials(command))
            assert args[0] == "tir-mlir", f"meta_schedule.md:{line}: {command}"
            r = subprocess.run(
                [sys.executable, "-m", "tir_mlir.cli", *args[1:]],
                check=False,
                capture_output=True,
                text=True,
                timeout=300,
            )
            assert r.returncode == 0, f"meta_schedule.md:{line}: {command}\n{r.stderr[-2000:]}"
    # the resumed run tuned more: 2 x TRIALS trials in all
    best = (scratch / "tune_mm" / "best_schedule.py").read_text()
    # the last command applies the best schedule: its loop kinds show in what it printed (a
    # few trials may keep the unscheduled program, which the first round measures too)
    if "sch.parallel(" in best:
        assert "T.parallel" in r.stdout
    if "sch.vectorize(" in best:
        assert "T.vectorized" in r.stdout
