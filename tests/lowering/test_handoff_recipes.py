"""The hand-off form of every emitted stage (`tir-mlir lower --emit affine|scf|llvm-dialect`)
keeps what a schedule asked for, and docs/handoff.md's upstream pipeline runs it: scheduled
matmul + ReLU, conv2d and softmax (parallel, vectorize, a cache_write tile, compute_at) go
through `mlir-opt` (TO_LLVM, read from the doc), `mlir-translate`, `llc` and `cc`; the OpenMP
ops are there and the numbers equal tir-mlir's own build."""

import ctypes
import re
import subprocess

import numpy as np
import pytest

import tir_mlir
from tir_mlir.passes.lowering import llvm_ir
from tir_mlir.passes.lowering.handoff import handoff_text
from tir_mlir.runtime.descriptor import descriptor

import handoff_workloads as W
from handoff_doc import block

SITE = llvm_ir.MLIR_BIN.parent.parent
OMP_LIB = SITE / "cmeel.prefix" / "lib"
TO_LLVM = re.search(r'^TO_LLVM="(.*)"$', block("handoff-setup"), re.M)[1]
SHAPES = {
    "mm_relu": [(64, 64)] * 3,
    "conv2d": [(1, 8, 10, 10), (16, 8, 3, 3), (1, 16, 8, 8)],
    "softmax": [(16, 64)] * 2,
}
_MODS = {}


def _mod(name):
    if name not in _MODS:
        _MODS[name] = W.WORKLOADS[name]()
    return _MODS[name]


def _tool(args, text=None):
    r = subprocess.run(args, input=text, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-3000:]
    return r.stdout


def _run_upstream(llvm_dialect: str, name: str, arrays, tmp_path):
    """Compile an llvm-dialect module with mlir-translate, llc and cc into a shared object and
    call `_mlir_ciface_<name>` on the arrays (in place)."""
    ll = _tool([str(llvm_ir.MLIR_BIN / "mlir-translate"), "--mlir-to-llvmir"], llvm_dialect)
    (tmp_path / "k.ll").write_text(ll)
    _tool(
        [
            str(SITE / "llvm" / "bin" / "llc"),
            "-O3",
            "-filetype=obj",
            "-relocation-model=pic",
            str(tmp_path / "k.ll"),
            "-o",
            str(tmp_path / "k.o"),
        ]
    )
    so = tmp_path / "k.so"
    _tool(
        [
            "cc",
            "-shared",
            str(tmp_path / "k.o"),
            "-o",
            str(so),
            f"-L{OMP_LIB}",
            "-lomp",
            f"-Wl,-rpath,{OMP_LIB}",
            "-lm",
        ]
    )
    fn = getattr(ctypes.CDLL(str(so)), "_mlir_ciface_" + name)
    fn.restype, fn.argtypes = None, [ctypes.c_void_p] * len(arrays)
    descs = [descriptor(a) for a in arrays]
    fn(*[ctypes.addressof(d) for d in descs])


def _inputs(name):
    rng = np.random.default_rng(0)
    return [rng.standard_normal(s).astype("float32") for s in SHAPES[name]]


