"""Code for a named CPU (`--target "llvm -mcpu=..."`) follows that CPU, not the build machine:
the vector width, the register budget and the L1 geometry behind the lowering heuristics come
from the target (cpu_model.py). FileCheck over the assembly of a vectorized matmul tile, a conv
tile and an elementwise kernel for four AVX-512 CPUs (two with 32 KiB 8-way L1Ds, two with
48 KiB 12-way ones) and for x86-64-v3 (AVX2: ymm only); the scf stage for the numbers the
heuristics chose.
Nothing here runs the code or reads the host, so it checks the same on every machine."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

import tir_mlir
from filecheck import filecheck
from shared_programs import QUARTER_COLUMNS_64
from tir_mlir import Schedule
from tir_mlir.passes.lowering import cpu_model as cm
from tir_mlir.passes.lowering.pipeline import emit_text

sys.path.insert(0, str(Path(__file__).parent.parent.parent / "benchmarks"))
from vs_tvm_cases import ADD, CONV1D, add_parallel_vectorize, conv1d_tile, matmul, mm_hand
import workloads

AVX512 = ["sapphirerapids", "skylake-avx512", "znver4", "znver5"]
AVX2 = ["x86-64-v3"]
# Of these, 32 KiB 8-way L1Ds (Skylake server, Zen 4) and 48 KiB 12-way ones (Golden Cove, Zen 5).
L1_8_WAYS, L1_12_WAYS = ["skylake-avx512", "znver4"], ["sapphirerapids", "znver5"]


def _target(cpu):
    return f"llvm -mcpu={cpu}"


def _lower(mod, cpu):
    """(scf-stage text, assembly) of `mod` built for `cpu`, from one run of the pipeline."""
    stages = {}
    asm = emit_text(
        mod.module,
        "asm",
        target=_target(cpu),
        on_stage=lambda name, m: stages.setdefault(name, str(m)),
    )
    scf = next(text for name, text in stages.items() if "(--emit scf)" in name)
    return scf, asm


def _scheduled(text, schedule):
    sch = Schedule(tir_mlir.parse(text))
    schedule(sch)
    return sch.mod


def _carried(scf) -> list:
    """The number of values each scf.for of the text carries."""
    return [
        len(m.group(1).split(",")) for m in re.finditer(r"scf\.for [^\n]*iter_args\(([^)]*)\)", scf)
    ]


def _inner_fma_loop(asm: str) -> str:
    """The innermost loop holding the first FMA, from its header to its back edge."""
    lines = asm.splitlines()
    first = next(n for n, line in enumerate(lines) if "vfmadd" in line)
    start = max(n for n in range(first) if lines[n].startswith(".LBB"))
    label = lines[start].split(":")[0]
    end = next(n for n in range(first, len(lines)) if lines[n].split()[-1:] == [label])
    return "\n".join(lines[start : end + 1])


# --- a vectorized matmul tile: hand_mm's 4 x 64 register tile over k ---------------------------
@pytest.mark.parametrize("cpu", AVX512)
def test_matmul_tile_avx512_carries_the_tile_in_zmm(cpu):
    """16 zmm accumulators (30 of 32 registers free for them) stay in registers across k: the
    inner loop is loads, broadcasts and 16 zmm FMAs, no spill."""
    scf, asm = _lower(_scheduled(matmul(256), mm_hand), cpu)
    assert _carried(scf) == [16]
    filecheck(
        _inner_fma_loop(asm),
        """
CHECK: Inner Loop Header
CHECK-NOT: {{Spill|Reload}}
CHECK-COUNT-16: vfmadd{{[0-9]+}}ps {{.*}}%zmm
CHECK-NOT: {{Spill|Reload}}
CHECK: j{{[a-z]+}} .LBB
""",
    )


@pytest.mark.parametrize("cpu", AVX2)
def test_matmul_tile_avx2_is_ymm_code_within_16_registers(cpu):
    """AVX2 has 16 ymm registers: the 4 x 64 tile (32 ymm) cannot all be carried; as many as
    fit with room for the loads are (5 of 16 vector<16xf32>: 10 ymm, the budget of 14 less
    PARTIAL_SPARE), not the 16 an AVX-512 register file would take; no zmm anywhere."""
    scf, asm = _lower(_scheduled(matmul(256), mm_hand), cpu)
    assert _carried(scf) == [5]
    filecheck(
        asm,
        """
