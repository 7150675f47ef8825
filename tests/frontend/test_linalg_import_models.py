"""torch-mlir's linalg output of four PyTorch models, and a JAX function's StableHLO lowered to
linalg by IREE's input conversion (recorded in tests/data/linalg by its regenerate.py),
imported with `from_linalg`, built and run: numbers against numpy references computed from the
recorded weights and against the producer's recorded outputs; with torch installed, also
against the live torch model. Then printed TVMScript parses back to the same module, and an
imported function is scheduled like any program."""

import importlib.util
import math
from pathlib import Path

import numpy as np
import pytest

import tir_mlir

DATA = Path(__file__).parent.parent / "data" / "linalg"
TORCH_MODELS = ("mlp", "layernorm", "conv_relu", "attention", "transformer_block", "small_cnn")
MODELS = (*TORCH_MODELS, "jax_dense_gelu_layernorm")

try:
    import torch
except ImportError:  # the numpy references and torch's recorded numbers still run
    torch = None


def _softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def _ref_mlp(d):
    erf = np.vectorize(math.erf)
    h = d["in0"] @ d["w.fc1.weight"].T + d["w.fc1.bias"]
    h = 0.5 * h * (1 + erf(h / math.sqrt(2)))
    return _softmax(h @ d["w.fc2.weight"].T + d["w.fc2.bias"])


def _ref_layernorm(d):
    x = d["in0"].astype(np.float64)
    mean, var = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + 1e-5) * d["w.norm.weight"] + d["w.norm.bias"]


def _ref_conv_relu(d):
    x = np.pad(d["in0"], ((0, 0), (0, 0), (1, 1), (1, 1)))
    win = np.lib.stride_tricks.sliding_window_view(x, (3, 3), axis=(2, 3))  # n c h w kh kw
    y = np.einsum("nchwij,fcij->nfhw", win, d["w.conv.weight"])
    return np.maximum(y + d["w.conv.bias"][None, :, None, None], 0)


def _ref_attention(d):
    q, k, v = d["in0"], d["in1"], d["in2"]
    return _softmax(q @ k.swapaxes(-1, -2) / math.sqrt(q.shape[-1])) @ v


def _layernorm(x, w, b):
    return (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-5) * w + b


def _ref_transformer_block(d):
    x = d["in0"]
    qkv = x @ d["w.qkv.weight"].T + d["w.qkv.bias"]
    q, k, v = (t.reshape(1, 8, 2, 8).transpose(0, 2, 1, 3) for t in np.split(qkv, 3, -1))
    scores = q @ k.swapaxes(-1, -2) / math.sqrt(8)
    scores = np.where(np.tril(np.ones((8, 8), bool)), scores, -np.inf)
    a = (_softmax(scores) @ v).transpose(0, 2, 1, 3).reshape(1, 8, 16)
    return _layernorm(
        x + a @ d["w.proj.weight"].T + d["w.proj.bias"], d["w.norm.weight"], d["w.norm.bias"]
    )


def _ref_small_cnn(d):
    x = np.pad(d["in0"], ((0, 0), (0, 0), (1, 1), (1, 1)))
    win = np.lib.stride_tricks.sliding_window_view(x, (3, 3), axis=(2, 3))[:, :, ::2, ::2]
    y = np.einsum("nchwij,fcij->nfhw", win, d["w.conv.weight"])
    y = y + d["w.conv.bias"][:, None, None]
    scale = d["w.bn.weight"] / np.sqrt(d["w.bn.running_var"] + 1e-5)
    y = (y - d["w.bn.running_mean"][:, None, None]) * scale[:, None, None] + d["w.bn.bias"][
        :, None, None
    ]
    y = np.maximum(y, 0).reshape(2, 4, 4, 2, 4, 2).max(axis=(3, 5))
    z = y.mean(axis=(2, 3)) @ d["w.fc.weight"].T + d["w.fc.bias"]
    return 1 / (1 + np.exp(-z))


def _ref_jax_dense_gelu_layernorm(d):
    h = d["in0"] @ d["w.w"] + d["w.b"]
    h = 0.5 * h * (1 + np.tanh(math.sqrt(2 / math.pi) * (h + 0.044715 * h**3)))
    mean, var = h.mean(-1, keepdims=True), h.var(-1, keepdims=True)
    return (h - mean) / np.sqrt(var + 1e-5) * d["w.g"]


