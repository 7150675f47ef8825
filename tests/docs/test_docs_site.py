"""The documentation site (mkdocs.yml: the docs/ pages and the API reference generated from
the docstrings) builds with `mkdocs build --strict`: no broken link, anchor or reference."""

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent.parent


def test_mkdocs_build_strict(tmp_path):
    if importlib.util.find_spec("mkdocs") is None or importlib.util.find_spec("material") is None:
        pytest.skip("mkdocs-material is not installed (the test extra installs it)")
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "mkdocs",
            "build",
            "--strict",
            "-f",
            str(ROOT / "mkdocs.yml"),
            "-d",
            str(tmp_path / "site"),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert r.returncode == 0, r.stderr[-4000:]
    api = (tmp_path / "site" / "api" / "index.html").read_text()
    for name in ("decompose_reduction", "tensorize", "get_loops"):
        assert f'id="tir_mlir.schedule.schedule.Schedule.{name}"' in api
    assert (tmp_path / "site" / "porting_from_tvm" / "index.html").is_file()
