"""docs/handoff.md's `mlir-opt | mlir-runner` recipe runs as written and prints the sum."""
import os
import re
import subprocess
import sys
from pathlib import Path

DOC = Path(__file__).parent.parent / "docs" / "handoff.md"


def test_handoff_recipe_runs(tmp_path):
    script = re.search(r"^```sh handoff\n(.*?)^```$", DOC.read_text(), re.M | re.S)[1]
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    r = subprocess.run(["bash", "-e", "-c", script], cwd=tmp_path, capture_output=True,
                       text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip().splitlines()[-1] == "[1,  2,  3,  4]"
