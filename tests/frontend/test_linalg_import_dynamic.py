"""Dynamic shapes in the linalg import: `tensor<?x16xf32>` / `memref<?x?xf32>` arguments become
one symbolic kernel (`n = T.int32()` bound by `T.match_buffer` shapes) that runs at any size.
torch-mlir's output for models exported with `torch.export.Dim` dimensions is recorded in
tests/data/linalg/*_dynamic.mlir (regenerate.py), so these tests run without torch; numbers
against numpy at several sizes (primes among them) from one build, and against torch's
recorded outputs; hand-written linalg for the size arithmetic and the refusals."""

import math
from pathlib import Path

import numpy as np
import pytest

import tir_mlir
import tir_mlir.meta_schedule as ms
from tir_mlir.errors import TIRParseError

DATA = Path(__file__).resolve().parents[1] / "data" / "linalg"
RNG = np.random.default_rng(0)


def _rand(*shape):
    return RNG.standard_normal(shape).astype("float32")


def _softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def _mlp(x, w):
    erf = np.vectorize(math.erf)
    h = x @ w["fc1.weight"].T + w["fc1.bias"]
    h = 0.5 * h * (1 + erf(h / math.sqrt(2)))
    return _softmax(h @ w["fc2.weight"].T + w["fc2.bias"])


def _layernorm(x, w):
    x = x.astype(np.float64)
    mean, var = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + 1e-5) * w["norm.weight"] + w["norm.bias"]


def _conv_relu(x, w):
    x = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    win = np.lib.stride_tricks.sliding_window_view(x, (3, 3), axis=(2, 3))
    y = np.einsum("nchwij,fcij->nfhw", win, w["conv.weight"])
    return np.maximum(y + w["conv.bias"][None, :, None, None], 0)


def _flatten_linear(x, w):
    y = x.reshape(-1, 8) @ w["fc.weight"].T + w["fc.bias"]
    return y.reshape(x.shape[0], 4, 6).sum(1)


# name -> (numpy reference, input shape at sizes (n, m), the kernel's signature lines)
MODELS = {
    "mlp_dynamic": (
        _mlp,
        lambda n, m: (n, 16),
        [
            "n = T.int32()",
            "arg0 = T.match_buffer(arg0_handle, (n, 16))",
            "out = T.match_buffer(out_handle, (n, 8))",
        ],
    ),
    "layernorm_dynamic": (
        _layernorm,
        lambda n, m: (n, m, 32),
        [
            "n, m = T.int32(), T.int32()",
            "arg0 = T.match_buffer(arg0_handle, (n, m, 32))",
            "out = T.match_buffer(out_handle, (n, m, 32))",
        ],
    ),
    "conv_relu_dynamic": (
        _conv_relu,
        lambda n, m: (n, 3, 16, 16),
        [
            "arg0 = T.match_buffer(arg0_handle, (n, 3, 16, 16))",
            "out = T.match_buffer(out_handle, (n, 8, 16, 16))",
            "pad = T.alloc_buffer((n, 3, 18, 18))",
        ],
    ),
    # the collapse's size (n * 4) and the expand's (n * 4 // 4, from torch's arith.divsi)
    "flatten_linear_dynamic": (
        _flatten_linear,
        lambda n, m: (n, 4, 8),
        [
            "arg0 = T.match_buffer(arg0_handle, (n, 4, 8))",
            "collapse_shape = T.alloc_buffer((n * 4, 8))",
            "expand_shape = T.alloc_buffer((n, 4, 6))",
        ],
    ),
}
SIZES = [(1, 1), (2, 7), (7, 3), (13, 5)]


def _load(name):
    path = DATA / f"{name}.mlir"
    data = dict(np.load(DATA / f"{name}.npz"))
    return (
        tir_mlir.from_linalg(path.read_text(), str(path)),
        data,
        {k[2:]: v for k, v in data.items() if k.startswith("w.")},
    )


