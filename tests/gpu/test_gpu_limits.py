"""A CUDA build refuses kernels no GPU can launch (passes/lowering/gpu_limits.py): too many
threads or blocks, too much shared or local memory, a global buffer larger than any GPU; each
with a located error. Building needs no GPU. (The buffers are indexed through data, `I[vi]`, so
that compact-buffers cannot shrink them.)"""

import pytest

import tir_mlir
from tir_mlir.errors import BuildError

PROG = """@T.prim_func
def f(A: T.Buffer(({n},), "float32"), B: T.Buffer(({n},), "float32"), I: T.Buffer(({n},), "int64")):
    S = T.alloc_buffer(({shared},), "float32", scope="shared")
    L = T.alloc_buffer(({local},), "float32", scope="local")
    G = T.alloc_buffer(({glob},), "float32")
    for bx in T.thread_binding({blocks}, thread="blockIdx.{baxis}"):
        for tx in T.thread_binding({threads}, thread="threadIdx.{taxis}"):
            with T.block("S"):
                vi = T.axis.spatial({n}, bx * {threads} + tx)
                S[I[vi] % {shared}] = A[vi]
                L[I[vi] % {local}] = S[I[vi] % {shared}]
                G[I[vi] % {glob}] = L[I[vi] % {local}]
                B[vi] = G[I[vi] % {glob}]
"""


def prog(blocks=4, threads=256, shared=256, local=4, glob=1024, baxis="x", taxis="x"):
    text = PROG.format(
        n=blocks * threads,
        blocks=blocks,
        threads=threads,
        shared=shared,
        local=local,
        glob=glob,
        baxis=baxis,
        taxis=taxis,
    )
    return tir_mlir.parse(text, "gpu.tir")


def test_a_kernel_within_the_limits_builds():
    lib = tir_mlir.build(prog(threads=1024, shared=12 * 1024, local=1024), target="cuda")
    assert ".entry f_kernel" in lib.get_source()


@pytest.mark.parametrize(
    "kw, message",
    [
        (
            {"threads": 2048},
            "the kernel launches 2048 threads per block along x, more than the 1024 a GPU allows",
        ),
        (
            {"threads": 128, "taxis": "z"},
            "launches 128 threads per block along z, more than the 64",
        ),
        (
            {"blocks": 70000, "threads": 1, "baxis": "y"},
            "the kernel launches 70000 blocks per grid along y, more than the 65535 a GPU allows",
        ),
        (
            {"shared": 13 * 1024},
            "the kernel's shared buffers need 53248 bytes, more than the 49152 a GPU block has",
        ),
        (
            {"local": 200 * 1024},
            "the kernel's local buffers need 819200 bytes per thread, more than "
            "the 524288 a GPU thread has",
        ),
        (
            {"glob": 1 << 37},
            "buffer 'G' needs 549755813888 bytes (512.0 GiB) of GPU memory, more than any GPU has",
        ),
    ],
)
def test_kernels_no_gpu_can_launch_are_refused(kw, message):
    with pytest.raises(BuildError) as e:
        tir_mlir.build(prog(**kw), target="cuda")
    assert message in str(e.value), str(e.value)
    assert e.value.loc is not None and e.value.loc.file == "gpu.tir"


def test_shared_memory_error_names_each_buffer():
    with pytest.raises(BuildError) as e:
        tir_mlir.build(prog(shared=16 * 1024), target="cuda")
    assert str(e.value.loc) == "gpu.tir:6:5"
    assert [(m, str(loc)) for m, loc in e.value.notes] == [
        ("shared buffer 'S' takes 65536 bytes", "gpu.tir:3:5")
    ]


def test_global_buffers_are_checked_against_the_free_gpu_memory(monkeypatch):
    """The compiled code does not check its device allocations, so the call checks that they
    fit before launching (the free memory faked here: no GPU needed)."""
    from tir_mlir.errors import AllocationError
    from tir_mlir.runtime import cuda

    lib = tir_mlir.build(prog(glob=1000), target="cuda")
    assert lib.global_bytes == {"f": 4000}
    monkeypatch.setattr(cuda.CudaFunction, "_device_args", lambda self, arrays: [])
    monkeypatch.setattr(cuda, "free_memory", lambda: 3999)
    with pytest.raises(
        AllocationError,
        match="f: its global buffers need 4000 bytes of GPU memory, more than the GPU has free",
    ):
        lib["f"].prepare()
    monkeypatch.setattr(cuda, "free_memory", lambda: 4000)
    assert callable(lib["f"].prepare())  # fits: ready to launch
