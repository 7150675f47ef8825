"""Tuning you can watch: `tir-mlir tune` shows every measured candidate with the round's phase
(plain lines when stderr is not a terminal, nothing on a terminal of zero columns), keeps a
log in the work directory, draws every trial against the unscheduled time, writes a
best_schedule.py whose header command works from where tuning ran, and removes the database
of a run that stopped before its first trial; `ms.tune_tir` logs through `logging`."""

import fcntl
import logging
import os
import pty
import struct
import subprocess
import sys
import termios
import time

import pytest
from click.testing import CliRunner

import tir_mlir
from tir_mlir.cli import main
from tir_mlir.errors import BuildError
from tir_mlir.meta_schedule.database import TuningRecord
from tir_mlir.meta_schedule.tune_progress import Progress, display_mode
from workloads import matmul

MATMUL = matmul(32)
FAST = ["--strategy", "replay-trace", "--seed", "3", "--timeout", "60"]


def _tune(*args):
    return CliRunner().invoke(main, ["tune", *map(str, args)], catch_exceptions=False)


def test_piped_tune_prints_a_line_per_measured_candidate_and_a_usable_header(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # relative paths, as a user types them
    (tmp_path / "mm.tir").write_text(MATMUL)
    r = _tune("mm.tir", "--trials", 4, "--trials-per-iter", 2, "--work-dir", "out/w", *FAST)
    assert r.exit_code == 0, r.output
    err = r.stderr
    assert "\r" not in err
    lines = err.splitlines()
    measured = [line for line in lines if line.startswith("[")]
    assert [m.split("]")[0] for m in measured] == ["[1/4", "[2/4", "[3/4", "[4/4"]
    assert all(("ms; best " in m and "GFLOP/s" in m) or "failed" in m for m in measured)
    # trial 0 is the unscheduled program, then the rounds of the search
    assert lines[:2] == [
        "the unscheduled program: building 1 candidate",
        "the unscheduled program: measuring 1 candidate",
    ]
    assert lines[2].startswith("[1/4] ")
    assert lines[3:6] == [
        "round 1: generating candidates",
        "round 1: building 2 candidates",
        "round 1: measuring 2 candidates",
    ]
    assert "round 2: measuring 1 candidate" in lines

    log = (tmp_path / "out" / "w" / "tuning.log").read_text()
    assert log.count("candidate measured: ") == 4
    assert "INFO task main: the unscheduled program (build+run " in log
    assert "INFO task main: round 2, 1 candidates" in log

    header = (tmp_path / "out" / "w" / "best_schedule.py").read_text().splitlines()[2]
    assert header == (
        "# Apply it (from the folder tuning ran in): tir-mlir schedule mm.tir "
        "--transform out/w/best_schedule.py"
    )
    command = header.split(": tir-mlir ", 1)[1].split()
    applied = CliRunner().invoke(main, command)
    assert applied.exit_code == 0, applied.output
    assert "T.prim_func" in applied.output
    assert (tmp_path / "out" / "w" / "tuning_curve.png").stat().st_size > 10_000


def _pty_of(columns):
    main_fd, side_fd = pty.openpty()
    fcntl.ioctl(side_fd, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))
    return main_fd, os.fdopen(side_fd, "w")


def test_display_is_a_bar_on_a_terminal_and_nothing_on_a_zero_column_one():
    for columns, mode in ((80, "bar"), (0, "off")):
        main_fd, stream = _pty_of(columns)
        try:
            assert display_mode(stream) == mode
            if mode == "off":
                p = Progress(3, None, stream=stream)
                p.phase("main", "generating", 0)
                p.measured("main", [0.001], None)
                p.close()
                stream.flush()
                os.set_blocking(main_fd, False)
                with pytest.raises(BlockingIOError):
                    os.read(main_fd, 1024)  # nothing was written
        finally:
            stream.close()
            os.close(main_fd)


def test_plain_lines_count_failures_by_kind(capsys):
    p = Progress(3, 2 * 10**6, stream=sys.stderr, mode="lines")
    p.phase("main", "generating", 0)
    p.measured("main", [0.001], None)
    p.measured("main", None, "BuildError: no")
    p.measured("main", [0.0005, 0.0005], None)
    assert capsys.readouterr().err.splitlines() == [
        "round 1: generating candidates",
        "[1/3] 1.0000 ms; best 2.00 GFLOP/s",
        "[2/3] BuildError; best 2.00 GFLOP/s, failed: BuildError 1",
        "[3/3] 0.5000 ms; best 4.00 GFLOP/s, failed: BuildError 1",
    ]


