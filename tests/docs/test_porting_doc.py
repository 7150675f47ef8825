"""docs/porting_from_tvm.md: each TVM 0.21 script runs unchanged on TVM (when installed) and,
with only `import tvm` changed (to `import tir_mlir.tvm as tvm`), on tir-mlir; the first four
also with each import line changed to tir_mlir's module instead."""

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

DOC = Path(__file__).parent.parent.parent / "docs" / "porting_from_tvm.md"
SCRIPTS = re.findall(r"^```python port\n(.*?)^```$", DOC.read_text(), re.M | re.S)
ONE_LINE = ("import tvm\n", "import tir_mlir.tvm as tvm\n")
IMPORTS = [
    ("import tvm\n", "import tir_mlir as tvm\n"),
    ("from tvm.script import", "from tir_mlir.script import"),
    ("from tvm import te\n", "from tir_mlir import te\n"),
]


def ported(source: str, imports=IMPORTS) -> str:
    lines = source.splitlines(keepends=True)
    out = []
    for line in lines:
        for old, new in imports:
            if line.startswith(old):
                line = line.replace(old, new, 1)
        out.append(line)
    changed = [a for a, b in zip(lines, out) if a != b]
    assert all(a.startswith(("import", "from")) for a in changed)
    return "".join(out)


def _run(source, tmp_path, name):
    path = tmp_path / name
    path.write_text(source)
    return subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=600)


def test_doc_has_five_scripts():
    assert len(SCRIPTS) == 5


@pytest.mark.parametrize("k", range(5))
def test_script_runs_on_tir_mlir_with_one_line_changed(k, tmp_path):
    source = ported(SCRIPTS[k], [ONE_LINE])
    changed = [a for a, b in zip(SCRIPTS[k].splitlines(), source.splitlines()) if a != b]
    assert changed == ["import tvm"]
    out = _run(source, tmp_path, f"ours_{k}.py")
    assert out.returncode == 0, out.stderr[-3000:]


@pytest.mark.parametrize("k", range(4))
def test_script_runs_on_tir_mlir_with_its_imports_changed(k, tmp_path):
    out = _run(ported(SCRIPTS[k]), tmp_path, f"ours_{k}.py")
    assert out.returncode == 0, out.stderr[-3000:]


@pytest.mark.parametrize("k", range(5))
def test_script_runs_on_tvm(k, tmp_path):
    # Only look for TVM: importing it here would load its LLVM into this process beside ours.
    if importlib.util.find_spec("tvm") is None:
        pytest.skip("TVM 0.21 is not installed (the scripts' TVM run)")
    out = _run(SCRIPTS[k], tmp_path, f"tvm_{k}.py")
    assert out.returncode == 0, out.stderr[-3000:]
