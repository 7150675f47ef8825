"""The `tir` MLIR dialect: its IRDL definition and Python views of its ops.

`tir.irdl.mlir` is the single source of truth; `ops.py` holds thin views that read and
build the ops it declares, `buffers.py` reads the attributes of buffers (memref values).
"""

from pathlib import Path

IRDL_PATH = Path(__file__).with_name("tir.irdl.mlir")

# IRDL ops (LLVM 22) cannot be terminators, so every region of a `tir` op ends with this
# borrowed upstream op: Pure, variadic, with no parent restriction. Hidden by builders and printer.
TERMINATOR = "gpu.yield"