CHECK-NOT: zmm
CHECK: vfmadd{{[0-9]+}}ps {{.*}}%ymm
CHECK-NOT: zmm
""",
    )


# --- a conv tile: conv1d, 4 filters x 32 outputs accumulated over the channels and taps --------
@pytest.mark.parametrize("cpu", AVX512 + AVX2)
def test_conv_tile(cpu):
    scf, asm = _lower(_scheduled(CONV1D, conv1d_tile), cpu)
    reg = "zmm" if cpu in AVX512 else "ymm"
    # 4 x 2 vector<16xf32> accumulators: 8 zmm, or 16 ymm (over the 14-register budget: 5)
    assert _carried(scf) == ([8, 8] if cpu in AVX512 else [5, 5])
    filecheck(
        asm,
        f"""
{"CHECK-NOT: zmm" if cpu in AVX2 else ""}
CHECK: vfmadd{{{{[0-9]+}}}}ps {{{{.*}}}}%{reg}
{"CHECK-NOT: zmm" if cpu in AVX2 else ""}
""",
    )


# --- an elementwise kernel: parallel, vectorized by 16 ------------------------------------------
@pytest.mark.parametrize("cpu", AVX512 + AVX2)
def test_elementwise(cpu):
    _, asm = _lower(_scheduled(ADD, add_parallel_vectorize), cpu)
    if cpu in AVX512:
        filecheck(asm, "CHECK: vaddps {{.*}}%zmm")
    else:
        filecheck(asm, "CHECK-NOT: zmm\nCHECK: vaddps {{.*}}%ymm\nCHECK-NOT: zmm")


# --- the vector width of loops the stages cut or hand to LLVM -----------------------------------
@pytest.mark.parametrize("cpu, lanes", [(c, 16) for c in AVX512] + [(c, 8) for c in AVX2])
def test_vectorize_request_fills_the_targets_register(cpu, lanes):
    """`vj // 4` is not linear in the lane: the loop reaches LLVM with a width hint of one
    register of floats."""
    sch = Schedule(tir_mlir.parse(QUARTER_COLUMNS_64))
    _, j = sch.get_loops(sch.get_block("B"))
    sch.vectorize(sch.split(j, factors=[None, 32])[1])
    scf, asm = _lower(sch.mod, cpu)
    filecheck(scf, f"CHECK: #llvm.loop_vectorize<disable = false, width = {lanes} : i32>")
    filecheck(asm, "CHECK: vmulps {{.*}}%" + ("zmm" if cpu in AVX512 else "ymm"))


LONG_ROW = """
@T.prim_func
def main(A: T.Buffer((64, 24), "float32"), B: T.Buffer((64, 24), "float32")):
    T.func_attr({"tir.noalias": True})
    for i, j in T.grid(64, 24):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(3)
