"""Tensor cores: the WMMA intrinsics (TVM's names) and the mma.sync ones (fp16, bf16) in a hand
schedule, lowered to nvvm.wmma / nvvm.mma.sync ops; the PTX is assembled by ptxas for sm_80 and
sm_90, and the kernel is run in the SIMT simulator (tests/support/gpu_sim_wmma.py) against numpy.
Running on a GPU: tests/gpu/test_gpu_device.py."""

import importlib.util
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

import tir_mlir
from gpu_sim import Race, simulate
from tir_mlir.errors import BuildError, ScheduleError
from tir_mlir.ir.ir_walk import walk
from tir_mlir.passes.lowering.pipeline import emit_text, lower
from tir_mlir.schedule.tensor_intrin import TensorIntrin

ROOT = Path(__file__).resolve().parent.parent.parent
PTXAS = shutil.which("ptxas") or (
    "/usr/local/bin/ptxas" if Path("/usr/local/bin/ptxas").exists() else None
)
_spec = importlib.util.spec_from_file_location(
    "gpu_tensorcore", ROOT / "examples" / "gpu_tensorcore.py"
)
example = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(example)

NAMES = [
    "wmma_fill_16x16x16_f32",
    "wmma_load_16x16x16_f16_a_shared",
    "wmma_load_16x16x16_f16_b_shared",
    "wmma_sync_16x16x16_f16f16f32",
    "wmma_store_16x16x16_f32_global",
    "wmma_store_16x16x16_f32_shared",
    "wmma_load_16x16x16_f16_b_trans_shared",
    "wmma_sync_16x16x16_f16f16f32_trans",
    "wmma_load_16x16x16_f16_a_shared_dyn",
    "wmma_load_16x16x16_f16_b_shared_dyn",
    "wmma_load_16x16x16_f16_b_trans_shared_dyn",
    "wmma_store_16x16x16_f32_shared_dyn",
    "mma_fill_16x16_f32",
    "mma_load_16x16_f16_a_shared",
    "mma_load_16x16_bf16_b_shared",
    "mma_sync_16x16x16_f16f16f32",
    "mma_sync_16x16x16_bf16bf16f32",
    "mma_store_16x16_f32_global",
]
KINDS = [("wmma", "float16"), ("mma", "float16"), ("mma", "bfloat16")]


def scheduled(n=128, kind="wmma", dtype="float16", **kw):
    return example.wmma_matmul(
        tir_mlir.Schedule(example.matmul(n, dtype)), kind=kind, dtype=dtype, **kw
    )


@pytest.mark.parametrize("name", NAMES)
def test_intrinsics_are_registered_under_tvms_names(name):
    intrin = TensorIntrin.get(name)
    assert "tir_mlir.wmma" in intrin.impl.script()
    assert "tir_mlir.wmma" not in intrin.desc.script()


def test_tensorized_blocks_print_the_annotated_tiles():
    text = scheduled().mod.script()
    for op in ("fill", "load_a", "load_b", "sync", "store"):
        assert f'annotations={{"tir_mlir.wmma": "{op}"}}' in text
    assert 'scope="wmma.accumulator"' in text and 'scope="wmma.matrix_a"' in text


@pytest.mark.parametrize("kind,dtype", KINDS)
@pytest.mark.parametrize("warps,frags,k_frags", [((2, 2), (2, 2), 2), ((1, 2), (2, 1), 1)])
def test_simulated_kernel_matches_numpy(kind, dtype, warps, frags, k_frags):
    n = 128 if warps == (2, 2) else 64  # 4 thread blocks either way
    sch = scheduled(n, kind, dtype, warps=warps, frags=frags, k_frags=k_frags)
    gpu = lower(sch.mod.module, "cuda", "gpu")
    text = str(gpu)
    if kind == "wmma":
        assert text.count("nvvm.wmma.mma") == 1 and "nvvm.wmma.store" in text
    else:  # two m16n8k16 per 16x16 tile; loads and stores are the lanes' own
        assert text.count("nvvm.mma.sync") == 2 and "nvvm.wmma" not in text
    rng = np.random.default_rng(1)
    # bf16 buffers hold float32 values in the simulator: small integers, exact in bf16
    a, b = (
        (
            rng.standard_normal((n, n)).astype(np.float16)
            if dtype == "float16"
            else rng.integers(-4, 5, (n, n)).astype(np.float32)
        )
        for _ in range(2)
    )
    c = np.full((n, n), np.nan, np.float32)
    sim = simulate(gpu, a, b, c)
    ref = a.astype(np.float32) @ b.astype(np.float32)
    np.testing.assert_allclose(c, ref, rtol=1e-4, atol=1e-3)
    assert sim.barriers > 0


