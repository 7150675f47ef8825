"""Deploying cuda modules without a GPU: export_library (cubin inside) / load_module, DLPack
arguments used in place, time_evaluator with CUDA events. The host side runs against the fake
driver of tests/data/gpu/libcuda_stub.c (kernels are only recorded, memory is host memory);
running on a real GPU: tests/gpu/test_gpu_device.py."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import tir_mlir
from tir_mlir.errors import RuntimeCallError
from tir_mlir.runtime import cuda

DATA = Path(__file__).parent.parent / "data" / "gpu"
PTXAS = shutil.which("ptxas") or (
    "/usr/local/bin/ptxas" if Path("/usr/local/bin/ptxas").exists() else None
)
needs_tools = pytest.mark.skipif(
    PTXAS is None or shutil.which("cc") is None, reason="exporting needs ptxas and a C compiler"
)


def exported(tmp_path, arch="sm_80"):
    lib = tir_mlir.build(tir_mlir.load(DATA / "vector_add.tir"), target=f"cuda -arch={arch}")
    path = tmp_path / "vector_add.so"
    lib.export_library(path)
    return lib, path


@needs_tools
def test_export_embeds_a_cubin_and_loads_without_a_gpu(tmp_path):
    lib, path = exported(tmp_path)
    meta = json.loads(Path(str(path) + ".json").read_text())
    assert meta["target"] == "cuda -arch=sm_80"
    data = path.read_bytes()
    assert data.count(b"\x7fELF") == 2  # the library and the cubin inside it
    assert b".entry" not in data and b"vector_add_kernel" in data  # not PTX: a cubin
    loaded = tir_mlir.load_module(path)  # checks the files, opens nothing yet
    assert isinstance(loaded, cuda.CudaModule)
    assert loaded.sigs == lib.sigs and loaded.get_source() == lib.get_source()
    if not cuda.driver_available():
        with pytest.raises(RuntimeCallError, match="CUDA driver"):
            loaded["vector_add"](*[np.ones(4096, np.float32)] * 3)


@pytest.mark.parametrize(
    "built,device,ok",
    [
        ("sm_80", "sm_80", True),
        ("sm_80", "sm_86", True),
        ("sm_86", "sm_80", False),
        ("sm_80", "sm_90", False),
        ("sm_90a", "sm_90", True),
        ("sm_90a", "sm_100", False),
    ],
)
def test_which_gpus_run_a_cubin(built, device, ok):
    from tir_mlir.runtime.cuda_library import runs_on

    assert runs_on(built, device) is ok


@needs_tools
def test_a_cubin_for_another_gpu_is_refused_before_loading(tmp_path):
    _, path = exported(tmp_path, arch="sm_90")
    out = _run(
        STUB
        + """
lib = tir_mlir.load_module(sys.argv[2])
try:
    lib["vector_add"](*[np.ones(4096, np.float32)] * 3)
except RuntimeCallError as e:
    print(str(e).split(": ", 1)[1], counter("n_cubin_loaded"))
""",
        _stub(tmp_path),
        path,
    )
    assert " ".join(out) == (
        "its kernels are cubins for sm_90, which this GPU (sm_80) cannot "
        'run; export it with target="cuda -arch=sm_80" 0'
    )


@needs_tools
def test_a_changed_library_is_refused(tmp_path):
    _, path = exported(tmp_path)
    path.write_bytes(path.read_bytes()[:-100])
    with pytest.raises(RuntimeCallError, match="does not match"):
        tir_mlir.load_module(path)


STUB = """
import ctypes, sys, numpy as np
stub = ctypes.CDLL(sys.argv[1], mode=ctypes.RTLD_GLOBAL)   # takes the place of libcuda.so.1
import tir_mlir
from tir_mlir.errors import RuntimeCallError
from tir_mlir.runtime import cuda
def counter(name):
    return ctypes.c_int.in_dll(stub, name).value
"""

LOADED_RUN = (
    STUB
    + """
lib = tir_mlir.load_module(sys.argv[2])
a, b, c = np.ones(4096, np.float32), np.full(4096, 2.0, np.float32), np.zeros(4096, np.float32)
lib["vector_add"](a, b, c)
print(list((ctypes.c_long * 8).in_dll(stub, "last_launch"))[:6], counter("n_launch"),
      counter("n_cubin_loaded"), counter("n_ptx_loaded"))