@pytest.mark.parametrize("name", MODELS)
def test_dynamic_model_is_one_kernel_for_every_size(name):
    mod, data, weights = _load(name)
    ref, shape, lines = MODELS[name]
    text = mod.script()
    for line in lines:
        assert f"    {line}\n" in text
    tir_mlir.assert_structural_equal(tir_mlir.parse(text), mod)
    lib = tir_mlir.build(mod)
    out = np.zeros_like(data["out0"])
    lib["main"](data["in0"], out)  # torch's example input and its recorded output
    np.testing.assert_allclose(out, data["out0"], rtol=1e-4, atol=1e-5)
    for n, m in SIZES:
        x = _rand(*shape(n, m))
        expected = ref(x, weights)
        out = np.zeros(expected.shape, "float32")
        lib["main"](x, out)
        np.testing.assert_allclose(
            out, expected, rtol=1e-4, atol=1e-5, err_msg=f"{name} at {shape(n, m)}"
        )


def test_mismatched_sizes_are_refused_at_the_call():
    mod, _, _ = _load("mlp_dynamic")
    lib = tir_mlir.build(mod)
    with pytest.raises(Exception, match="out"):
        lib["main"](_rand(5, 16), np.zeros((4, 8), "float32"))


def test_scheduled_dynamic_mlp_runs_at_every_size():
    mod, _, weights = _load("mlp_dynamic")
    sch = tir_mlir.Schedule(mod)
    block = sch.get_block("matmul")
    i, j, k = sch.get_loops(block)
    io, ii = sch.split(i, [None, 4])
    sch.reorder(io, ii, k, j)
    sch.parallel(io)
    sch.vectorize(j)
    text = sch.mod.script()
    assert "for i_0 in T.parallel((n + 3) // 4):" in text
    assert "T.where(i_0 * 4 + i_1 < n)" in text
    lib = tir_mlir.build(sch.mod)
    for n in (1, 3, 4, 13):
        x = _rand(n, 16)
        out = np.zeros((n, 8), "float32")
        lib["main"](x, out)
        np.testing.assert_allclose(out, _mlp(x, weights), rtol=1e-4, atol=1e-5)


def test_dynamic_import_tunes_over_sizes(tmp_path):
    mod, _, weights = _load("flatten_linear_dynamic")
    db = ms.tune_tir(
        mod,
        "llvm",
        str(tmp_path),
        max_trials_global=4,
        num_trials_per_iter=4,
        sizes=[{"n": 5}, {"n": 37}],
        seed=0,
        cost_model="random",
    )
    records = db.get_all_tuning_records()
    assert records and all(r.is_valid for r in records)
    sch = tir_mlir.Schedule(mod)
    min(records, key=lambda r: r.mean_sec).trace.apply_to_schedule(sch, remove_postproc=False)
    lib = tir_mlir.build(sch.mod)
    for n in (1, 11):
        x = _rand(n, 4, 8)
        out = np.zeros((n, 6), "float32")
        lib["main"](x, out)
        np.testing.assert_allclose(out, _flatten_linear(x, weights), rtol=1e-4, atol=1e-5)


# --- hand-written ----------------------------------------------------------------------------
def _run(text, inputs, out_shapes, func="f"):
    mod = tir_mlir.from_linalg(text)
    tir_mlir.assert_structural_equal(tir_mlir.parse(mod.script()), mod)
    outs = [np.zeros(s, "float32") for s in out_shapes]
    tir_mlir.build(mod)[func](*inputs, *outs)
    return mod, outs


MATMUL_MEMREF = """
func.func @f(%a: memref<?x?xf32>, %b: memref<?x?xf32>, %c: memref<?x?xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<?x?xf32>)
  linalg.matmul ins(%a, %b : memref<?x?xf32>, memref<?x?xf32>) outs(%c : memref<?x?xf32>)
  return
}
"""


