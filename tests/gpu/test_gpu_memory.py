"""Shared and local memory on the CUDA target: compute_at relaxes thread loops for shared
buffers (cooperative fetch), compact-buffers shrinks shared/local buffers by TVM's relaxation
rules, and gpu-insert-barriers synchronises exactly where threads exchange data. Checked with
ptxas (shared size, no stack), the kernel's structure, and the SIMT simulator (result against
numpy, no race)."""

import re
import subprocess
from pathlib import Path

import numpy as np
import pytest
from gpu_sim import simulate
from ptxas import PTXAS
from gpu_example_schedules import softmax_schedule, tiled_matmul

import tir_mlir
from tir_mlir.passes.lowering.pipeline import emit_text, lower
from tir_mlir.passes.lowering.gpu_usage import kernel_usage

DATA = Path(__file__).parent.parent / "data" / "gpu"


def ptxas_info(ptx, tmp_path):
    path = tmp_path / "k.ptx"
    path.write_text(ptx)
    p = subprocess.run(
        [PTXAS, "-v", "-arch=sm_90", "-o", str(tmp_path / "k.cubin"), str(path)],
        capture_output=True,
        text=True,
    )
    assert p.returncode == 0, p.stderr
    return p.stderr


def test_fetch_covers_the_block_tile_for_shared_scope():
    """compute_at of a shared cache under the thread loops covers what the whole block needs
    (64x16 of A per k-tile), not one thread's row; a local cache keeps its thread's part."""
    sch = tiled_matmul(128)
    text = sch.mod.script()
    fetch = text[
        text.index('with T.block("A_shared")') - 400 : text.index('with T.block("A_shared")')
    ]
    assert "for ax0_ax1_fused_0 in range(4):" in fetch  # 1024 = 4 * 16 * 16
    assert 'T.thread_binding(16, thread="threadIdx.y")' in fetch
    # (a local cache of A itself: caching A_shared, whose writer shares the ko loop with C, is
    # refused by cache_read)
    local = tir_mlir.Schedule(
        tir_mlir.parse((DATA / "matmul.tir").read_text().replace("256", "128"))
    )
    c = local.get_block("C")
    i, j, k = local.get_loops(c)
    bi, ti, ii = local.split(i, [None, 16, 4])
    bj, tj, jj = local.split(j, [None, 16, 4])
    ko, ki = local.split(k, [None, 16])
    local.reorder(bi, bj, ti, tj, ko, ki, ii, jj)
    for loop, tag in (
        (bi, "blockIdx.y"),
        (bj, "blockIdx.x"),
        (ti, "threadIdx.y"),
        (tj, "threadIdx.x"),
    ):
        local.bind(loop, tag)
    cache = local.cache_read(c, 0, "local")
    local.compute_at(cache, ko)  # under ko, per thread
    body = local.mod.script()
    loops = body[: body.index('with T.block("A_local")')].split("\n")[-4:]
    assert "for ax0, ax1 in T.grid(4, 16):" in "\n".join(loops)


def test_matmul_tiles_are_compacted(tmp_path):
    gpu = emit_text(tiled_matmul(256).mod.module, "gpu", "cuda")
    kernel = gpu.split("gpu.module")[1]
    assert (
        "workgroup(%arg3 : memref<64x16xf32, #gpu.address_space<workgroup>>, "
        "%arg4 : memref<16x64xf32, #gpu.address_space<workgroup>>)"
    ) in kernel
    assert "private(%arg5 : memref<4x4xf32, #gpu.address_space<private>>)" in kernel
    if PTXAS is not None:  # was 512 KB of shared memory before compaction
        info = ptxas_info(emit_text(tiled_matmul(256).mod.module, "ptx", "cuda"), tmp_path)
        assert "8192 bytes smem" in info and "0 bytes stack frame" in info


def test_barriers_after_the_fetch_and_before_the_next_one():
    kernel = emit_text(tiled_matmul(128).mod.module, "gpu", "cuda").split("gpu.module")[1]
    assert kernel.count("gpu.barrier") == 2
    # k-tile loop: fetch A and B, barrier, multiply, barrier (before the next fetch overwrites)
    ko = kernel[kernel.index("scf.for") :]
    first, second = (m.start() for m in re.finditer("gpu.barrier", ko))
    assert ko[:first].count("memref.store") == 2 and "arith.mulf" not in ko[:first]
    assert "arith.mulf" in ko[first:second]
    assert ko[second:].split("\n")[1].strip() == "}"  # the k-tile loop's end