"""
)

DLPACK_RUN = (
    STUB
    + '''
from tir_mlir.runtime import dlpack
deleted = []

class FakeCudaTensor:
    """A DLPack producer whose memory is 'on the GPU' (the fake driver's memory is host)."""
    def __init__(self, array):
        self.array = array
        m = dlpack._Managed()
        t = m.dl_tensor
        t.data, t.ndim, t.byte_offset = array.ctypes.data, array.ndim, 0
        t.device.device_type, t.device.device_id = dlpack.CUDA, 0
        t.dtype.code, t.dtype.bits, t.dtype.lanes = 2, 32, 1
        self.shape = (ctypes.c_int64 * array.ndim)(*array.shape)
        t.shape = ctypes.cast(self.shape, ctypes.POINTER(ctypes.c_int64))
        self.deleter = type(m.deleter)(lambda p: deleted.append(1))
        m.deleter = self.deleter
        self.managed = m
    def __dlpack_device__(self):
        return (dlpack.CUDA, 0)
    def __dlpack__(self, stream=None):
        new = ctypes.pythonapi.PyCapsule_New
        new.restype, new.argtypes = ctypes.py_object, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
        return new(ctypes.addressof(self.managed), b"dltensor", None)

lib = tir_mlir.build(tir_mlir.load(sys.argv[2]), target="cuda")
x = [FakeCudaTensor(np.full(4096, v, np.float32)) for v in (1.0, 2.0, 0.0)]
view = cuda.from_dlpack(x[0])
same = view.ptr == x[0].array.ctypes.data and view.shape == (4096,) and view.dtype == np.float32
del view
lib["vector_add"](*x)
t = lib.time_evaluator("vector_add", number=4, repeat=2)(*x)
print(same, counter("n_alloc"), counter("n_launch"), len(deleted), t.results)
'''
)


def _stub(tmp_path):
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
    return stub


def _run(script, *args):
    p = subprocess.run(
        [sys.executable, "-c", script, *map(str, args)], capture_output=True, text=True, timeout=120
    )
    assert p.returncode == 0, p.stderr
    return p.stdout.split()


@needs_tools
def test_loaded_library_launches_its_cubin_against_a_fake_driver(tmp_path):
    _, path = exported(tmp_path)
    out = _run(LOADED_RUN, _stub(tmp_path), path)
    # the launch configuration, one launch, the cubin loaded as such (no PTX JIT)
    assert out == ["[32,", "1,", "1,", "128,", "1,", "1]", "1", "1", "0"]


@pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler")
def test_dlpack_tensors_are_used_in_place_and_timed_with_events(tmp_path):
    out = _run(DLPACK_RUN, _stub(tmp_path), DATA / "vector_add.tir")
    same, n_alloc, n_launch, n_deleted = out[:4]
    assert same == "True"
    assert n_alloc == "0"  # no device copy of any argument
    # one call, then time_evaluator: a warm-up and 2 x 4 timed calls
    assert n_launch == str(1 + 1 + 8)
    assert int(n_deleted) == 1 + 3 + 3  # every capsule taken was released
    # the fake driver's events say 0.5 ms per 4 calls
    assert out[4:] == ["(0.000125,", "0.000125)"]


def test_from_dlpack_refuses_host_and_strided_tensors():
    with pytest.raises(RuntimeCallError, match="device type 1, not a CUDA GPU"):
        cuda.from_dlpack(np.ones((4, 4), np.float32))
    with pytest.raises(RuntimeCallError, match="not C-contiguous"):
        cuda.from_dlpack(np.ones((4, 8), np.float32).T)


def test_dlpack_tensor_reads_shape_dtype_and_address():
    from tir_mlir.runtime import dlpack

    a = np.arange(12, dtype=np.float16).reshape(3, 4)
    t = dlpack.Tensor(a)
    assert (t.device_type, t.shape, t.dtype, t.ptr) == (
        dlpack.CPU,
        (3, 4),
        np.float16,
        a.ctypes.data,
    )
    t.close()
