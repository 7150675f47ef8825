"""What reaches the machine for vectorized schedules: FileCheck over the emitted LLVM IR and
assembly (`--emit llvm-ir|asm`, built for the host CPU like the JIT). The assembly checks need
a host with FMA and 256- or 512-bit vectors (ymm/zmm); the numbers are checked in
test_lowering_vectorize.py."""

import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

import tir_mlir
from tir_mlir import Schedule
from tir_mlir.passes.lowering.cpu_target import cpu_target
from tir_mlir.passes.lowering.llvm_ir import optimize
from tir_mlir.passes.lowering.pipeline import emit_text

from filecheck import filecheck
from shared_programs import QUARTER_COLUMNS_64


def _host_has(*flags) -> bool:
    cpuinfo = Path("/proc/cpuinfo")
    text = cpuinfo.read_text() if cpuinfo.exists() else ""
    return all(f" {f}" in text for f in flags)


needs_fma = pytest.mark.skipif(not _host_has("fma", "avx2"), reason="host without FMA/AVX2")

MATMUL = """
@T.prim_func
def main(A: T.Buffer((N, 64), "float32"), B: T.Buffer((64, N), "float32"),
         C: T.Buffer((64, N), "float32")):
    T.func_attr({"tir.noalias": True})
    for i, j, k in T.grid(64, N, 64):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
"""
# Vector FMAs on 256/512-bit registers, and no scalar arithmetic (a scalar loop would have it).
VECTOR_FMA = """
CHECK: vfmadd{{[0-9]+}}ps {{.*}}%{{[yz]}}mm
"""
# k inside j1: one vector accumulator over k whose B rows stay in L1 waits on its chain: mul + add (the add
# alone on the chain) instead of an FMA (affine_to_scf.py), still vector code. (k between j0 and the
# vectorized j1 moves outside j0, loop-interchange: the order i,k,j0,j1 and its FMAs.)
VECTOR_MUL_ADD = """
CHECK: vaddps {{.*}}%{{[yz]}}mm
"""
NO_SCALAR = """
CHECK-NOT: {{vfmadd[0-9]+ss|vaddss|vmulss}}
"""


def _matmul(n, order):
    sch = Schedule(tir_mlir.parse(MATMUL.replace("N", str(n))))
    i, j, k = sch.get_loops(sch.get_block("C"))
    j0, j1 = sch.split(j, factors=[None, 16])
    loops = {"i": i, "j0": j0, "j1": j1, "k": k}
    sch.reorder(*[loops[x] for x in order.split(",")])
    sch.vectorize(j1)
    return sch


@needs_fma
@pytest.mark.parametrize("order", ["i,k,j0,j1", "i,j0,k,j1", "i,j0,j1,k"])
def test_reduction_init_inside_the_vectorized_loop_gives_vector_code(order):
    asm = emit_text(_matmul(64, order).mod.module, "asm")
    filecheck(asm, VECTOR_MUL_ADD if order == "i,j0,j1,k" else VECTOR_FMA)
    filecheck(asm, NO_SCALAR)


@needs_fma
def test_non_dividing_split_uses_masked_vector_memory_ops():
    sch = _matmul(40, "i,k,j0,j1")
    filecheck(
        emit_text(sch.mod.module, "llvm-ir"),
        """
CHECK: call i1 @llvm.vector.reduce.or.v16i1
CHECK: call <16 x float> @llvm.masked.load.v16f32
CHECK: call void @llvm.masked.store.v16f32
""",
    )
    asm = emit_text(sch.mod.module, "asm")
    filecheck(asm, VECTOR_FMA)
    filecheck(asm, NO_SCALAR)