def test_curve_shows_every_trial_failures_the_baseline_and_a_title():
    pytest.importorskip("matplotlib")
    from tir_mlir.meta_schedule.tune_report import curve_figure, machine

    now = time.time()
    records = [
        TuningRecord(None, None, secs, "llvm", None, error_msg=err, timestamp=now + k)
        for k, (secs, err) in enumerate(
            [([0.002], None), (None, "RunnerError: x"), ([0.001], None), ([0.003], None)]
        )
    ]
    fig = curve_figure(records, None, now - 5, "main (mm.tir) on llvm", baseline=0.004)
    assert fig._suptitle.get_text() == f"main (mm.tir) on llvm\n{machine()}"
    by_trial, by_time = fig.axes
    for ax in (by_trial, by_time):
        dots, crosses = ax.collections
        assert len(dots.get_offsets()) == 3 and len(crosses.get_offsets()) == 1
        assert ax.get_xlim()[0] == 0 and ax.get_ylim()[0] == 0
        assert [line.get_ydata()[0] for line in ax.lines if line.get_linestyle() == "--"] == [4.0]
    assert sorted(dots.get_offsets()[:, 0]) == [5.0, 7.0, 8.0]  # seconds since the start


def test_a_run_stopped_before_its_first_trial_leaves_no_database(tmp_path, monkeypatch):
    (tmp_path / "mm.tir").write_text(MATMUL)
    work = tmp_path / "w"

    def broken(*args, **kwargs):
        raise BuildError("the unscheduled program cannot serve as the reference: boom")

    monkeypatch.setattr("tir_mlir.meta_schedule.runner.make_reference", broken)
    r = _tune(tmp_path / "mm.tir", "--trials", 2, "--work-dir", work, *FAST)
    assert r.exit_code == 1 and "boom" in r.output
    assert not (work / "database.sqlite").exists() and not (work / "reference.npz").exists()
    monkeypatch.setitem(sys.modules, "distributed", None)
    r = _tune(
        tmp_path / "mm.tir",
        "--trials",
        2,
        "--work-dir",
        work,
        "--runner",
        "dask",
        "--address",
        "tcp://127.0.0.1:1",
    )
    assert r.exit_code == 1 and "pip install 'tir-mlir[distributed]'" in r.output
    assert not (work / "database.sqlite").exists()


def test_tune_tir_logs_through_logging(tmp_path, caplog):
    from tir_mlir import meta_schedule as ms

    caplog.set_level(logging.INFO, logger="tir_mlir.meta_schedule")
    ms.tune_tir(
        tir_mlir.parse(MATMUL),
        "llvm",
        str(tmp_path),
        max_trials_global=2,
        num_trials_per_iter=2,
        strategy="replay-trace",
        seed=1,
    )
    messages = [r.getMessage() for r in caplog.records if r.name == "tir_mlir.meta_schedule"]
    assert messages[:2] == ["task main: building 1 candidate", "task main: measuring 1 candidate"]
    assert messages[2].startswith("task main: the unscheduled program (build+run ")
    assert messages[3:6] == [
        "task main: generating candidates",
        "task main: building 1 candidate",
        "task main: measuring 1 candidate",
    ]
    assert messages[6].startswith("task main: round 1, 1 candidates")
    assert (tmp_path / "tuning.log").read_text().count("candidate measured: ") == 2


def test_tune_tir_shows_its_log_on_stderr_when_nothing_is_configured(tmp_path):
    code = (
        f"import tir_mlir\nfrom tir_mlir import meta_schedule as ms\n"
        f"ms.tune_tir(tir_mlir.parse({MATMUL!r}), 'llvm', {str(tmp_path)!r}, "
        f"max_trials_global=1, num_trials_per_iter=1, strategy='replay-trace', seed=1)\n"
    )
    r = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=600, check=False
    )
    assert r.returncode == 0, r.stderr
    lines = r.stderr.splitlines()
    assert lines[:2] == ["task main: building 1 candidate", "task main: measuring 1 candidate"]
    assert lines[2].startswith("task main: the unscheduled program (build+run ")
