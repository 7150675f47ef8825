"""Importing the TVMScript Python files of tests/data with TVM's or tir-mlir's `T`."""

import importlib.util
import sys


def load_python_source(
    source, tmp_path, imports: str, tag: str, line: str = "from tvm.script import tir as T"
):
    """Import the file `source` with its import `line` replaced by `imports`, as module
    `<tag>_<file stem>` (a copy in `tmp_path`)."""
    name = f"{tag}_{source.stem}"
    path = tmp_path / f"{name}.py"
    path.write_text(source.read_text().replace(line, imports))
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module
