"""The `affine` and `scf` stages are upstream MLIR (plus the dialect's `#tir.*` loop attributes,
which mlir-opt reads with the IRDL file): the shipped mlir-opt lowers them with the hand-off
pipeline and mlir-runner runs them (checked against numpy)."""

import subprocess

import numpy as np
import pytest

from tir_mlir.dialect import IRDL_PATH
from tir_mlir.passes.lowering import llvm_ir
from tir_mlir.passes.lowering.pipeline import emit_text

import lowering_programs as P

HANDOFF = (
    "builtin.module(convert-linalg-to-loops,lower-affine,expand-strided-metadata,"
    "convert-vector-to-scf,convert-scf-to-cf,convert-vector-to-llvm,"
    "finalize-memref-to-llvm,convert-math-to-llvm,convert-arith-to-llvm,"
    "convert-index-to-llvm,convert-ub-to-llvm,convert-cf-to-llvm,convert-func-to-llvm,"
    "reconcile-unrealized-casts)"
)

# Fills A[i, j] = (i * 7 + j) mod 5 - 2, B[i, j] = (i + 2 j) mod 3 - 1, calls the kernel and
# prints C.
MAIN = """
func.func private @printMemrefF32(memref<*xf32>)
func.func @main() {
  %A = memref.alloc() : memref<8x8xf32>
  %B = memref.alloc() : memref<8x8xf32>
  %C = memref.alloc() : memref<8x8xf32>
  affine.for %i = 0 to 8 {
    affine.for %j = 0 to 8 {
      %a = affine.apply affine_map<(d0, d1) -> ((d0 * 7 + d1) mod 5 - 2)>(%i, %j)
      %b = affine.apply affine_map<(d0, d1) -> ((d0 + d1 * 2) mod 3 - 1)>(%i, %j)
      %ai = arith.index_cast %a : index to i32
      %bi = arith.index_cast %b : index to i32
      %af = arith.sitofp %ai : i32 to f32
      %bf = arith.sitofp %bi : i32 to f32
      memref.store %af, %A[%i, %j] : memref<8x8xf32>
      memref.store %bf, %B[%i, %j] : memref<8x8xf32>
    }
  }
  call @matmul(%A, %B, %C) : (memref<8x8xf32>, memref<8x8xf32>, memref<8x8xf32>) -> ()
  %u = memref.cast %C : memref<8x8xf32> to memref<*xf32>
  call @printMemrefF32(%u) : (memref<*xf32>) -> ()
  return
}
"""


def _expected():
    i, j = np.meshgrid(np.arange(8), np.arange(8), indexing="ij")
    a = ((i * 7 + j) % 5 - 2).astype(np.float32)
    b = ((i + j * 2) % 3 - 1).astype(np.float32)
    return a @ b


@pytest.mark.parametrize("stage", ["affine", "scf"])
def test_stage_runs_under_mlir_runner(stage, tmp_path):
    text = emit_text(P.matmul(8).module, stage)
    # Append the driver inside the module.
    program = text.rstrip()[:-1] + MAIN + "}\n"
    src = tmp_path / f"{stage}.mlir"
    src.write_text(program)
    # (the internal stage keeps the dialect's #tir.* loop attributes: mlir-opt reads them with
    # the IRDL file; `tir-mlir lower --emit` prints the hand-off form, which has none)
    lowered = subprocess.run(
        [
            str(llvm_ir.MLIR_BIN / "mlir-opt"),
            f"--irdl-file={IRDL_PATH}",
            str(src),
            f"--pass-pipeline={HANDOFF}",
        ],
        capture_output=True,
        text=True,
    )
    assert lowered.returncode == 0, lowered.stderr
    libs = ",".join(
        str(llvm_ir.MLIR_LIB / n) for n in ("libmlir_runner_utils.so", "libmlir_c_runner_utils.so")
    )
    run = subprocess.run(
        [
            str(llvm_ir.MLIR_BIN / "mlir-runner"),
            "-e",
            "main",
            "-entry-point-result=void",
            "-O3",
            f"-shared-libs={libs}",
        ],
        input=lowered.stdout,
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stderr
    rows = [line.strip().strip(",").strip("[]") for line in run.stdout.splitlines()[1:]]
    got = np.array(
        [[float(x) for x in r.replace("[", "").replace("]", "").split(",")] for r in rows if r]
    )
    np.testing.assert_array_equal(got, _expected())