def test_tiled_matmul_runs_race_free_like_numpy():
    sch = tiled_matmul(64, threads=8, per_thread=4, k_tile=8)
    rng = np.random.default_rng(0)
    a, b = rng.random((64, 64), np.float32), rng.random((64, 64), np.float32)
    c = np.zeros((64, 64), np.float32)
    sim = simulate(lower(sch.mod.module, "cuda", "gpu"), a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-5)
    assert sim.barriers == 4 * 2 * 8  # 4 blocks, 2 per k-tile, 8 k-tiles
    ref = np.zeros_like(c)
    tir_mlir.interpret(sch.mod, "matmul", a, b, ref)
    np.testing.assert_allclose(ref, a @ b, rtol=1e-5)


def test_reading_another_threads_element_needs_a_barrier_same_thread_does_not():
    src = """
@T.prim_func
def f(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
    S = T.alloc_buffer((64,), scope="shared")
    for t in T.thread_binding(64, thread="threadIdx.x"):
        with T.block("w"):
            vt = T.axis.spatial(64, t)
            S[vt] = A[vt]
        with T.block("r"):
            vt = T.axis.spatial(64, t)
            B[vt] = S[vt] * 2.0
"""
    own = emit_text(tir_mlir.parse(src).module, "gpu", "cuda")
    assert "gpu.barrier" not in own  # each thread reads back its own element
    other = emit_text(
        tir_mlir.parse(src.replace("S[vt] * 2.0", "S[63 - vt] * 2.0")).module, "gpu", "cuda"
    )
    assert other.count("gpu.barrier") == 1
    a = np.arange(64, dtype=np.float32)
    b = np.zeros(64, np.float32)
    simulate(
        lower(tir_mlir.parse(src.replace("S[vt] * 2.0", "S[63 - vt] * 2.0")).module, "cuda", "gpu"),
        a,
        b,
    )
    np.testing.assert_array_equal(b, a[::-1] * 2)


@pytest.mark.skipif(PTXAS is None, reason="ptxas not installed")
def test_softmax_stays_in_shared_limits(tmp_path):
    info = ptxas_info(emit_text(softmax_schedule().module, "ptx", "cuda"), tmp_path)
    # maxelem/expsum compacted to one element per block, plus the allreduce scratch
    assert re.search(r"(\d+) bytes smem", info).group(1) == "24"


def test_virtual_threads_run_as_serial_loops():
    """MultiLevelTiling binds vthread.x between blockIdx and threadIdx: each thread runs its
    virtual threads in turn."""
    src = (DATA / "matmul.tir").read_text().replace("256", "32")
    sch = tir_mlir.Schedule(tir_mlir.parse(src))
    i, j, _ = sch.get_loops(sch.get_block("C"))
    vi, ti = sch.split(i, [2, 16])
    sch.bind(vi, "vthread.x")
    sch.bind(ti, "threadIdx.x")
    sch.reorder(ti, vi)
    gpu = emit_text(sch.mod.module, "gpu", "cuda")
    assert "threads in (%c16, %c1, %c1)" in gpu
    rng = np.random.default_rng(2)
    a, b = rng.random((32, 32), np.float32), rng.random((32, 32), np.float32)
    c = np.zeros((32, 32), np.float32)
    simulate(lower(sch.mod.module, "cuda", "gpu"), a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-5)


def conv1d_nlc(length, cin, cout):
    """TVM's te_workload conv1d_nlc (kernel 3, stride 2, padding 1), as TVM prints it."""
    return f"""
@T.prim_func
def main(inputs: T.Buffer((1, {length}, {cin}), "float32"), weight: T.Buffer((3, {cin}, {cout}), "float32"), conv1d_nlc: T.Buffer((1, {length // 2}, {cout}), "float32")):
    T.func_attr({{"tir.noalias": True}})
    PadInput = T.alloc_buffer((1, {length + 2}, {cin}))
    for i0, i1, i2 in T.grid(1, {length + 2}, {cin}):
        with T.block("PadInput"):
            v_i0, v_i1, v_i2 = T.axis.remap("SSS", [i0, i1, i2])
            PadInput[v_i0, v_i1, v_i2] = T.if_then_else(1 <= v_i1 and v_i1 < {length + 1}, inputs[v_i0, v_i1 - 1, v_i2], T.float32(0.0))
    for n, l, co, rl, rc in T.grid(1, {length // 2}, {cout}, 3, {cin}):
        with T.block("conv1d_nlc"):
            v_n, v_l, v_co, v_rl, v_rc = T.axis.remap("SSSRR", [n, l, co, rl, rc])
            with T.init():
                conv1d_nlc[v_n, v_l, v_co] = T.float32(0.0)
            conv1d_nlc[v_n, v_l, v_co] = conv1d_nlc[v_n, v_l, v_co] + PadInput[v_n, v_l * 2 + v_rl, v_co // {cout} * {cin} + v_rc] * weight[v_rl, v_rc, v_co]
"""