@pytest.mark.parametrize("m, k, n", [(1, 1, 1), (3, 5, 7), (13, 2, 11)])
def test_memref_matmul_of_three_sizes(m, k, n):
    a, b = _rand(m, k), _rand(k, n)
    c = np.zeros((m, n), "float32")
    mod = tir_mlir.from_linalg(MATMUL_MEMREF)
    tir_mlir.build(mod)["f"](a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-5)
    text = mod.script()
    # the matmul's loops say which sizes agree: a's columns are b's rows (one var, m)
    assert "arg0 = T.match_buffer(arg0_handle, (n, m))" in text
    assert "arg1 = T.match_buffer(arg1_handle, (m, p))" in text
    assert "arg2 = T.match_buffer(arg2_handle, (n, p))" in text
    assert "for i, j, k in T.grid(n, p, m):" in text


def test_tensor_dim_and_dynamic_empty():
    text = """
func.func @f(%a: tensor<?x8xf32>, %b: tensor<8xf32>) -> tensor<?x8xf32> {
  %c0 = arith.constant 0 : index
  %d = tensor.dim %a, %c0 : tensor<?x8xf32>
  %e = tensor.empty(%d) : tensor<?x8xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>,
                                        affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%a, %b : tensor<?x8xf32>, tensor<8xf32>) outs(%e : tensor<?x8xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<?x8xf32>
  return %r : tensor<?x8xf32>
}
"""
    for n in (1, 7):
        a, b = _rand(n, 8), _rand(8)
        mod, (out,) = _run(text, [a, b], [(n, 8)])
        np.testing.assert_allclose(out, a + b, rtol=1e-6)
    assert "for ax0, ax1 in T.grid(n, 8):" in mod.script()


def test_sizes_a_loop_iterates_together_are_one_var():
    """Two `?` arguments added elementwise: linalg requires their sizes equal, so one var."""
    text = """
func.func @f(%a: tensor<?xf32>, %b: tensor<?xf32>) -> tensor<?xf32> {
  %r = linalg.add ins(%a, %b : tensor<?xf32>, tensor<?xf32>) outs(%a : tensor<?xf32>)
       -> tensor<?xf32>
  return %r : tensor<?xf32>
}
"""
    a, b = _rand(11), _rand(11)
    mod, (out,) = _run(text, [a, b], [(11,)])
    np.testing.assert_allclose(out, a + b, rtol=1e-6)
    script = mod.script()
    assert "n = T.int32()" in script and "m = T.int32()" not in script
    assert "arg1 = T.match_buffer(arg1_handle, (n,))" in script


def test_asserted_equal_sizes_are_one_var():
    """torch-mlir's `cf.assert` of `tensor.dim` equality makes the two sizes one var."""
    text = """
func.func @f(%a: tensor<?xf32>, %b: tensor<?xf32>) -> tensor<?xf32> {
  %c0 = arith.constant 0 : index
  %da = tensor.dim %a, %c0 : tensor<?xf32>
  %db = tensor.dim %b, %c0 : tensor<?xf32>
  %eq = arith.cmpi eq, %da, %db : index
  cf.assert %eq, "mismatched size"
  %e = tensor.empty(%db) : tensor<?xf32>
  %r = linalg.exp ins(%b : tensor<?xf32>) outs(%e : tensor<?xf32>) -> tensor<?xf32>
  %s = linalg.add ins(%a, %r : tensor<?xf32>, tensor<?xf32>) outs(%e : tensor<?xf32>)
       -> tensor<?xf32>
  return %s : tensor<?xf32>
}
"""
    a, b = _rand(7), _rand(7)
    mod, (out,) = _run(text, [a, b], [(7,)])
    np.testing.assert_allclose(out, a + np.exp(b), rtol=1e-5)
    assert "m = T.int32()" not in mod.script()