REFERENCES = {
    "mlp": _ref_mlp,
    "layernorm": _ref_layernorm,
    "conv_relu": _ref_conv_relu,
    "attention": _ref_attention,
    "transformer_block": _ref_transformer_block,
    "small_cnn": _ref_small_cnn,
    "jax_dense_gelu_layernorm": _ref_jax_dense_gelu_layernorm,
}


def _load(name):
    path = DATA / f"{name}.mlir"
    return tir_mlir.from_linalg(path.read_text(), str(path)), dict(np.load(DATA / f"{name}.npz"))


def _run(mod, data, func="main"):
    inputs = [data[f"in{i}"] for i in range(sum(k.startswith("in") for k in data))]
    outs = [np.zeros_like(data[f"out{i}"]) for i in range(sum(k.startswith("out") for k in data))]
    tir_mlir.build(mod)[func](*inputs, *outs)
    return outs


def _torch_model(name, data):
    spec = importlib.util.spec_from_file_location("linalg_regenerate", DATA / "regenerate.py")
    regen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(regen)
    model, _ = regen.models()[name]
    model.load_state_dict(
        {k[2:]: torch.from_numpy(v) for k, v in data.items() if k.startswith("w.")}
    )
    return model.eval()


@pytest.mark.parametrize("name", MODELS)
def test_model_runs_like_numpy_and_torch(name):
    mod, data = _load(name)
    assert list(mod) == ["main"]
    (out,) = _run(mod, data)
    np.testing.assert_allclose(out, REFERENCES[name](data), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(out, data["out0"], rtol=1e-4, atol=1e-5)  # the producer's
    if torch is not None and name in TORCH_MODELS:
        args = [
            torch.from_numpy(data[f"in{i}"]) for i in range(sum(k.startswith("in") for k in data))
        ]
        with torch.no_grad():
            expected = _torch_model(name, data)(*args).numpy()
        np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("name", MODELS)
def test_printed_model_parses_back_to_the_same_module(name):
    mod, _ = _load(name)
    tir_mlir.assert_structural_equal(tir_mlir.parse(mod.script()), mod)


def test_mlp_signature_and_blocks():
    """Arguments, then one output per result; one block per op, named after it; fills folded
    into the matmuls' T.init; the weights' transposes are transposed constants, not blocks;
    softmax's max is torch-mlir's two-output argmax generic whose index nothing reads: a max."""
    mod, _ = _load("mlp")
    text = mod.script()
    assert 'def main(arg0: T.Buffer((4, 16), "float32"), out: T.Buffer((4, 8), "float32")):' in text
    blocks = [
        line.split('"')[1] for line in text.splitlines() if line.strip().startswith("with T.block(")
    ]
    assert blocks == [
        "matmul",
        "generic_add",
        "generic_div_erf_add",
        "matmul_1",
        "generic_add_1",
        "generic_max",
        "expand_shape",
        "generic_sub",
        "generic_exp",
        "generic_sum",
        "generic_div",
    ]
    assert text.count("with T.init():") == 4  # two matmuls, the max, the sum
    # fc1.weight (32, 16) transposed at import: the matmul reads it along its rows
    assert "cst_6_t_1 = T.decl_buffer((16, 32), data=cst_6_t)" in text
    assert "arg0[v_i, v_k] * cst_6_t_1[v_k, v_j]" in text
    assert "T.decl_buffer((32, 16)" not in text  # the untransposed weight is gone
    assert "generic_max[v_ax0] = T.max(generic_add_1[v_ax0, v_k], generic_max[v_ax0])" in text
    assert "int64" not in text
    # a keepdim reduction iterates its unit dimension, as TVM's keepdims reductions do
    assert "generic_sum[v_ax0, v_ax1] = generic_exp[v_ax0, v_k] + generic_sum[v_ax0, v_ax1]" in text


def test_conv_relu_blocks():
    mod, _ = _load("conv_relu")
    text = mod.script()
    assert "for n, f, oh, ow, c, kh, kw in T.grid(1, 8, 16, 16, 3, 3, 3):" in text
    assert 'v_n, v_f, v_oh, v_ow, v_c, v_kh, v_kw = T.axis.remap("SSSSRRR"' in text
    # the bias broadcast into the conv's init is its T.init: a reduction block
    assert (
        "with T.init():\n                conv_2d_nchw_fchw[v_n, v_f, v_oh, v_ow] = "
        "cst_1_1[v_f]" in text
    )
    assert 'T.block("broadcast")' not in text
    assert "T.if_then_else(1 <= v_ax2 and v_ax2 < 17 and 1 <= v_ax3 and v_ax3 < 17" in text


def test_scheduled_import_runs_like_unscheduled():
    """split/reorder/parallel/vectorize the MLP's first matmul, inline its bias, tile the
    conv: numbers unchanged."""
    mod, data = _load("mlp")
    sch = tir_mlir.Schedule(mod)
    i, j, k = sch.get_loops(sch.get_block("matmul"))
    j0, j1 = sch.split(j, factors=[None, 8])
    sch.reorder(i, j0, k, j1)
    sch.parallel(i)
    sch.vectorize(j1)
    sch.compute_inline(sch.get_block("generic_add"))
    assert "T.vectorized(8)" in sch.mod.script()
    (out,) = _run(sch.mod, data)
    np.testing.assert_allclose(out, _ref_mlp(data), rtol=1e-4, atol=1e-5)

    mod, data = _load("conv_relu")
    sch = tir_mlir.Schedule(mod)
    sch.compute_inline(sch.get_block("pad"))
    loops = sch.get_loops(sch.get_block("conv_2d_nchw_fchw"))
    ow0, ow1 = sch.split(loops[3], factors=[None, 8])
    sch.reorder(ow0, *loops[4:], ow1)
    sch.vectorize(ow1)
    sch.reverse_compute_at(sch.get_block("generic_relu"), ow0)
    (out,) = _run(sch.mod, data)
    np.testing.assert_allclose(out, _ref_conv_relu(data), rtol=1e-4, atol=1e-5)


def test_import_from_a_module_object():
    """An mlir.ir.Module (any bindings: torch-mlir's own) is read through its text."""
    from mlir import ir

    from tir_mlir.context import get_context

    with get_context():
        module = ir.Module.parse((DATA / "conv_relu.mlir").read_text())
    mod = tir_mlir.from_linalg(module)
    (out,) = _run(mod, dict(np.load(DATA / "conv_relu.npz")))
    np.testing.assert_allclose(
        out, _ref_conv_relu(dict(np.load(DATA / "conv_relu.npz"))), rtol=1e-4, atol=1e-5
    )


def test_softmax_of_the_mlp_fuses_per_row():
    """torch's keepdim reductions (softmax's sum into a (4, 1) buffer) move under their
    consumer's row loop with compute_at: the import iterates the unit dimension, so the
    block's domain is derivable."""
    mod, data = _load("mlp")
    sch = tir_mlir.Schedule(mod)
    row = sch.get_loops(sch.get_block("generic_div"))[0]
    sch.compute_at(sch.get_block("generic_sum"), row)
    sch.compute_at(sch.get_block("generic_exp"), row)
    sch.compute_at(sch.get_block("generic_sub"), row)
    assert "v_ax1 = T.axis.spatial(1, 0)" in sch.mod.script()
    (out,) = _run(sch.mod, data)
    np.testing.assert_allclose(out, _ref_mlp(data), rtol=1e-4, atol=1e-5)


def test_equal_functions_import_under_the_same_names():
    """Buffers are named by position and by the op writing them, never by SSA names: two
    func.funcs computing the same thing import to the same text but for the function name,
    so a schedule tuned on one (`tir-mlir tune` on a model) replays on the other."""
    func = """
func.func @{name}(%{x}: tensor<8x8xf32>, %{w}: tensor<8x8xf32>) -> tensor<8x8xf32> {{
  %zero = arith.constant 0.0 : f32
  %{e} = tensor.empty() : tensor<8x8xf32>
  %{f} = linalg.fill ins(%zero : f32) outs(%{e} : tensor<8x8xf32>) -> tensor<8x8xf32>
  %m = linalg.matmul ins(%{x}, %{w} : tensor<8x8xf32>, tensor<8x8xf32>)
                     outs(%{f} : tensor<8x8xf32>) -> tensor<8x8xf32>
  return %m : tensor<8x8xf32>
}}
"""
    mod = tir_mlir.from_linalg(
        func.format(name="a", x="x", w="w", e="e", f="f")
        + func.format(name="b", x="in", w="weight", e="empty", f="z")
    )
    texts = [
        tir_mlir.IRModule({n: mod[n]}).script().replace(f"def {n}(", "def f(") for n in ("a", "b")
    ]
    assert texts[0] == texts[1]
