"""GPU target: thread-bound loops -> gpu.launch -> kernels -> PTX (checked with ptxas, no GPU
needed), the host side run against a fake CUDA driver, and real runs behind `-m gpu`."""

import ctypes
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import tir_mlir
from tir_mlir.errors import BuildError, TIRParseError
from tir_mlir.passes.lowering.pipeline import emit_text
from ptxas import PTXAS

DATA = Path(__file__).parent.parent / "data" / "gpu"


def bound_matmul():
    """matmul.tir split 16x16 and bound: blocks over tiles, threads inside a tile."""
    sch = tir_mlir.Schedule(tir_mlir.load(DATA / "matmul.tir"))
    i, j, _ = sch.get_loops(sch.get_block("C"))
    io, ii = sch.split(i, [None, 16])
    jo, ji = sch.split(j, [None, 16])
    sch.reorder(io, jo, ii, ji)
    for loop, tag in (
        (io, "blockIdx.x"),
        (jo, "blockIdx.y"),
        (ii, "threadIdx.y"),
        (ji, "threadIdx.x"),
    ):
        sch.bind(loop, tag)
    return sch.mod


def programs():
    return {
        "vector_add": tir_mlir.load(DATA / "vector_add.tir"),
        "matmul": bound_matmul(),
        "softmax": tir_mlir.load(DATA / "softmax.tir"),
    }


def ptx_of(mod, target="cuda"):
    return emit_text(mod.module, "ptx", target)


@pytest.mark.skipif(PTXAS is None, reason="ptxas not installed")
@pytest.mark.parametrize("name", ["vector_add", "matmul", "softmax"])
def test_ptx_assembles_with_ptxas(name, tmp_path):
    ptx = ptx_of(programs()[name])
    assert f".visible .entry {name}_kernel(" in ptx and ".target sm_90" in ptx
    path = tmp_path / f"{name}.ptx"
    path.write_text(ptx)
    p = subprocess.run(
        [PTXAS, "-arch=sm_90", "-o", str(tmp_path / "k.cubin"), str(path)],
        capture_output=True,
        text=True,
    )
    assert p.returncode == 0, p.stderr


def test_launch_sizes_come_from_bound_extents():
    gpu = emit_text(bound_matmul().module, "gpu", "cuda")
    assert "blocks in (%c16, %c16, %c1) threads in (%c16, %c16, %c1)" in gpu
    assert "gpu.func @matmul_kernel(" in gpu and "kernel attributes" in gpu
    # the reduction loop k stays a serial loop inside the kernel
    assert "scf.for" in gpu.split("gpu.module")[1]
    ptx = ptx_of(bound_matmul())
    assert ".maxntid 16, 16, 1" in ptx and "%ctaid.y" in ptx and "%tid.y" in ptx


def test_shared_and_local_buffers_become_attributions_with_barriers():
    gpu = emit_text(programs()["softmax"].module, "gpu", "cuda")
    kernel = gpu.split("gpu.module")[1]
    assert "workgroup(%arg2 : memref<128xf32, #gpu.address_space<workgroup>>)" in kernel
    assert (
        "private(%arg3 : memref<1xf32, #gpu.address_space<private>>, "
        "%arg4 : memref<1xf32, #gpu.address_space<private>>)"
    ) in kernel
    # one barrier between staging the row and reading it; none at the very end
    assert kernel.count("gpu.barrier") == 1
    assert kernel.index("gpu.barrier") < kernel.index("scf.for")
    ptx = ptx_of(programs()["softmax"])
    assert ".shared .align 4 .b8" in ptx and "bar.sync" in ptx


def test_arch_from_target_string():
    ptx = ptx_of(programs()["vector_add"], "cuda -arch=sm_80")
    assert ".target sm_80" in ptx


SIBLINGS = textwrap.dedent("""
    @T.prim_func
    def f(A: T.Buffer((64,), "float32"), B: T.Buffer((32,), "float32"),
          S: T.Buffer((4,), "float32")):
        tmp = T.alloc_buffer((64,))
        for t in T.thread_binding(64, thread="threadIdx.x"):
            with T.block("a"):
                vt = T.axis.spatial(64, t)
                tmp[vt] = A[vt] * 2.0
        for t in T.thread_binding(32, thread="threadIdx.x"):
            with T.block("b"):
                vt = T.axis.spatial(32, t)
                B[vt] = tmp[vt] + tmp[vt + 32]
""")