@needs_fma
def test_a_loop_left_to_llvm_keeps_its_vectorize_request():
    """`vj // 4` is not linear in the lane: the loop reaches LLVM with a width hint, and
    `unroll disable` keeps LLVM's full unroll from running first (the code was scalar)."""
    sch = Schedule(tir_mlir.parse(QUARTER_COLUMNS_64))
    _, j = sch.get_loops(sch.get_block("B"))
    sch.vectorize(sch.split(j, factors=[None, 16])[1])
    filecheck(
        emit_text(sch.mod.module, "llvm-ir"),
        """
CHECK: br {{.*}} !llvm.loop [[LOOP:![0-9]+]]
CHECK: [[LOOP]] = distinct !{[[LOOP]], [[ENABLE:![0-9]+]], [[WIDTH:![0-9]+]], [[UNROLL:![0-9]+]]}
CHECK-DAG: [[ENABLE]] = !{!"llvm.loop.vectorize.enable", i1 true}
CHECK-DAG: [[WIDTH]] = !{!"llvm.loop.vectorize.width", i32 16}
CHECK-DAG: [[UNROLL]] = !{!"llvm.loop.unroll.disable"}
""",
    )
    filecheck(
        emit_text(sch.mod.module, "asm"),
        """
CHECK: vmulps {{.*}}%{{[yz]}}mm
CHECK: vmovups %{{[yz]}}mm{{[0-9]+}}, {{.*}}(%
""",
    )


ELEMENTWISE = """
@T.prim_func
def main(A: T.Buffer((64, 1000), "float32"), B: T.Buffer((64, 1000), "float32"),
         C: T.Buffer((64, 1000), "float32")):
    T.func_attr({"tir.noalias": True})
    for i, j in T.grid(64, 1000):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = T.max(A[vi, vj] + B[vi, vj], T.float32(0))
"""


@needs_fma
def test_parallel_elementwise_with_guard_is_vector_code_in_the_outlined_body():
    sch = Schedule(tir_mlir.parse(ELEMENTWISE))
    i, j = sch.get_loops(sch.get_block("C"))
    sch.vectorize(sch.split(j, factors=[None, 16])[1])
    sch.parallel(i)
    filecheck(
        emit_text(sch.mod.module, "asm"),
        """
CHECK: main..omp_par:
CHECK-NOT: vaddss
CHECK: vaddps {{.*}}%{{[yz]}}mm
CHECK-NOT: vaddss
CHECK: .size main..omp_par
""",
    )


ROW_MAX = """
@T.prim_func
def main(A: T.Buffer((64, 1024), "float32"), M: T.Buffer((64,), "float32"),
         E: T.Buffer((64, 1024), "float32")):
    T.func_attr({"tir.noalias": True})
    for i, k in T.grid(64, 1024):
        with T.block("M"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                M[vi] = T.float32(-3.4e38)
            M[vi] = T.max(M[vi], A[vi, vk])
    for i, k in T.grid(64, 1024):
        with T.block("E"):
            vi, vk = T.axis.remap("SS", [i, k])
            E[vi, vk] = T.exp(A[vi, vk] - M[vi])
"""


@needs_fma
def test_float_max_is_one_instruction_and_exp_binds_to_libm():
    # T.max is TVM's select: one vmaxss per element (vmaxps for rows side by side:
    # loop-interchange runs several rows' chains at once), not IEEE maximum's
    # compare/unordered/blend chain; the f32 exp is inline (vector_exp.py); a float64 exp
    # comes from libm's current symbol version.
    row_max = ROW_MAX[
        : ROW_MAX.index('    for i, k in T.grid(64, 1024):\n        with T.block("E")')
    ]
    filecheck(
        emit_text(tir_mlir.parse(row_max).module, "asm"),
        """
CHECK-NOT: vcmpunord
CHECK: vmax{{ss|ps}}
CHECK-NOT: vcmpunord
""",
    )
    assert "expf" not in emit_text(tir_mlir.parse(ROW_MAX).module, "asm")
    f64 = Schedule(
        tir_mlir.parse(
            ROW_MAX.replace('"float32"', '"float64"').replace("T.float32(", "T.float64(")
        )
    )
    lib = tir_mlir.build(f64.mod)
    readelf, path = shutil.which("readelf"), getattr(lib.backend, "path", None)
    if readelf and path:  # (no path: built in the JIT, without a C compiler to link)
        syms = subprocess.run(
            [readelf, "-W", "--dyn-syms", str(path)], capture_output=True, text=True
        ).stdout
        assert "exp@GLIBC" in syms, syms