"""


@pytest.mark.parametrize("cpu, lanes", [(c, 16) for c in AVX512] + [(c, 8) for c in AVX2])
def test_a_long_vectorized_loop_is_cut_into_register_wide_vectors(cpu, lanes):
    sch = Schedule(tir_mlir.parse(LONG_ROW))
    sch.vectorize(sch.get_loops(sch.get_block("B"))[1])
    scf, _ = _lower(sch.mod, cpu)
    filecheck(scf, f"CHECK: vector.load {{{{.*}}}} vector<{lanes}xf32>")
    assert f"vector<{lanes * 2}xf32>" not in scf


# --- the strips of a column sum parallel over its columns ---------------------------------------
COLUMN_SUM = """
@T.prim_func
def main(A: T.Buffer((256, 1024), "float32"), B: T.Buffer((1024,), "float32")):
    T.func_attr({"tir.noalias": True})
    for i, k in T.grid(1024, 256):
        with T.block("B"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                B[vi] = T.float32(0)
            B[vi] = B[vi] + A[vk, vi]
"""


@pytest.mark.parametrize("cpu", AVX512 + AVX2)
def test_a_column_sums_strips_stay_in_registers(cpu):
    """loop-interchange splits the parallel column loop into strips that run along A's rows:
    as wide as the FMA chains' registers, but no wider than auto-vectorize carries (4), or the
    strip stays a scalar loop over B in memory (LLVM's models give Skylake server 8 zmm FMA
    chains, x86-64-v3 10 ymm ones). The loop around the strips may jam two of them side by side
    (loop-interchange's _jam_around): each still carries its 4 registers."""
    sch = Schedule(tir_mlir.parse(COLUMN_SUM))
    sch.parallel(sch.get_loops(sch.get_block("B"))[0])
    scf, _ = _lower(sch.mod, cpu)
    lanes = 16 if cpu in AVX512 else 8
    filecheck(scf, f"CHECK: scf.for {{{{.*}}}} iter_args({{{{.*}}}}) -> (vector<{4 * lanes}xf32>")
    assert f"vector<{8 * lanes}xf32>" not in scf


# --- the L1 geometry behind prefetch-strided ---------------------------------------------------
# A 5120-byte row stride (1280 floats: 80 lines) maps 40 rows onto 4 L1 sets, 10 rows a set:
# more than 8 ways hold, fewer than 12.
STRIDED = workloads.matmul(8, m=1280, k=320, noalias=True)


def _strided_tile(sch):
    c = sch.get_block("C")
    i, j, k = sch.get_loops(c)
    i0, i1 = sch.split(i, factors=[None, 4])
    j0, j1 = sch.split(j, factors=[None, 64])
    k0, k1 = sch.split(k, factors=[None, 40])
    sch.reorder(i0, j0, k0, k1, i1, j1)
    sch.unroll(i1)
    sch.vectorize(sch.split(j1, factors=[None, 16])[1])
    sch.decompose_reduction(c, k0)


@pytest.mark.parametrize("cpu", L1_8_WAYS + L1_12_WAYS)
def test_prefetch_follows_the_targets_l1_ways(cpu):
    scf, asm = _lower(_scheduled(STRIDED, _strided_tile), cpu)
    if cpu in L1_8_WAYS:
        assert scf.count("memref.prefetch") == 4  # a line each of B's 64-float rows
        filecheck(asm, "CHECK: prefetcht0")
    else:
        assert "memref.prefetch" not in scf


# --- FMA or mul + add on a short accumulation chain ---------------------------------------------
# 4 zmm accumulators (4 filters x 16 outputs) carried across the 3 taps of a conv1d, the added
# term streaming along A's row: 4 chains keep the FMA units busy where LLVM's model gives a zmm
# FMA 4 cycles at 1 per cycle (Golden Cove, Zen 4/5: 4 chains). Where it issues 2 per cycle
# (Skylake server: 8) or takes 5 cycles (x86-64-v3: 10, the 4 accumulators are 8 ymm), mul + add
# would take the FMA's latency off the chains but issue 2 x 4 (2 x 8) ops per step on the same
# ports, as long as the FMA chains wait or longer: FMAs everywhere (affine_to_scf: mul + add only
# below half the target's chains; test_lowering_chain_tiles has a tile that keeps it).
TAPS = """
@T.prim_func
def main(A: T.Buffer((16, 130), "float32"), W: T.Buffer((4, 16, 3), "float32"),
         B: T.Buffer((4, 128), "float32")):
    T.func_attr({"tir.noalias": True})
    for f, x, c, r in T.grid(4, 128, 16, 3):
        with T.block("B"):
            vf, vx, vc, vr = T.axis.remap("SSRR", [f, x, c, r])
            with T.init():
                B[vf, vx] = T.float32(0)
            B[vf, vx] = B[vf, vx] + A[vc, vx + vr] * W[vf, vc, vr]
"""


def _taps(sch):
    b = sch.get_block("B")
    f, x, c, r = sch.get_loops(b)
    x0, x1 = sch.split(x, factors=[None, 16])
    sch.reorder(x0, c, r, f, x1)
    sch.unroll(f)
    sch.vectorize(x1)
    sch.decompose_reduction(b, c)


@pytest.mark.parametrize(
    "cpu, fma",
    [
        ("sapphirerapids", True),
        ("znver4", True),
        ("znver5", True),
        ("skylake-avx512", True),
        ("x86-64-v3", True),
    ],
)
def test_fma_chains_follow_the_targets_fma_units(cpu, fma):
    _, asm = _lower(_scheduled(TAPS, _taps), cpu)
    reg = "zmm" if cpu in AVX512 else "ymm"
    if fma:
        filecheck(
            asm,
            f"CHECK-NOT: vmulps\nCHECK: vfmadd{{{{[0-9]+}}}}ps {{{{.*}}}}%{reg}\nCHECK-NOT: vmulps",
        )
    else:
        filecheck(
            asm,
            f"CHECK-NOT: vfmadd\nCHECK: vmulps {{{{.*}}}}%{reg}\n"
            f"CHECK: vaddps {{{{.*}}}}%{reg}\nCHECK-NOT: vfmadd",
        )


# --- where the model's numbers come from --------------------------------------------------------
def test_named_cpus_model():
    expected = {
        "sapphirerapids": (32, 512, 64, 12),
        "skylake-avx512": (32, 512, 64, 8),
        "znver4": (32, 512, 64, 8),
        "znver5": (32, 512, 64, 12),
        "x86-64-v3": (16, 256, 64, 8),
        "x86-64": (16, 128, 64, 8),
    }
    for cpu, numbers in expected.items():
        m = cm.cpu_model(_target(cpu))
        assert (m.vector_registers, m.vector_bits, m.l1d_sets, m.l1d_ways) == numbers, cpu
    # per-core L2 (sets, ways): 2 MiB 16-way, 1 MiB 16-way, 1 MiB 8-way; LLVM's default
    l2 = {
        "sapphirerapids": (2048, 16),
        "skylake-avx512": (1024, 16),
        "znver4": (2048, 8),
        "x86-64-v3": (512, 8),
    }
    for cpu, numbers in l2.items():
        m = cm.cpu_model(_target(cpu))
        assert (m.l2_sets, m.l2_ways) == numbers, cpu
        assert m.line_bytes == 64 and m.page_bytes == 4096
    # FMA latency / reciprocal throughput per register width, from LLVM's scheduling model
    chains = {
        "sapphirerapids": [8, 8, 4],
        "skylake-avx512": [8, 8, 8],
        "znver4": [8, 8, 4],
        "znver5": [8, 8, 4],
        "x86-64-v3": [10, 10, 10],
    }
    for cpu, expected_chains in chains.items():
        m = cm.cpu_model(_target(cpu))
        assert [m.fma_chains(bits) for bits in (32, 256, 512)] == expected_chains, cpu
    # -mattr on top of the CPU's own features
    assert cm.cpu_model("llvm -mcpu=znver4 -mattr=-avx512f").vector_bits == 256
    assert cm.cpu_model("llvm -mcpu=x86-64-v3 -mattr=+avx512f").vector_registers == 32


def test_the_host_model_reads_the_kernels_cache_description(tmp_path, monkeypatch):
    """`llvm` (the JIT's target) takes the L1D from sysfs; a named CPU never does."""
    for index, (level, kind, sets, ways) in enumerate(
        [(1, "Data", 32, 7), (1, "Instruction", 64, 8), (2, "Unified", 2048, 16)]
    ):
        d = tmp_path / f"index{index}"
        d.mkdir()
        for name, value in [
            ("level", level),
            ("type", kind),
            ("number_of_sets", sets),
            ("ways_of_associativity", ways),
            ("coherency_line_size", 128),
        ]:
            (d / name).write_text(f"{value}\n")
    monkeypatch.setattr(cm, "SYSFS_CACHE", tmp_path)
    cm._model.cache_clear()
    try:
        host = cm.cpu_model("llvm")
        assert (host.l1d_sets, host.l1d_ways, host.line_bytes) == (32, 7, 128)
        assert (host.l2_sets, host.l2_ways) == (2048, 16)
        named = cm.cpu_model("llvm -mcpu=znver4")
        assert (named.l1d_sets, named.l1d_ways, named.line_bytes) == (64, 8, 64)
        assert (named.l2_sets, named.l2_ways) == (2048, 8)  # 1 MiB, 8 ways
        monkeypatch.setattr(cm, "SYSFS_CACHE", tmp_path / "missing")
        cm._model.cache_clear()
        assert cm.cpu_model("llvm").l1d_ways == cm.named_l1d(cm.cpu_model("llvm").cpu)[1]
    finally:
        cm._model.cache_clear()


def test_cli_lower_emits_asm_for_a_named_cpu(tmp_path):
    """`tir-mlir lower --emit asm --target "llvm -mcpu=x86-64-v3"`: AVX2 code, no zmm."""
    src = tmp_path / "add.tir"
    src.write_text(LONG_ROW)
    script = tmp_path / "s.py"
    script.write_text(
        "def schedule(sch):\n    sch.vectorize(sch.get_loops(sch.get_block('B'))[1])\n"
    )
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "tir_mlir.cli",
            "lower",
            str(src),
            "--emit",
            "asm",
            "--target",
            "llvm -mcpu=x86-64-v3",
            "--transform",
            str(script),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    filecheck(out.stdout, "CHECK-NOT: zmm\nCHECK: vmulps {{.*}}%ymm\nCHECK-NOT: zmm")