def cuda_candidates(text, n, seed=3):
    from tir_mlir.meta_schedule.tune_context import TuneContext

    mod = tir_mlir.parse(text)
    ctx = TuneContext(mod, "cuda -arch=sm_80", search_strategy="replay-trace", rand_state=seed)
    st = ctx.search_strategy
    st.pre_tuning(n, n, ctx.generate_design_space())
    return mod, st.generate_measure_candidates(), st.failures


def test_tuner_fetch_tiles_are_compacted_so_conv_candidates_fit_shared_memory():
    """MultiLevelTiling's cooperative fetch indexes its shared tile through floordiv/mod of the
    fused fetch loop and fills the tiles of all virtual threads: compact-buffers shrinks it to
    the block's tile all the same. (Uncompacted, a 256-long conv1d's 160 KB of shared buffers
    failed VerifyGPUCode in every candidate.)"""
    _, cands, failures = cuda_candidates(conv1d_nlc(256, 64, 128), 3)
    assert cands and len(cands) == 3, failures
    for c in cands:
        assert kernel_usage(c.sch.mod)["shared_bytes"] <= 48 * 1024


def test_tuner_conv_candidates_compute_numpys_numbers_race_free():
    mod, cands, failures = cuda_candidates(conv1d_nlc(16, 8, 16), 4)
    assert cands, failures
    rng = np.random.default_rng(0)
    x, w = rng.random((1, 16, 8), np.float32), rng.random((3, 8, 16), np.float32)
    padded = np.pad(x, ((0, 0), (1, 1), (0, 0)))
    ref = sum(np.einsum("nlc,cd->nld", padded[:, r : r + 16 : 2], w[r]) for r in range(3))
    compacted = 0
    for c in cands:
        out = np.zeros((1, 8, 16), np.float32)
        simulate(lower(c.sch.mod.module, "cuda", "gpu"), x, w, out)
        np.testing.assert_allclose(out, ref, rtol=1e-5)
        compacted += kernel_usage(c.sch.mod)["shared_bytes"] < (18 * 8 + 3 * 8 * 16) * 4
    assert compacted


GROUP_CONV = """
@T.prim_func
def main(inputs: T.Buffer((1, 8, 8, 8), "float32"), weight: T.Buffer((3, 3, 4, 16), "float32"), conv2d_nhwc: T.Buffer((1, 8, 8, 16), "float32")):
    T.func_attr({"tir.noalias": True})
    PadInput = T.alloc_buffer((1, 10, 10, 8))
    for i0, i1, i2, i3 in T.grid(1, 10, 10, 8):
        with T.block("PadInput"):
            v_i0, v_i1, v_i2, v_i3 = T.axis.remap("SSSS", [i0, i1, i2, i3])
            PadInput[v_i0, v_i1, v_i2, v_i3] = T.if_then_else(1 <= v_i1 and v_i1 < 9 and 1 <= v_i2 and v_i2 < 9, inputs[v_i0, v_i1 - 1, v_i2 - 1, v_i3], T.float32(0.0))
    for n, h, w, co, rh, rw, rc in T.grid(1, 8, 8, 16, 3, 3, 4):
        with T.block("conv2d_nhwc"):
            v_n, v_h, v_w, v_co, v_rh, v_rw, v_rc = T.axis.remap("SSSSRRR", [n, h, w, co, rh, rw, rc])
            with T.init():
                conv2d_nhwc[v_n, v_h, v_w, v_co] = T.float32(0.0)
            conv2d_nhwc[v_n, v_h, v_w, v_co] = conv2d_nhwc[v_n, v_h, v_w, v_co] + PadInput[v_n, v_h + v_rh, v_w + v_rw, v_co // 8 * 4 + v_rc] * weight[v_rh, v_rw, v_rc, v_co]
"""


def test_tuner_group_conv_candidates_compute_numpys_numbers_race_free():
    """TVM's group conv (two groups of 4 input channels): the shared tile's channel index
    `co // 8 * 4 + rc` goes through a division of block, thread and loop parts."""
    _, cands, failures = cuda_candidates(GROUP_CONV, 2, seed=7)
    assert cands, failures
    rng = np.random.default_rng(0)
    x, w = rng.random((1, 8, 8, 8), np.float32), rng.random((3, 3, 4, 16), np.float32)
    padded = np.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0)))
    ref = np.zeros((1, 8, 8, 16), np.float32)
    for co in range(16):
        g = co // 8
        for rh in range(3):
            for rw in range(3):
                ref[..., co] += (
                    padded[:, rh : rh + 8, rw : rw + 8, g * 4 : g * 4 + 4] @ w[rh, rw, :, co]
                )
    for c in cands:
        out = np.zeros((1, 8, 8, 16), np.float32)
        simulate(lower(c.sch.mod.module, "cuda", "gpu"), x, w, out)
        np.testing.assert_allclose(out, ref, rtol=1e-5)