def test_local_buffers_are_cache_line_aligned():
    sch = Schedule(tir_mlir.parse(ROW_MAX))
    e = sch.get_block("E")
    local = sch.cache_write(e, 0, "local")
    sch.reverse_compute_at(local, sch.get_loops(e)[0])
    text = emit_text(sch.mod.module, "llvm-dialect")
    allocs = [line for line in text.splitlines() if "llvm.alloca" in line]
    assert allocs and all("alignment = 64" in line for line in allocs), allocs


GELU_TILES = """
@T.prim_func
def main(A: T.Buffer((12, 24), "DT"), B: T.Buffer((12, 24), "DT")):
    T.func_attr({"tir.noalias": True})
    for i, j in T.grid(12, 24):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.DT(0.5) * (T.DT(1) + T.erf(A[vi, vj] * T.DT(0.70710678)))
"""


def _gelu_tiles(dtype: str, lanes: int):
    """3 x `lanes` stack tiles of A and B at each tile of the output, in parallel (seed
    2004163578 case 0271's shape: cache_read and cache_write "local" at the fused tile loop,
    both vectorized across the tile's row)."""
    sch = Schedule(tir_mlir.parse(GELU_TILES.replace("DT", dtype)))
    b = sch.get_block("B")
    i, j = sch.get_loops(b)
    i0, i1 = sch.split(i, factors=[None, 3])
    j0, j1 = sch.split(j, factors=[None, lanes])
    sch.reorder(i0, j0, i1, j1)
    tile = sch.fuse(i0, j0)
    read = sch.cache_read(b, 0, "local")
    sch.compute_at(read, tile)
    write = sch.cache_write(b, 0, "local")
    sch.reverse_compute_at(write, tile)
    sch.vectorize(sch.get_loops(write)[-1])
    sch.parallel(tile)
    sch.vectorize(j1)
    return sch


@pytest.mark.parametrize(
    "dtype, lanes, align",
    [
        ("float32", 6, 8),
        ("float32", 3, 4),
        ("float32", 12, 16),
        ("float64", 6, 16),
        ("float32", 8, 64),
    ],
)
def test_a_stack_tile_read_in_odd_lane_counts_is_aligned_to_the_smallest_piece(dtype, lanes, align):
    """LLVM widens vector<6xf32> to 8 lanes and, where the address is aligned for it, loads the
    last row of a 3 x 6 stack tile with one 16- or 32-byte load past the tile's end: its two
    extra lanes held whatever an earlier call left there (often denormals: the erf polynomial
    took microcode assists on them, 0271 ran 1.3 or 7 ms from call to call). A tile read by N
    lanes, N not a power of two, starts on the load's smallest piece (element bytes x the
    lowest set bit of N), so no wider piece is ever aligned; power-of-two rows keep 64."""
    sch = _gelu_tiles(dtype, lanes)
    allocas = [
        line
        for line in emit_text(sch.mod.module, "llvm-ir").splitlines()
        if " = alloca " in line and ("float" in line or "double" in line)
    ]
    # (B's tile: A's is read once per element, its two loads of one element counting once, so
    # `forward-copies` reads A itself there)
    assert len(allocas) == 1 and all(line.endswith(f"align {align}") for line in allocas), allocas
    # What opt -O3 knows of the tiles' odd-lane loads never lets llc widen a piece past them.
    # (Not for vector<3xf32>: InstCombine raises an alloca to the preferred alignment, 16, of a
    # vector of at most 16 bytes loaded at its start; see docs/design.md, Alignment.)
    if lanes & (lanes - 1) and lanes * np.dtype(dtype).itemsize > 16:
        opt = optimize(emit_text(sch.mod.module, "llvm-ir"), cpu_target("llvm"), text=True)
        loads = re.findall(
            r"load <(\d+) x (?:float|double)>, ptr %[\w.]+, align (\d+)", opt.decode()
        )
        odd = [int(a) for n, a in loads if int(n) & (int(n) - 1)]
        assert odd and all(a <= align for a in odd), odd
    a = np.random.default_rng(0).standard_normal((12, 24)).astype(dtype)
    b, expect = np.zeros_like(a), np.zeros_like(a)
    tir_mlir.build(sch.mod)["main"](a, b)
    tir_mlir.build(tir_mlir.parse(GELU_TILES.replace("DT", dtype)))["main"](a, expect)
    np.testing.assert_allclose(b, expect, rtol=1e-6 if dtype == "float32" else 1e-12)
