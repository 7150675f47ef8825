"""docs/bridge.md cannot rot: its linalg example imports to the TVMScript shown under it."""

import re
from pathlib import Path

import tir_mlir

DOC = (Path(__file__).parent.parent.parent / "docs" / "bridge.md").read_text()


def test_bridge_doc_example_imports_as_shown():
    src = re.search(r"```mlir\n(.*?)```", DOC, re.DOTALL)[1]
    shown = re.search(r"\$ tir-mlir import mm_bias_relu.mlir\n(.*?)```", DOC, re.DOTALL)[1]
    assert tir_mlir.from_linalg(src, "mm_bias_relu.mlir").script().strip() == shown.strip()