def test_missing_barrier_is_a_race_in_the_simulator():
    """The barrier between the shared fetch and the fragment loads is what makes it right."""
    gpu = lower(scheduled().mod.module, "cuda", "gpu")
    barriers = [o for o in walk(gpu.operation) if o.name == "gpu.barrier"]
    assert barriers
    barriers[0].erase()
    a = np.ones((128, 128), np.float16)
    with pytest.raises(Race):
        simulate(gpu, a, a.copy(), np.zeros((128, 128), np.float32))


@pytest.mark.skipif(PTXAS is None, reason="ptxas not installed")
@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
@pytest.mark.parametrize("dtype,short", [("float16", "f16"), ("bfloat16", "bf16")])
def test_mma_sync_ptx_assembles(arch, dtype, short, tmp_path):
    ptx = emit_text(scheduled(256, "mma", dtype).mod.module, "ptx", f"cuda -arch={arch}")
    assert ptx.count(f"mma.sync.aligned.m16n8k16.row.col.f32.{short}.{short}.f32") == 16
    assert "wmma" not in ptx
    # operands from shared memory: one ldmatrix.x4 per tile (.trans for B), 2x2 tiles x 2 k
    assert ptx.count("ldmatrix.sync.aligned.m8n8.x4.shared.b16") == 4
    assert ptx.count("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16") == 4
    (tmp_path / "k.ptx").write_text(ptx)
    p = subprocess.run(
        [PTXAS, f"-arch={arch}", "-v", str(tmp_path / "k.ptx"), "-o", str(tmp_path / "k.cubin")],
        capture_output=True,
        text=True,
    )
    assert p.returncode == 0, p.stderr
    assert "0 bytes stack frame" in p.stderr


def test_one_fragment_used_by_wmma_and_mma_is_refused():
    sch = tir_mlir.Schedule(example.matmul(64))
    example.wmma_matmul(sch, warps=(1, 1), frags=(1, 1), k_frags=1)
    text = sch.mod.script().replace('"tir_mlir.wmma": "load_a"', '"tir_mlir.wmma": "mma_load_a"')
    with pytest.raises(BuildError, match="register layouts differ \\(mma, wmma"):
        lower(tir_mlir.parse(text).module, "cuda", "gpu")


def test_b_loaded_row_major_but_multiplied_transposed_is_refused():
    text = scheduled(64, warps=(1, 1), frags=(1, 1), k_frags=1).mod.script()
    text = text.replace('"tir_mlir.wmma": "sync"', '"tir_mlir.wmma": "sync_trans"')
    with pytest.raises(BuildError, match="register layouts differ \\(wmma, wmma-col"):
        lower(tir_mlir.parse(text).module, "cuda", "gpu")


def test_transposed_b_simulated_and_assembled(tmp_path):
    """C = A @ B^T with B stored n x k: the _trans intrinsics load B column-major."""
    n = 64
    sch = example.wmma_matmul(
        tir_mlir.Schedule(example.matmul(n, transpose_b=True)),
        warps=(1, 2),
        frags=(2, 1),
        k_frags=1,
        transpose_b=True,
    )
    rng = np.random.default_rng(4)
    a, b = (rng.standard_normal((n, n)).astype(np.float16) for _ in range(2))
    c = np.zeros((n, n), np.float32)
    simulate(lower(sch.mod.module, "cuda", "gpu"), a, b, c)
    np.testing.assert_allclose(
        c, a.astype(np.float32) @ b.astype(np.float32).T, rtol=1e-4, atol=1e-3
    )
    ptx = emit_text(sch.mod.module, "ptx", "cuda -arch=sm_80")
    assert "wmma.load.b.sync.aligned.col.m16n16k16.shared.f16" in ptx
    assert "wmma.mma.sync.aligned.row.col.m16n16k16.f32.f32" in ptx
    if PTXAS:
        (tmp_path / "k.ptx").write_text(ptx)
        p = subprocess.run(
            [PTXAS, "-arch=sm_80", "-o", str(tmp_path / "k.cubin"), str(tmp_path / "k.ptx")],
            capture_output=True,
            text=True,
        )
        assert p.returncode == 0, p.stderr


