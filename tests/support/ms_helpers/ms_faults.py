"""Build functions that fail on purpose, imported by the builder's worker processes (the tests
put this folder on PYTHONPATH): the function name of the candidate says how it fails."""

import os
import time

from tir_mlir.meta_schedule.builder.local_builder import build_artifact


def build_with_faults(mlir_text, target, path):
    if "@abort_build" in mlir_text:
        os.abort()  # what an LLVM assertion does to the process
    if "@hang_build" in mlir_text:
        time.sleep(3600)
    if "@slow_build" in mlir_text:
        time.sleep(8)
    return build_artifact(mlir_text, target, path)
