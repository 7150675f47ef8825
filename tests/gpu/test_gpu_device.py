"""On a real GPU (skipped without one): the tensor-core matmul, an exported and reloaded
library, DLPack tensors from torch/cupy, and CUDA-event timing."""

import importlib.util
import shutil
from pathlib import Path

import numpy as np
import pytest

import tir_mlir
from tir_mlir.runtime import cuda

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(
        not cuda.gpu_available(), reason="needs an NVIDIA GPU and its driver (none found)"
    ),
]
ROOT = Path(__file__).resolve().parent.parent.parent
_spec = importlib.util.spec_from_file_location(
    "gpu_tensorcore", ROOT / "examples" / "gpu_tensorcore.py"
)
example = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(example)


def _inputs(n, seed=0):
    rng = np.random.default_rng(seed)
    return (
        rng.standard_normal((n, n)).astype(np.float16),
        rng.standard_normal((n, n)).astype(np.float16),
    )


@pytest.mark.parametrize(
    "kind,dtype", [("wmma", "float16"), ("mma", "float16"), ("mma", "bfloat16")]
)
@pytest.mark.parametrize("n", [256, 1024])
def test_tensor_core_matmul_on_gpu(n, kind, dtype):
    from tir_mlir.dtypes import numpy_dtype

    sch = example.wmma_matmul(tir_mlir.Schedule(example.matmul(n, dtype)), kind=kind, dtype=dtype)
    lib = tir_mlir.build(sch.mod, target=f"cuda -arch={cuda.device_arch()}")
    a, b = (x.astype(numpy_dtype(dtype)) for x in _inputs(n))
    c = np.zeros((n, n), np.float32)
    name = f"matmul_{example.SHORT[dtype]}"
    lib[name](a, b, c)
    np.testing.assert_allclose(c, a.astype(np.float32) @ b.astype(np.float32), rtol=1e-3, atol=1e-2)
    t = lib.time_evaluator(name, number=5, repeat=2)(a, b, c)
    assert 0 < t.min <= t.max


@pytest.mark.skipif(
    shutil.which("ptxas") is None and not Path("/usr/local/bin/ptxas").exists(),
    reason="exporting needs ptxas",
)
def test_exported_library_runs_on_gpu(tmp_path):
    sch = example.wmma_matmul(tir_mlir.Schedule(example.matmul_f16(256)))
    target = f"cuda -arch={cuda.device_arch()}"  # a cubin runs on its own arch
    tir_mlir.build(sch.mod, target=target).export_library(tmp_path / "mm.so")
    lib = tir_mlir.load_module(tmp_path / "mm.so")
    a, b = _inputs(256, 1)
    c = np.zeros((256, 256), np.float32)
    lib["matmul_f16"](a, b, c)
    np.testing.assert_allclose(c, a.astype(np.float32) @ b.astype(np.float32), rtol=1e-3, atol=1e-2)


@pytest.mark.parametrize("framework", ["torch", "cupy"])
def test_dlpack_tensors_in_place_on_gpu(framework):
    fw = pytest.importorskip(framework)
    lib = tir_mlir.build(
        example.wmma_matmul(tir_mlir.Schedule(example.matmul_f16(256))).mod,
        target=f"cuda -arch={cuda.device_arch()}",
    )
    a, b = _inputs(256, 2)
    if framework == "torch":
        ad, bd = (fw.from_numpy(x).cuda() for x in (a, b))
        cd = fw.zeros((256, 256), dtype=fw.float32, device="cuda")
    else:
        ad, bd, cd = fw.asarray(a), fw.asarray(b), fw.zeros((256, 256), fw.float32)
    lib["matmul_f16"](ad, bd, cd)
    c = cd.cpu().numpy() if framework == "torch" else fw.asnumpy(cd)
    np.testing.assert_allclose(c, a.astype(np.float32) @ b.astype(np.float32), rtol=1e-3, atol=1e-2)