def test_dynamic_collapse_and_expand():
    text = """
func.func @f(%a: tensor<?x3x4xf32>) -> tensor<?x2x6xf32> {
  %c0 = arith.constant 0 : index
  %c = tensor.collapse_shape %a [[0, 1], [2]] : tensor<?x3x4xf32> into tensor<?x4xf32>
  %d = tensor.dim %a, %c0 : tensor<?x3x4xf32>
  %f = tensor.collapse_shape %c [[0, 1]] : tensor<?x4xf32> into tensor<?xf32>
  %e = tensor.expand_shape %f [[0, 1, 2]] output_shape [%d, 2, 6]
       : tensor<?xf32> into tensor<?x2x6xf32>
  return %e : tensor<?x2x6xf32>
}
"""
    for n in (1, 5):
        a = _rand(n, 3, 4)
        mod, (out,) = _run(text, [a], [(n, 2, 6)])
        np.testing.assert_array_equal(out, a.reshape(n, 2, 6))
    script = mod.script()
    assert "collapse_shape_1 = T.alloc_buffer((n * 12,))" in script
    assert "out[v_ax0, v_ax1, v_ax2] = collapse_shape_1[v_ax0 * 12 + v_ax1 * 6 + v_ax2]" in script


def _error(text) -> TIRParseError:
    with pytest.raises(TIRParseError) as info:
        tir_mlir.from_linalg(text, "in.mlir")
    return info.value


@pytest.mark.parametrize(
    "text, line, col, message",
    [
        (
            """func.func @f(%a: tensor<4x?xf32>) -> tensor<?xf32> {
  %c = tensor.collapse_shape %a [[0, 1]] : tensor<4x?xf32> into tensor<?xf32>
  return %c : tensor<?xf32>
}""",
            2,
            8,
            "'tensor.collapse_shape' with a dynamic dimension that is not the outermost of "
            "its group is not supported",
        ),
        (
            """func.func @f(%a: tensor<?x?xf32>) -> tensor<?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %d0 = tensor.dim %a, %c0 : tensor<?x?xf32>
  %d1 = tensor.dim %a, %c1 : tensor<?x?xf32>
  %n = arith.muli %d0, %d1 : index
  %e = tensor.empty(%n) : tensor<?xf32>
  return %e : tensor<?xf32>
}""",
            6,
            8,
            "the size computed by 'arith.muli' is not affine in the dynamic sizes",
        ),
        (
            """func.func @f(%a: tensor<?xf32>) -> tensor<?xf32> {
  %z = arith.constant 0.0 : f32
  %p = tensor.pad %a low[1] high[1] {
  ^bb0(%i: index):
    tensor.yield %z : f32
  } : tensor<?xf32> to tensor<?xf32>
  return %p : tensor<?xf32>
}""",
            3,
            8,
            "tensor.pad of a dynamic dimension is not supported",
        ),
        (
            """func.func @f(%a: tensor<?xf32>, %n: index) -> tensor<?xf32> {
  %e = tensor.empty(%n) : tensor<?xf32>
  return %e : tensor<?xf32>
}""",
            1,
            33,
            "unsupported type index",
        ),
    ],
)
def test_inexpressible_dynamic_sizes_are_refused_at_the_op(text, line, col, message):
    e = _error(text)
    assert (e.loc.line, e.loc.col) == (line, col), str(e)
    assert message in e.message


def test_a_cast_tensor_still_read_is_not_written_in_place():
    """`tensor.cast` shares its source's buffer: an op updating the cast value in place
    would change the source, which is returned too; it updates a copy."""
    text = """
func.func @f(%a: tensor<?xf32>) -> (tensor<4xf32>, tensor<?xf32>) {
  %x = linalg.exp ins(%a : tensor<?xf32>) outs(%a : tensor<?xf32>) -> tensor<?xf32>
  %c = tensor.cast %x : tensor<?xf32> to tensor<4xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      outs(%c : tensor<4xf32>) {
  ^bb0(%o: f32):
    %s = arith.addf %o, %o : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  return %r, %x : tensor<4xf32>, tensor<?xf32>
}
"""
    a = _rand(4)
    _, (doubled, exp) = _run(text, [a], [(4,), (4,)])
    np.testing.assert_allclose(exp, np.exp(a), rtol=1e-6)
    np.testing.assert_allclose(doubled, 2 * np.exp(a), rtol=1e-6)
