"""The benchmark's hand schedule (benchmarks/schedules/matmul_1024.py) at a small size: correct
numbers, and the code shape that makes it fast (a 4x64 accumulator tile compacted to the stack,
16 vector FMAs on registers in the k loop)."""

import sys
from pathlib import Path

import numpy as np
import pytest

import tir_mlir
from tir_mlir.passes.lowering.pipeline import emit_text

BENCH = Path(__file__).parent.parent.parent / "benchmarks"
sys.path.insert(0, str(BENCH))
from programs import matmul_tvmscript  # noqa: E402
from schedules.matmul_1024 import schedule  # noqa: E402


@pytest.fixture(scope="module")
def scheduled():
    sch = tir_mlir.Schedule(tir_mlir.parse(matmul_tvmscript(128)))
    schedule(sch)
    return sch.mod


@pytest.mark.parametrize("debug", [False, True])
def test_scheduled_matmul_matches_numpy(scheduled, debug):
    rng = np.random.default_rng(0)
    a, b = (rng.uniform(-1, 1, (128, 128)).astype("float32") for _ in range(2))
    c = np.full((128, 128), np.nan, "float32")
    tir_mlir.build(scheduled, debug=debug)["matmul"](a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)


def test_accumulator_tile_is_compacted_per_thread(scheduled):
    scf = emit_text(scheduled.module, "scf")
    assert "memref<128x128xf32>" in scf  # A, B, C
    assert scf.count("memref.alloca() : memref<4x64xf32>") == 1
    assert scf.index("scf.parallel") < scf.index("memref.alloca()")
    assert "memref.alloc()" not in scf
    assert scf.count("vector.load") >= 16 and "loop_vectorize" not in scf


def test_k_loop_keeps_accumulators_in_registers(scheduled):
    asm = emit_text(scheduled.module, "asm")
    # 16 register-to-register FMAs on zmm accumulators (no memory destination)
    fmas = [line for line in asm.splitlines() if "vfmadd231ps\t%zmm" in line]
    assert len(fmas) >= 16


@pytest.mark.tvm
def test_same_schedule_in_tvm(scheduled):
    import tvm

    sch = tvm.tir.Schedule(tvm.script.from_source(matmul_tvmscript(128)))
    schedule(sch)
    ours = tvm.script.from_source(scheduled.script())
    tvm.ir.assert_structural_equal(ours.body, sch.mod["main"].body, map_free_vars=True)
