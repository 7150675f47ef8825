"""`tir-mlir tune` end to end on a small matmul: the work directory, best_schedule.py applied
by `tir-mlir schedule` gives the recorded program, --resume, Ctrl-C."""

import signal
import subprocess
import sys
import time

import numpy as np
from click.testing import CliRunner

import tir_mlir
from tir_mlir.cli import main
from tir_mlir.meta_schedule.database import SQLiteDatabase
from tune_cli_options import FAST, MATMUL


def _tune(*args):
    return CliRunner().invoke(main, ["tune", *args], catch_exceptions=False)


def test_tune_resume_and_best_schedule(tmp_path):
    src = tmp_path / "mm.tir"
    src.write_text(MATMUL)
    work = tmp_path / "work"
    r = _tune(str(src), "--trials", "3", "--work-dir", str(work), *FAST)
    assert r.exit_code == 0, r.output
    assert "best: " in r.output and "after 3 trials" in r.output
    assert (work / "best_schedule.py").exists() and (work / "reference.npz").exists()
    mod = tir_mlir.parse(MATMUL)
    db = SQLiteDatabase(work / "database.sqlite")
    assert len(db) == 3
    best = db.query_best(mod, "llvm")
    recorded = db.query_ir_module(mod, "llvm")
    db.close()
    assert best is not None and best.error_msg is None
    script = (work / "best_schedule.py").read_text()
    assert "def schedule(sch):" in script and f"{best.mean_sec * 1e3:.4f} ms" in script

    out = tmp_path / "best.tir"
    r = CliRunner().invoke(
        main, ["schedule", str(src), "--transform", str(work / "best_schedule.py"), "-o", str(out)]
    )
    assert r.exit_code == 0, r.output
    assert out.read_text().strip() == recorded.script().strip()
    from tir_mlir.cli import _apply_schedule  # the same script, applied without printing

    tir_mlir.assert_structural_equal(_apply_schedule(mod, work / "best_schedule.py").mod, recorded)
    scheduled = tir_mlir.parse(out.read_text())
    a, b = np.random.rand(32, 32).astype("float32"), np.random.rand(32, 32).astype("float32")
    c = np.zeros((32, 32), "float32")
    tir_mlir.build(scheduled, "llvm")["main"](a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-5)

    r = _tune(str(src), "--trials", "5", "--work-dir", str(work), *FAST)
    assert r.exit_code == 1 and "pass --resume" in r.output
    r = _tune(str(src), "--trials", "5", "--work-dir", str(work), "--resume", *FAST)
    assert r.exit_code == 0, r.output
    assert "resuming: 3 trials" in r.output and "after 5 trials" in r.output
    assert len(SQLiteDatabase(work / "database.sqlite")) == 5


def test_tune_names_a_missing_function(tmp_path):
    src = tmp_path / "mm.tir"
    src.write_text(MATMUL)
    r = CliRunner().invoke(
        main, ["tune", str(src), "--func", "nope", "--work-dir", str(tmp_path / "w")]
    )
    assert r.exit_code == 1 and "error: no function named 'nope'" in r.output


def _sigint_default():
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_ctrl_c_stops_cleanly_and_keeps_what_was_measured(tmp_path):
    src = tmp_path / "mm.tir"
    src.write_text(MATMUL)
    work = tmp_path / "work"
    p = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tir_mlir.cli",
            "tune",
            str(src),
            "--trials",
            "1000",
            "--trials-per-iter",
            "2",
            "--work-dir",
            str(work),
            *FAST,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        # as from a terminal: a shell running the suite in the background (`pytest &`) ignores
        # SIGINT, children inherit that, and a Python started ignoring SIGINT never raises
        # KeyboardInterrupt
        preexec_fn=_sigint_default,
    )
    deadline = time.monotonic() + 300
    db_path = work / "database.sqlite"
    while time.monotonic() < deadline:
        if db_path.exists() and len(SQLiteDatabase(db_path)) >= 2:
            break
        time.sleep(0.5)
    p.send_signal(signal.SIGINT)
    out, _ = p.communicate(timeout=120)
    assert p.returncode == 130, out
    assert "interrupted:" in out and "--resume continues" in out
    n = len(SQLiteDatabase(db_path))
    assert 2 <= n < 1000
    assert (work / "best_schedule.py").exists()