@pytest.mark.skipif(PTXAS is None, reason="ptxas not installed")
@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_ptx_has_wmma_and_assembles(arch, tmp_path):
    ptx = emit_text(scheduled(256).mod.module, "ptx", f"cuda -arch={arch}")
    assert f".target {arch}" in ptx
    assert ptx.count("wmma.mma.sync.aligned.row.row.m16n16k16.f32.f32") == 8  # 2x2 tiles x 2 k
    assert "wmma.load.a.sync.aligned.row.m16n16k16.shared.f16" in ptx
    assert "wmma.load.b.sync.aligned.row.m16n16k16.shared.f16" in ptx
    assert "wmma.store.d.sync.aligned.row.m16n16k16" in ptx
    # wmma.load needs 32-byte aligned addresses: the tiles' shared buffers are aligned so
    assert ptx.count(".shared .align 32 .b8") == 2
    (tmp_path / "k.ptx").write_text(ptx)
    p = subprocess.run(
        [PTXAS, f"-arch={arch}", "-v", str(tmp_path / "k.ptx"), "-o", str(tmp_path / "k.cubin")],
        capture_output=True,
        text=True,
    )
    assert p.returncode == 0, p.stderr
    assert "0 bytes stack frame" in p.stderr  # the fragments live in registers
    assert "8192 bytes smem" in p.stderr  # 64x32 + 32x64 halves


def test_fragment_read_by_an_untensorized_block_is_refused():
    sch = tir_mlir.Schedule(example.matmul_f16(64))
    c = sch.get_block("C")
    frag = sch.cache_read(c, 0, "wmma.matrix_a")
    i, _, _ = sch.get_loops(c)
    sch.bind(i, "threadIdx.x")
    sch.compute_at(frag, i)
    with pytest.raises(BuildError, match="accessed outside a tensor-core intrinsic"):
        lower(sch.mod.module, "cuda", "gpu")


def test_wrong_intrinsic_for_the_tile_is_refused():
    sch = tir_mlir.Schedule(example.matmul_f16(64))
    c = sch.get_block("C")
    acc = sch.cache_write(c, 0, "wmma.accumulator")
    r, col = sch.get_loops(acc)
    r0, r1 = sch.split(r, [None, 16])
    c0, c1 = sch.split(col, [None, 16])
    sch.reorder(r0, c0, r1, c1)
    before = sch.mod.script()
    with pytest.raises(ScheduleError, match="does not match intrinsic"):
        sch.tensorize(r1, "wmma_load_16x16x16_f16_a_shared")  # f16, the tile is f32
    assert sch.mod.script() == before


def test_printed_module_and_trace_replay_give_the_same_kernel():
    sch = scheduled()
    ptx = emit_text(sch.mod.module, "ptx", "cuda -arch=sm_80")
    reparsed = tir_mlir.parse(sch.mod.script())
    assert emit_text(reparsed.module, "ptx", "cuda -arch=sm_80") == ptx
    assert "sch.tensorize(" in str(sch.trace) and '"wmma_sync_16x16x16_f16f16f32"' in str(sch.trace)
    replayed = tir_mlir.Schedule(example.matmul_f16(128))
    tir_mlir.Trace.from_json(sch.trace.as_json()).apply_to_schedule(replayed)
    assert replayed.mod.script() == sch.mod.script()


def test_warps_must_be_the_threads_along_x():
    """16 threads along x: a warp would span two threadIdx.y values, two tiles in one op."""
    sch = scheduled(64, warps=(1, 1), frags=(1, 1), k_frags=1, lanes=16)
    with pytest.raises(BuildError, match="must be a multiple of 32, not 16"):
        lower(sch.mod.module, "cuda", "gpu")


def test_a_tile_that_depends_on_the_lane_is_refused():
    sch = scheduled(64, warps=(1, 1), frags=(1, 1), k_frags=1)
    text = sch.mod.script()
    # make the fill's tile depend on the lane: bind its (unit) tile loop to threadIdx.x
    text = text.replace(
        "for i_2_init in T.unroll(1):", 'for i_2_init in T.thread_binding(1, thread="threadIdx.x"):'
    )
    with pytest.raises(BuildError, match="depends on threadIdx.x"):
        lower(tir_mlir.parse(text).module, "cuda", "gpu")


@pytest.mark.tvm
@pytest.mark.parametrize("name", [n for n in NAMES if n.startswith("wmma")])
def test_descriptions_print_as_tvms(name):
    """TVM 0.21 registers the same names; its descriptions print exactly as ours."""
    import tvm.tir.tensor_intrin.cuda  # noqa: F401  (registers TVM's intrinsics)
    from tvm.tir import TensorIntrin as TvmTensorIntrin

    assert TensorIntrin.get(name).desc.script() == TvmTensorIntrin.get(name).desc.script()
