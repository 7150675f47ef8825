"""Stage workspace-pool: heap intermediates of static size reuse a module global across calls
(claimed through an atomic busy flag, malloc when it is taken) instead of a malloc, and a page
fault per page, on every call. Numbers against numpy for two large intermediates live at once,
over many calls, from several threads at once, and for a buffer allocated in a parallel loop's
body (every thread claims the same site); the hand-off of the llvm-dialect stage still runs
under mlir-runner."""

import re
import subprocess
import threading

import numpy as np
import pytest

from tir_mlir.schedule.schedule import Schedule
from tir_mlir.frontend.parser import parse
from tir_mlir.passes.lowering import llvm_ir
from tir_mlir.passes.lowering.handoff import handoff_text
from tir_mlir.passes.lowering.pipeline import emit_text
from tir_mlir.runtime.build import build
from lowering_programs import buffer_chain

# X and Y: 128 KiB each (past the stack's 64 KiB per buffer: heap), both live while C is computed.
TWO_LIVE = """
@T.prim_func
def main(A: T.Buffer((128, 256), "float32"), C: T.Buffer((128, 256), "float32")):
    T.func_attr({"tir.noalias": True})
    X = T.alloc_buffer((128, 256), "float32")
    Y = T.alloc_buffer((128, 256), "float32")
    for i, j in T.grid(128, 256):
        with T.block("X"):
            vi, vj = T.axis.remap("SS", [i, j])
            X[vi, vj] = A[vi, vj] * T.float32(2)
    for i, j in T.grid(128, 256):
        with T.block("Y"):
            vi, vj = T.axis.remap("SS", [i, j])
            Y[vi, vj] = A[vi, 255 - vj] + T.float32(1)
    for i, j in T.grid(128, 256):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = X[vi, vj] * Y[127 - vi, vj]
"""

# X computed per batch inside C's parallel batch loop: a 128 KiB heap tile per iteration.
PER_BATCH = """
@T.prim_func
def main(A: T.Buffer((6, 128, 256), "float32"), C: T.Buffer((6, 128, 256), "float32")):
    T.func_attr({"tir.noalias": True})
    X = T.alloc_buffer((6, 128, 256), "float32")
    for b, i, j in T.grid(6, 128, 256):
        with T.block("X"):
            vb, vi, vj = T.axis.remap("SSS", [b, i, j])
            X[vb, vi, vj] = A[vb, vi, vj] * T.float32(3) + T.float32(1)
    for b, i, j in T.grid(6, 128, 256):
        with T.block("C"):
            vb, vi, vj = T.axis.remap("SSS", [b, i, j])
            C[vb, vi, vj] = X[vb, 127 - vi, 255 - vj]
"""


def _two_live(a):
    return (2 * a) * (a[:, ::-1] + 1)[::-1, :]


def _per_batch_schedule() -> Schedule:
    sch = Schedule(parse(PER_BATCH))
    b = sch.get_loops(sch.get_block("C"))[0]
    sch.compute_at(sch.get_block("X"), b)
    sch.parallel(b)
    return sch


def test_two_live_intermediates_get_two_globals():
    llvm = emit_text(parse(TWO_LIVE).module, "llvm-dialect")
    blocks = re.findall(r"llvm\.mlir\.global private @tir_mlir_workspace_\d+\(\) (.*)", llvm)
    assert len(blocks) == 2
    for b in blocks:
        assert "alignment = 64" in b and ": !llvm.array<128 x array<256 x f32>>" in b
    assert len(re.findall(r"@tir_mlir_workspace_\d+_busy\(0 : i64\)", llvm)) == 2
    # claim and release: 2 claims, 2 releases per path (alloc-check's failure path too)
    assert llvm.count("llvm.atomicrmw xchg") >= 4


@pytest.mark.parametrize("debug", [False, True], ids=["shared-library", "jit"])
def test_two_live_intermediates_many_calls(debug):
    lib = build(parse(TWO_LIVE), target="llvm", debug=debug)
    rng = np.random.default_rng(0)
    for _ in range(20):  # each call's inputs differ: a stale buffer would show
        a = rng.standard_normal((128, 256)).astype("float32")
        c = np.zeros_like(a)
        lib["main"](a, c)
        np.testing.assert_allclose(c, _two_live(a), rtol=1e-6)