def test_global_scratch_buffer_lives_in_device_memory():
    gpu = emit_text(tir_mlir.parse(SIBLINGS).module, "gpu", "cuda")
    host, kernels = gpu.split("gpu.module", 1)
    # two kernels (two outermost bound loops), each sized by its own loop
    assert host.count("gpu.launch_func") == 2
    assert "threads in (%c64, %c1, %c1)" in host and "threads in (%c32, %c1, %c1)" in host
    assert "gpu.alloc async" in host and "gpu.dealloc async" in host
    assert "memref.alloc" not in gpu and "gpu.barrier" not in gpu


GUARDED = textwrap.dedent("""
    @T.prim_func
    def f(A: T.Buffer((4, 64), "float32"), B: T.Buffer((4, 32), "float32")):
        tmp = T.alloc_buffer((64,), scope="shared")
        for b in T.thread_binding(4, thread="blockIdx.x"):
            for t in T.thread_binding(64, thread="threadIdx.x"):
                with T.block("a"):
                    vb, vt = T.axis.remap("SS", [b, t])
                    tmp[vt] = A[vb, vt] * 2.0
            for t in T.thread_binding(32, thread="threadIdx.x"):
                with T.block("b"):
                    vb, vt = T.axis.remap("SS", [b, t])
                    B[vb, vt] = tmp[vt] + tmp[vt + 32]
""")


def test_shorter_sibling_thread_loop_is_guarded():
    gpu = emit_text(tir_mlir.parse(GUARDED).module, "gpu", "cuda")
    host, kernel = gpu.split("gpu.module", 1)
    assert host.count("gpu.launch_func") == 1 and "threads in (%c64, %c1, %c1)" in host
    body = kernel[kernel.index("gpu.barrier") :]
    # 31 - t >= 0 guards the 32-thread loop; the 64-thread one runs unguarded before it
    assert "arith.subi %c31, %thread_id_x" in body and "scf.if" in body
    assert "scf.if" not in kernel[: kernel.index("gpu.barrier")]


def _error(src, target="cuda"):
    with pytest.raises(BuildError) as e:
        emit_text(tir_mlir.parse(src, "prog.tir").module, "gpu", target)
    return e.value


UNBOUND = textwrap.dedent("""
    @T.prim_func
    def add_one(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
        for i in range(8):
            with T.block("B"):
                vi = T.axis.spatial(8, i)
                B[vi] = A[vi] + 1.0
""")


def test_unbound_loop_is_a_build_error_with_location():
    e = _error(UNBOUND)
    assert "function add_one has loops not bound to GPU threads" in e.message
    assert "loop 'i' accesses buffer 'A'" in e.message and "Did you forget to bind?" in e.message
    assert (e.loc.file, e.loc.line) == ("prog.tir", 4)
    with pytest.raises(BuildError, match="not bound to GPU threads"):
        tir_mlir.build(tir_mlir.parse(UNBOUND), target="cuda")


def test_unbound_block_after_a_kernel_is_named():
    src = textwrap.dedent("""
        @T.prim_func
        def f(A: T.Buffer((8,), "float32")):
            for i in T.thread_binding(8, thread="threadIdx.x"):
                with T.block("k"):
                    vi = T.axis.spatial(8, i)
                    A[vi] = 1.0
            with T.block("tail"):
                A[0] = 2.0
    """)
    e = _error(src)
    assert "block 'tail' accesses buffer 'A'" in e.message and e.loc.line == 8


def test_unsupported_thread_tag_and_nested_same_axis():
    src = SIBLINGS.replace(
        'thread="threadIdx.x"):\n        with T.block("a")',
        'thread="warp.x"):\n        with T.block("a")',
    )
    with pytest.raises(TIRParseError) as e:  # not a thread axis: the parser says so
        tir_mlir.parse(src, "prog.tir")
    assert "unknown thread tag 'warp.x' (expected one of blockIdx.x," in e.value.message
    assert e.value.loc.line == 6
    nested = textwrap.dedent("""
        @T.prim_func
        def f(A: T.Buffer((8, 8), "float32")):
            for i in T.thread_binding(8, thread="threadIdx.x"):
                for j in T.thread_binding(8, thread="threadIdx.x"):
                    with T.block("k"):
                        vi, vj = T.axis.remap("SS", [i, j])
                        A[vi, vj] = 1.0
    """)
    e = _error(nested)
    assert (
        "loop 'j' is bound to threadIdx.x inside loop 'i' bound to it too, and uses it" in e.message
    )
    assert e.loc.line == 5