@pytest.mark.parametrize("stage", ["affine", "scf", "llvm-dialect"])
@pytest.mark.parametrize("name", sorted(W.WORKLOADS))
def test_stage_runs_through_upstream_tools(name, stage, tmp_path):
    mod = _mod(name)
    text = handoff_text(mod.module, stage)
    assert "tir." not in text
    if stage == "affine":
        assert "affine.parallel" in text and "vector.store" in text
        assert not re.search(r"^\s*scf\.", text, re.M)
    elif stage == "scf":
        assert "scf.parallel" in text and "vector.store" in text
        assert not re.search(r"^\s*affine\.", text, re.M)
    if stage == "llvm-dialect":
        lowered = text
    else:
        (tmp_path / "k.mlir").write_text(text)
        lowered = _tool(
            [
                str(llvm_ir.MLIR_BIN / "mlir-opt"),
                str(tmp_path / "k.mlir"),
                f"--pass-pipeline={TO_LLVM}",
            ]
        )
        # The parallel loop is an OpenMP worksharing loop, not a serial one.
        assert "omp.parallel" in lowered and "omp.wsloop" in lowered
    expected = _inputs(name)
    tir_mlir.build(mod)[name](*expected)
    got = _inputs(name)
    _run_upstream(lowered, name, got, tmp_path)
    for e, g in zip(expected, got):
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("stage", ["affine", "scf", "llvm-dialect"])
def test_stage_is_canonical(stage, tmp_path):
    """What `--emit` prints is a fixed point of upstream canonicalize + cse."""
    text = handoff_text(_mod("mm_relu").module, stage)
    (tmp_path / "k.mlir").write_text(text)
    again = _tool(
        [str(llvm_ir.MLIR_BIN / "mlir-opt"), str(tmp_path / "k.mlir"), "--canonicalize", "--cse"]
    )
    assert again.rstrip() == text.rstrip()


def test_scf_stage_is_small():
    """The scheduled matmul's scf stage, canonicalized: its constants are not repeated per use."""
    text = handoff_text(_mod("mm_relu").module, "scf")
    assert len(text.splitlines()) < 130 and text.count("arith.constant") < 20


def test_doc_pipeline_order_is_what_keeps_alloca_scopes_valid(tmp_path):
    """A per-thread tile under a parallel loop: with `convert-scf-to-cf` before
    `finalize-memref-to-llvm`, upstream's alloca_scope breaks (why the doc orders them so)."""
    text = handoff_text(_mod("softmax").module, "scf")
    assert re.search(r"scf\.parallel.*\n\s+%alloca", text)
    (tmp_path / "k.mlir").write_text(text)
    swapped = TO_LLVM.replace(
        "finalize-memref-to-llvm,convert-scf-to-cf", "convert-scf-to-cf,finalize-memref-to-llvm"
    )
    assert swapped != TO_LLVM
    r = subprocess.run(
        [
            str(llvm_ir.MLIR_BIN / "mlir-opt"),
            str(tmp_path / "k.mlir"),
            f"--pass-pipeline={swapped}",
        ],
        capture_output=True,
        text=True,
    )
    assert r.returncode != 0 and "alloca_scope" in r.stderr


CARRIED = """
@T.prim_func
def carried(A: T.Buffer((16,), "float32"), B: T.Buffer((17,), "float32")):
    for i in T.vectorized(16):
        with T.block("B"):
            vi = T.axis.spatial(16, i)
            B[vi + 1] = B[vi] + A[vi]
"""


@pytest.mark.parametrize("stage", ["affine", "scf"])
def test_refused_vectorized_loop_keeps_its_hint(stage, tmp_path):
    """A vectorized loop whose lanes read what earlier lanes wrote cannot be vector ops: at
    the affine stage too it is an scf.for with LLVM's vectorize hint (lower-affine would drop
    an attribute), and it still computes the running sums."""
    mod = tir_mlir.parse(CARRIED)
    text = handoff_text(mod.module, stage)
    assert re.search(r"loop_annotation<vectorize = #\w+, unroll = #\w+>", text)
    assert "} {loop_annotation = #loop_annotation}" in text and "vector." not in text
    (tmp_path / "k.mlir").write_text(text)
    lowered = _tool(
        [str(llvm_ir.MLIR_BIN / "mlir-opt"), str(tmp_path / "k.mlir"), f"--pass-pipeline={TO_LLVM}"]
    )
    assert "llvm.loop = #" in lowered or "loop_annotation" in lowered
    a, b = np.arange(16, dtype="float32"), np.zeros(17, "float32")
    _run_upstream(lowered, "carried", [a, b], tmp_path)
    np.testing.assert_array_equal(b[1:], np.cumsum(np.arange(16, dtype="float32")))