def test_two_live_intermediates_from_threads():
    lib = build(parse(TWO_LIVE), target="llvm")
    errors = []

    def calls(seed):
        rng = np.random.default_rng(seed)
        try:
            for _ in range(40):
                a = rng.standard_normal((128, 256)).astype("float32")
                c = np.zeros_like(a)
                lib["main"](a, c)
                np.testing.assert_allclose(c, _two_live(a), rtol=1e-6)
        except AssertionError as e:
            errors.append(e)

    threads = [threading.Thread(target=calls, args=(s,)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]


def test_buffer_in_parallel_body():
    sch = _per_batch_schedule()
    scf = emit_text(sch.mod.module, "llvm-dialect")
    assert "tir_mlir_workspace_0_busy" in scf
    lib = build(sch.mod, target="llvm")
    rng = np.random.default_rng(1)
    for _ in range(10):
        a = rng.standard_normal((6, 128, 256)).astype("float32")
        c = np.zeros_like(a)
        lib["main"](a, c)
        np.testing.assert_allclose(c, (a * 3 + 1)[:, ::-1, ::-1], rtol=1e-6, atol=1e-6)


def test_many_sites():
    """48 buffers of 64 KiB in a chain, those past the stack's budget on the heap: every heap
    buffer gets its own global (pooling one erases its deallocs while the others are pending)."""
    n, size = 48, 16384
    src = buffer_chain(n, size)
    seen = {}
    llvm = emit_text(
        parse(src).module,
        "llvm-dialect",
        on_stage=lambda name, m: seen.setdefault(name, str(m)),
    )
    heap = seen["buffer-tags"].count("memref.alloc()")
    assert heap > n // 2
    globals_ = re.findall(r"llvm\.mlir\.global private @tir_mlir_workspace_\d+\(\)", llvm)
    assert len(globals_) == heap


# Fills A[i, j] = (i * 3 + j) mod 7, calls main and prints C's first row.
DRIVER = """
func.func private @printMemrefF32(memref<*xf32>)
func.func private @main(memref<128x256xf32>, memref<128x256xf32>)
func.func @driver() {
  %A = memref.alloc() : memref<128x256xf32>
  %C = memref.alloc() : memref<128x256xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c7 = arith.constant 7 : index
  %c128 = arith.constant 128 : index
  %c256 = arith.constant 256 : index
  scf.for %i = %c0 to %c128 step %c1 {
    scf.for %j = %c0 to %c256 step %c1 {
      %i3 = arith.muli %i, %c3 : index
      %s = arith.addi %i3, %j : index
      %m = arith.remui %s, %c7 : index
      %mi = arith.index_cast %m : index to i32
      %v = arith.sitofp %mi : i32 to f32
      memref.store %v, %A[%i, %j] : memref<128x256xf32>
    }
  }
  call @main(%A, %C) : (memref<128x256xf32>, memref<128x256xf32>) -> ()
  call @main(%A, %C) : (memref<128x256xf32>, memref<128x256xf32>) -> ()
  %row = memref.subview %C[0, 0] [1, 256] [1, 1] : memref<128x256xf32> to memref<256xf32, strided<[1]>>
  %u = memref.cast %row : memref<256xf32, strided<[1]>> to memref<*xf32>
  call @printMemrefF32(%u) : (memref<*xf32>) -> ()
  return
}
"""
HANDOFF = (
    "builtin.module(expand-strided-metadata,convert-scf-to-cf,finalize-memref-to-llvm,"
    "convert-arith-to-llvm,convert-index-to-llvm,convert-cf-to-llvm,convert-func-to-llvm,"
    "reconcile-unrealized-casts)"
)


def test_handoff_runs_under_mlir_runner(tmp_path):
    runner = llvm_ir.MLIR_BIN / "mlir-runner"
    if not runner.exists():
        pytest.skip(f"mlir-runner not found at {runner}")
    kernel = handoff_text(parse(TWO_LIVE).module, "llvm-dialect")
    assert "tir_mlir_workspace_" in kernel
    # the driver, lowered on its own, then placed beside the kernel in one llvm-dialect module
    src = tmp_path / "driver.mlir"
    src.write_text("module {" + DRIVER + "}\n")
    lowered = subprocess.run(
        [str(llvm_ir.MLIR_BIN / "mlir-opt"), str(src), f"--pass-pipeline={HANDOFF}"],
        capture_output=True,
        text=True,
    )
    assert lowered.returncode == 0, lowered.stderr
    drv = lowered.stdout.strip()
    # (the driver's declarations of main, malloc, ... are the kernel's functions already)
    defined = set(re.findall(r"llvm\.func (?:\w+ )*@(\w+)\(", kernel))
    body = "\n".join(
        line
        for line in drv[drv.index("{") + 1 : drv.rindex("}")].splitlines()
        if not (
            (m := re.match(r"\s*llvm\.func (?:\w+ )*@(\w+)\(", line))
            and m[1] in defined
            and not line.rstrip().endswith("{")
        )
    )
    program = kernel.rstrip()[: kernel.rstrip().rindex("}")] + body + "\n}\n"
    libs = ",".join(
        str(llvm_ir.MLIR_LIB / n) for n in ("libmlir_runner_utils.so", "libmlir_c_runner_utils.so")
    )
    run = subprocess.run(
        [str(runner), "-e", "driver", "-entry-point-result=void", "-O3", f"-shared-libs={libs}"],
        input=program,
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stderr
    i, j = np.meshgrid(np.arange(128), np.arange(256), indexing="ij")
    a = ((i * 3 + j) % 7).astype("float32")
    data = run.stdout.split("data =", 1)[1]
    got = [float(x) for x in data[data.index("[") + 1 : data.index("]")].split(",")]
    np.testing.assert_array_equal(got, _two_live(a)[0])