def test_cli_emits_ptx_and_gpu(tmp_path):
    from click.testing import CliRunner

    from tir_mlir.cli import main

    r = CliRunner().invoke(
        main, ["lower", str(DATA / "vector_add.tir"), "--target", "cuda", "--emit", "ptx"]
    )
    assert r.exit_code == 0 and ".visible .entry vector_add_kernel(" in r.output
    r = CliRunner().invoke(
        main, ["lower", str(DATA / "vector_add.tir"), "--target", "cuda", "--emit", "gpu"]
    )
    assert r.exit_code == 0
    assert "gpu.launch_func  @vector_add_kernel::@vector_add_kernel" in r.output


STUB_RUN = """
import ctypes, sys, numpy as np
stub = ctypes.CDLL(sys.argv[1], mode=ctypes.RTLD_GLOBAL)   # takes the place of libcuda.so.1
import tir_mlir
lib = tir_mlir.build(tir_mlir.load(sys.argv[2]), target="cuda")
a, b = np.ones(4096, np.float32), np.full(4096, 2.0, np.float32)
c = np.full(4096, 7.0, np.float32)
lib["vector_add"](a, b, c)
launch = list((ctypes.c_long * 8).in_dll(stub, "last_launch"))[:7]
print(launch, ctypes.c_int.in_dll(stub, "n_launch").value,
      ctypes.c_int.in_dll(stub, "n_ptx_loaded").value, c[0], c[-1])
"""


@pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler")
def test_host_side_runs_against_a_fake_driver(tmp_path):
    """Engine, PTX loading, launch configuration and copies, with no GPU: the fake driver
    records the launch; the kernel itself does not run, so C comes back unchanged."""
    stub = tmp_path / "libcuda.so.1"
    subprocess.run(
        [
            "cc",
            "-shared",
            "-fPIC",
            "-Wl,-soname,libcuda.so.1",
            "-o",
            str(stub),
            str(DATA / "libcuda_stub.c"),
        ],
        check=True,
    )
    p = subprocess.run(
        [sys.executable, "-c", STUB_RUN, str(stub), str(DATA / "vector_add.tir")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert p.returncode == 0, p.stderr
    assert p.stdout.split() == [
        "[32,",
        "1,",
        "1,",
        "128,",
        "1,",
        "1,",
        "0]",
        "1",
        "1",
        "7.0",
        "7.0",
    ]


def _have_gpu() -> bool:
    try:
        ctypes.CDLL("libcuda.so.1")
        return True
    except OSError:
        return False


gpu = pytest.mark.skipif(not _have_gpu(), reason="needs an NVIDIA GPU (libcuda.so.1)")


@pytest.mark.gpu
@gpu
@pytest.mark.parametrize("name", ["vector_add", "matmul", "softmax"])
def test_runs_on_gpu_like_numpy(name):
    rng = np.random.default_rng(0)
    lib = tir_mlir.build(programs()[name], target="cuda")
    if name == "vector_add":
        a, b = rng.random(4096, np.float32), rng.random(4096, np.float32)
        c = np.zeros(4096, np.float32)
        lib[name](a, b, c)
        np.testing.assert_allclose(c, a + b, rtol=1e-6)
    elif name == "matmul":
        a, b = rng.random((256, 256), np.float32), rng.random((256, 256), np.float32)
        c = np.zeros((256, 256), np.float32)
        lib[name](a, b, c)
        np.testing.assert_allclose(c, a @ b, rtol=1e-4)
    else:
        a = rng.random((64, 128), np.float32)
        b = np.zeros_like(a)
        lib[name](a, b)
        e = np.exp(a - a.max(1, keepdims=True))
        np.testing.assert_allclose(b, e / e.sum(1, keepdims=True), rtol=1e-5)


@pytest.mark.gpu
@gpu
def test_device_arrays_and_scratch_buffers_on_gpu():
    from tir_mlir.runtime import cuda

    lib = tir_mlir.build(tir_mlir.parse(SIBLINGS), target="cuda")
    a = np.arange(64, dtype=np.float32)
    a_d = cuda.array(a)
    b_d, s_d = cuda.array(np.zeros(32, np.float32)), cuda.array(np.zeros(4, np.float32))
    lib["f"](a_d, b_d, s_d)
    np.testing.assert_array_equal(b_d.numpy(), 2 * a[:32] + 2 * a[32:])
    assert lib.time_evaluator("f", number=5)(a_d, b_d, s_d).mean > 0
