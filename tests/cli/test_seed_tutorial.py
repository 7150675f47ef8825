"""The seed tutorial: tests/data/mm_relu_schedule.py applied to tests/data/mm_relu.tir gives the
program printed in the tutorial (tests/data/mm_relu_scheduled.tir), which builds and matches
numpy. Speed is measured by `python tests/cli/test_seed_tutorial.py`, not asserted."""

import runpy
from pathlib import Path

import numpy as np

import tir_mlir
from tir_mlir.printer.equality import structural_equal

DATA = Path(__file__).parent.parent / "data"


def scheduled():
    mod = tir_mlir.load(str(DATA / "mm_relu.tir"))
    sch = tir_mlir.Schedule(mod)
    runpy.run_path(str(DATA / "mm_relu_schedule.py"))["schedule"](sch)
    return mod, sch


def test_tutorial_schedule_matches_printed_result():
    _, sch = scheduled()
    expected = tir_mlir.load(str(DATA / "mm_relu_scheduled.tir"))
    assert structural_equal(sch.mod, expected)
    assert "for ax0 in range(4):" in sch.mod.script()


def test_tutorial_schedule_builds_and_matches_numpy():
    _, sch = scheduled()
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal((128, 128)).astype("float32") for _ in range(2))
    c = np.zeros((128, 128), "float32")
    tir_mlir.build(sch.mod)["mm_relu"](a, b, c)
    np.testing.assert_allclose(c, np.maximum(a @ b, 0), rtol=1e-4, atol=1e-4)


if __name__ == "__main__":
    mod, sch = scheduled()
    args = [np.random.rand(128, 128).astype("float32") for _ in range(3)]
    times = {}
    for name, m in (("unscheduled", mod), ("scheduled", sch.mod)):
        lib = tir_mlir.build(m)
        times[name] = lib.time_evaluator("mm_relu", number=20, repeat=5)(*args).mean
        print(f"{name}: {times[name] * 1e3:.3f} ms")
    print(f"speedup: {times['unscheduled'] / times['scheduled']:.2f}x")
