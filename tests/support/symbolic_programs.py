"""The symbolic programs of tests/data/symbolic/schedule_programs.py, each as TVMScript text and
as a module (parsed the way a .tir file is, not imported)."""

import re
from pathlib import Path

import tir_mlir
from tir_mlir.frontend.parser import build, parse_ast

DATA = Path(__file__).parent.parent / "data" / "symbolic"
SOURCES = {
    m.group(2): "@T.prim_func\n" + m.group(1)
    for m in re.finditer(
        r"@T.prim_func\n(def (\w+).*?)(?=\n\n\n|\Z)",
        (DATA / "schedule_programs.py").read_text(),
        re.S,
    )
}


def program(name: str) -> tir_mlir.IRModule:
    return build(parse_ast(SOURCES[name], f"{name}.tir"), f"{name}.tir")
