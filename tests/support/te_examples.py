"""The TE examples of tests/data/te/, run with only their import lines changed to tir_mlir's."""

import atexit
import builtins
import contextlib
import inspect
import io
import runpy
import shutil
import tempfile
from pathlib import Path
from unittest import mock

EXAMPLES = Path(__file__).parent.parent / "data" / "te"
_EXAMPLE_DIR = Path(tempfile.mkdtemp(prefix="tir_mlir_te_"))
atexit.register(shutil.rmtree, _EXAMPLE_DIR, ignore_errors=True)


def run_example(name: str) -> tuple:
    """(the example's globals, what it printed)."""
    source = (EXAMPLES / f"{name}.py").read_text()
    source = source.replace("import tvm\n", "import tir_mlir as tvm\n", 1)
    source = source.replace("from tvm import te\n", "from tir_mlir import te\n", 1)
    path = _EXAMPLE_DIR / f"{name}.py"  # kept while the process runs: the decorators
    path.write_text(source)  # and printers read the source again
    at_exit = []

    def fake_exit(code=0):
        """exit(0) loses runpy's globals (examples 6 and 7 end with it): keep them."""
        at_exit.append(dict(inspect.currentframe().f_back.f_globals))
        raise SystemExit(code)

    out = io.StringIO()
    with contextlib.redirect_stdout(out), mock.patch.object(builtins, "exit", fake_exit):
        try:
            g = runpy.run_path(str(path))
        except SystemExit:
            g = at_exit.pop()
    return g, out.getvalue()
