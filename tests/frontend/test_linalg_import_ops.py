"""Each supported linalg op, hand-written on tensors and on memrefs, imported with
`from_linalg`, built and run against numpy; the printed TVMScript parses back to the same
module."""

import numpy as np
import pytest

import tir_mlir

RNG = np.random.default_rng(0)


def _rand(*shape, dtype="float32"):
    return RNG.standard_normal(shape).astype(dtype)


def _run(text, inputs, out_shapes, func="f", out_dtypes=None):
    """Import `text`, check the print/parse round trip, run `func` on inputs + zeroed outputs."""
    mod = tir_mlir.from_linalg(text)
    tir_mlir.assert_structural_equal(tir_mlir.parse(mod.script()), mod)
    outs = [np.zeros(s, d) for s, d in zip(out_shapes, out_dtypes or ["float32"] * len(out_shapes))]
    tir_mlir.build(mod)[func](*inputs, *outs)
    return mod, outs


def _blocks(mod) -> list:
    return [
        line.split('"')[1]
        for line in mod.script().splitlines()
        if line.strip().startswith("with T.block(")
    ]


MATMUL = """
func.func @f(%a: tensor<4x6xf32>, %b: tensor<6x5xf32>) -> tensor<4x5xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x5xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x5xf32>) -> tensor<4x5xf32>
  %m = linalg.matmul ins(%a, %b : tensor<4x6xf32>, tensor<6x5xf32>)
                     outs(%f : tensor<4x5xf32>) -> tensor<4x5xf32>
  return %m : tensor<4x5xf32>
}
"""


def test_matmul_with_fill_is_a_reduction_block_with_init():
    a, b = _rand(4, 6), _rand(6, 5)
    mod, (c,) = _run(MATMUL, [a, b], [(4, 5)])
    np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-6)
    text = mod.script()
    # MLIR keeps no SSA names: arguments are named by position, as torch-mlir's are
    assert (
        'def f(arg0: T.Buffer((4, 6), "float32"), arg1: T.Buffer((6, 5), "float32"), '
        'out: T.Buffer((4, 5), "float32")):' in text
    )
    assert (
        """    for i, j, k in T.grid(4, 5, 6):
        with T.block("matmul"):
            v_i, v_j, v_k = T.axis.remap("SSR", [i, j, k])
            T.reads(arg0[v_i, v_k], arg1[v_k, v_j])
            T.writes(out[v_i, v_j])
            with T.init():
                out[v_i, v_j] = T.float32(0.0)
            out[v_i, v_j] = out[v_i, v_j] + arg0[v_i, v_k] * arg1[v_k, v_j]"""
        in text
    )
    assert _blocks(mod) == ["matmul"]


def test_batch_matmul():
    text = """
func.func @f(%a: tensor<2x3x4xf32>, %b: tensor<2x4x5xf32>) -> tensor<2x3x5xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x3x5xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x3x5xf32>) -> tensor<2x3x5xf32>
  %m = linalg.batch_matmul ins(%a, %b : tensor<2x3x4xf32>, tensor<2x4x5xf32>)
                           outs(%f : tensor<2x3x5xf32>) -> tensor<2x3x5xf32>
  return %m : tensor<2x3x5xf32>
}
"""
    a, b = _rand(2, 3, 4), _rand(2, 4, 5)
    mod, (c,) = _run(text, [a, b], [(2, 3, 5)])
    np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-6)
    assert "for b, i, j, k in T.grid(2, 3, 5, 4):" in mod.script()


def _conv_nchw(x, w, stride):
    win = np.lib.stride_tricks.sliding_window_view(x, w.shape[2:], axis=(2, 3))
    win = win[:, :, ::stride, ::stride]
    return np.einsum("nchwij,fcij->nfhw", win, w)


def test_conv_2d_nchw_fchw_strided():
    text = """
func.func @f(%x: tensor<1x3x9x9xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x4x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x4x4x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>,
                                  strides = dense<2> : tensor<2xi64>}
      ins(%x, %w : tensor<1x3x9x9xf32>, tensor<4x3x3x3xf32>)
      outs(%f : tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  return %c : tensor<1x4x4x4xf32>
}
"""
    x, w = _rand(1, 3, 9, 9), _rand(4, 3, 3, 3)
    mod, (y,) = _run(text, [x, w], [(1, 4, 4, 4)])
    np.testing.assert_allclose(y, _conv_nchw(x, w, 2), rtol=1e-4, atol=1e-5)
    assert "arg0[v_n, v_c, v_oh * 2 + v_kh, v_ow * 2 + v_kw]" in mod.script()


def test_conv_2d_nhwc_hwcf():
    text = """
func.func @f(%x: tensor<1x6x6x3xf32>, %w: tensor<3x3x3x4xf32>) -> tensor<1x4x4x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x4x4x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  %c = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>,
                                  strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : tensor<1x6x6x3xf32>, tensor<3x3x3x4xf32>)
      outs(%f : tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  return %c : tensor<1x4x4x4xf32>
}
"""
    x, w = _rand(1, 6, 6, 3), _rand(3, 3, 3, 4)
    _, (y,) = _run(text, [x, w], [(1, 4, 4, 4)])
    ref = _conv_nchw(x.transpose(0, 3, 1, 2), w.transpose(3, 2, 0, 1), 1).transpose(0, 2, 3, 1)
    np.testing.assert_allclose(y, ref, rtol=1e-4, atol=1e-5)


def test_max_pooling():
    text = """
func.func @f(%x: tensor<1x2x8x8xf32>) -> tensor<1x2x4x4xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %win = tensor.empty() : tensor<2x2xf32>
  %e = tensor.empty() : tensor<1x2x4x4xf32>
  %f = linalg.fill ins(%ninf : f32) outs(%e : tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %p = linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>,
                                strides = dense<2> : tensor<2xi64>}
      ins(%x, %win : tensor<1x2x8x8xf32>, tensor<2x2xf32>)
      outs(%f : tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  return %p : tensor<1x2x4x4xf32>
}
"""
    x = _rand(1, 2, 8, 8)
    mod, (y,) = _run(text, [x], [(1, 2, 4, 4)])
    np.testing.assert_allclose(y, x.reshape(1, 2, 4, 2, 4, 2).max(axis=(3, 5)))
    assert _blocks(mod) == ["pooling_nchw_max"]
    assert 'T.float32("-inf")' in mod.script()


def test_fill_transpose_broadcast_and_elementwise_named_ops():
    text = """
func.func @f(%a: tensor<4x6xf32>, %b: tensor<4x6xf32>, %v: tensor<6xf32>)
    -> (tensor<6x4xf32>, tensor<4x6xf32>, tensor<4x6xf32>, tensor<4x6xf32>) {
  %e64 = tensor.empty() : tensor<6x4xf32>
  %e = tensor.empty() : tensor<4x6xf32>
  %t = linalg.transpose ins(%a : tensor<4x6xf32>) outs(%e64 : tensor<6x4xf32>) permutation = [1, 0]
  %bc = linalg.broadcast ins(%v : tensor<6xf32>) outs(%e : tensor<4x6xf32>) dimensions = [0]
  %add = linalg.add ins(%a, %bc : tensor<4x6xf32>, tensor<4x6xf32>)
                    outs(%e : tensor<4x6xf32>) -> tensor<4x6xf32>
  %mul = linalg.mul ins(%add, %b : tensor<4x6xf32>, tensor<4x6xf32>)
                    outs(%e : tensor<4x6xf32>) -> tensor<4x6xf32>
  %sub = linalg.sub ins(%mul, %a : tensor<4x6xf32>, tensor<4x6xf32>)
                    outs(%e : tensor<4x6xf32>) -> tensor<4x6xf32>
  %exp = linalg.exp ins(%sub : tensor<4x6xf32>) outs(%e : tensor<4x6xf32>) -> tensor<4x6xf32>
  %two = arith.constant 2.0 : f32
  %fill = linalg.fill ins(%two : f32) outs(%e : tensor<4x6xf32>) -> tensor<4x6xf32>
  %div = linalg.div ins(%exp, %fill : tensor<4x6xf32>, tensor<4x6xf32>)
                    outs(%e : tensor<4x6xf32>) -> tensor<4x6xf32>
  return %t, %fill, %div, %bc : tensor<6x4xf32>, tensor<4x6xf32>, tensor<4x6xf32>, tensor<4x6xf32>
}
"""
    a, b, v = _rand(4, 6), _rand(4, 6), _rand(6)
    mod, (t, fill, div, bc) = _run(text, [a, b, v], [(6, 4), (4, 6), (4, 6), (4, 6)])
    np.testing.assert_array_equal(t, a.T)
    np.testing.assert_array_equal(fill, np.full((4, 6), 2.0))
    np.testing.assert_allclose(div, np.exp((a + v) * b - a) / 2, rtol=1e-5)
    np.testing.assert_array_equal(bc, np.broadcast_to(v, (4, 6)))
    assert _blocks(mod) == ["transpose", "broadcast", "add", "mul", "sub", "exp", "fill", "div"]
    assert (
        'def f(arg0: T.Buffer((4, 6), "float32"), arg1: T.Buffer((4, 6), "float32"), '
        'arg2: T.Buffer((6,), "float32"), out0: T.Buffer((6, 4), "float32"), '
        'out1: T.Buffer((4, 6), "float32"), out2: T.Buffer((4, 6), "float32"), '
        'out3: T.Buffer((4, 6), "float32")):' in mod.script()
    )


def test_reduce_and_map():
    text = """
func.func @f(%a: tensor<4x6xf32>, %b: tensor<4x6xf32>) -> tensor<4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x6xf32>
  %m = linalg.map ins(%a, %b : tensor<4x6xf32>, tensor<4x6xf32>) outs(%e : tensor<4x6xf32>)
    (%x: f32, %y: f32, %o: f32) {
      %p = arith.mulf %x, %y : f32
      linalg.yield %p : f32
    }
  %e4 = tensor.empty() : tensor<4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e4 : tensor<4xf32>) -> tensor<4xf32>
  %r = linalg.reduce ins(%m : tensor<4x6xf32>) outs(%f : tensor<4xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  return %r : tensor<4xf32>
}
"""
    a, b = _rand(4, 6), _rand(4, 6)
    mod, (r,) = _run(text, [a, b], [(4,)])
    np.testing.assert_allclose(r, (a * b).sum(1), rtol=1e-5, atol=1e-6)
    assert _blocks(mod) == ["map_mul", "reduce_sum"]


def test_generic_argmax_two_outputs():
    text = """
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @f(%a: tensor<3x7xf32>) -> (tensor<3xf32>, tensor<3xi64>) {
  %ninf = arith.constant 0xFF800000 : f32
  %c0 = arith.constant 0 : i64
  %ev = tensor.empty() : tensor<3xf32>
  %ei = tensor.empty() : tensor<3xi64>
  %fv = linalg.fill ins(%ninf : f32) outs(%ev : tensor<3xf32>) -> tensor<3xf32>
  %fi = linalg.fill ins(%c0 : i64) outs(%ei : tensor<3xi64>) -> tensor<3xi64>
  %r:2 = linalg.generic {indexing_maps = [#id, #row, #row],
                         iterator_types = ["parallel", "reduction"]}
      ins(%a : tensor<3x7xf32>) outs(%fv, %fi : tensor<3xf32>, tensor<3xi64>) {
  ^bb0(%in: f32, %m: f32, %i: i64):
    %k = linalg.index 1 : index
    %ki = arith.index_cast %k : index to i64
    %mx = arith.maximumf %in, %m : f32
    %gt = arith.cmpf ogt, %in, %m : f32
    %sel = arith.select %gt, %ki, %i : i64
    linalg.yield %mx, %sel : f32, i64
  } -> (tensor<3xf32>, tensor<3xi64>)
  return %r#0, %r#1 : tensor<3xf32>, tensor<3xi64>
}
"""
    a = _rand(3, 7)
    mod, (mx, idx) = _run(text, [a], [(3,), (3,)], out_dtypes=["float32", "int64"])
    np.testing.assert_array_equal(mx, a.max(1))
    np.testing.assert_array_equal(idx, a.argmax(1))
    # every value is computed before either output changes
    assert """            v_out0: T.float32 = T.max(arg0[v_ax0, v_k], out0[v_ax0])
            v_out1: T.int64 = T.Select(arg0[v_ax0, v_k] > out0[v_ax0], T.Cast("int64", v_k), out1[v_ax0])
            out0[v_ax0] = v_out0
            out1[v_ax0] = v_out1""" in mod.script()


def test_reshapes_pad_and_dense_constants():
    text = """
func.func @f(%a: tensor<2x6xf32>) -> tensor<3x8xf32> {
  %k = arith.constant dense<[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]> : tensor<3x2xf32>
  %x = tensor.expand_shape %a [[0], [1, 2]] output_shape [2, 3, 2]
      : tensor<2x6xf32> into tensor<2x3x2xf32>
  %e = tensor.empty() : tensor<2x3x2xf32>
  %bk = linalg.broadcast ins(%k : tensor<3x2xf32>) outs(%e : tensor<2x3x2xf32>) dimensions = [0]
  %m = linalg.mul ins(%x, %bk : tensor<2x3x2xf32>, tensor<2x3x2xf32>)
                  outs(%e : tensor<2x3x2xf32>) -> tensor<2x3x2xf32>
  %c = tensor.collapse_shape %m [[0, 1], [2]] : tensor<2x3x2xf32> into tensor<6x2xf32>
  %t = tensor.collapse_shape %c [[0, 1]] : tensor<6x2xf32> into tensor<12xf32>
  %r = tensor.expand_shape %t [[0, 1]] output_shape [3, 4] : tensor<12xf32> into tensor<3x4xf32>
  %pv = arith.constant -1.0 : f32
  %p = tensor.pad %r low[0, 1] high[0, 3] {
  ^bb0(%i: index, %j: index):
    tensor.yield %pv : f32
  } : tensor<3x4xf32> to tensor<3x8xf32>
  return %p : tensor<3x8xf32>
}
"""
    a = _rand(2, 6)
    k = np.array([[1, 2], [3, 4], [5, 6]], "float32")
    mod, (p,) = _run(text, [a], [(3, 8)])
    r = (a.reshape(2, 3, 2) * k).reshape(3, 4)
    np.testing.assert_allclose(p, np.pad(r, ((0, 0), (1, 3)), constant_values=-1), rtol=1e-6)
    text = mod.script()
    assert 'T.allocate_const([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], "float32", [3, 2])' in text
    assert _blocks(mod) == [
        "expand_shape",
        "broadcast",
        "mul",
        "collapse_shape",
        "collapse_shape_1",
        "expand_shape_1",
        "pad",
    ]
    assert "expand_shape[v_ax0, v_ax1, v_ax2] = arg0[v_ax0, v_ax1 * 2 + v_ax2]" in text
    assert "collapse_shape[v_ax0, v_ax1] = mul[v_ax0 // 3, v_ax0 % 3, v_ax1]" in text
    assert (
        "out[v_ax0, v_ax1] = T.if_then_else(1 <= v_ax1 and v_ax1 < 5, "
        "expand_shape_1[v_ax0, v_ax1 - 1], T.float32(-1.0))" in text
    )


def test_returned_argument_and_value_returned_twice_are_copied():
    text = """
func.func @f(%a: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %e = tensor.empty() : tensor<4xf32>
  %n = linalg.negf ins(%a : tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  return %a, %n, %n : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}
"""
    a = _rand(4)
    mod, (o0, o1, o2) = _run(text, [a], [(4,), (4,), (4,)])
    np.testing.assert_array_equal(o0, a)
    np.testing.assert_array_equal(o1, -a)
    np.testing.assert_array_equal(o2, -a)
    assert _blocks(mod) == ["negf", "copy", "copy_1"]


def test_shared_init_is_copied_not_clobbered():
    """A bias read in place by two reductions: each gets a copy; the bias itself is returned."""
    text = """
func.func @f(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>, %v: tensor<4xf32>)
    -> (tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>) {
  %e = tensor.empty() : tensor<2x4xf32>
  %bias = linalg.broadcast ins(%v : tensor<4xf32>) outs(%e : tensor<2x4xf32>) dimensions = [0]
  %m1 = linalg.matmul ins(%a, %b : tensor<2x3xf32>, tensor<3x4xf32>)
                      outs(%bias : tensor<2x4xf32>) -> tensor<2x4xf32>
  %m2 = linalg.matmul ins(%a, %b : tensor<2x3xf32>, tensor<3x4xf32>)
                      outs(%m1 : tensor<2x4xf32>) -> tensor<2x4xf32>
  return %bias, %m1, %m2 : tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>
}
"""
    a, b, v = _rand(2, 3), _rand(3, 4), _rand(4)
    mod, (bias, m1, m2) = _run(text, [a, b, v], [(2, 4)] * 3)
    assert _blocks(mod) == ["broadcast", "copy", "matmul", "copy_1", "matmul_1"]
    np.testing.assert_array_equal(bias, np.broadcast_to(v, (2, 4)))
    np.testing.assert_allclose(m1, a @ b + v, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(m2, 2 * (a @ b) + v, rtol=1e-5, atol=1e-6)


def test_a_fill_shared_by_two_reductions_is_the_init_of_both():
    """torch-mlir's one zero fill for every convolution of a shape: no fill block, no copies."""
    text = """
func.func @f(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>, %c: tensor<2x3xf32>)
    -> (tensor<2x4xf32>, tensor<2x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x4xf32>) -> tensor<2x4xf32>
  %m1 = linalg.matmul ins(%a, %b : tensor<2x3xf32>, tensor<3x4xf32>)
                      outs(%f : tensor<2x4xf32>) -> tensor<2x4xf32>
  %m2 = linalg.matmul ins(%c, %b : tensor<2x3xf32>, tensor<3x4xf32>)
                      outs(%f : tensor<2x4xf32>) -> tensor<2x4xf32>
  return %m1, %m2 : tensor<2x4xf32>, tensor<2x4xf32>
}
"""
    a, b, c = _rand(2, 3), _rand(3, 4), _rand(2, 3)
    mod, (m1, m2) = _run(text, [a, b, c], [(2, 4)] * 2)
    assert _blocks(mod) == ["matmul", "matmul_1"]
    assert mod.script().count("with T.init():") == 2
    np.testing.assert_allclose(m1, a @ b, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(m2, c @ b, rtol=1e-5, atol=1e-6)


BATCH_NORM_SCALE = """
#v = affine_map<(d0) -> (d0)>
#x = affine_map<(d0, d1) -> (d0, d1)>
#c = affine_map<(d0, d1) -> (d0, 0)>
func.func @f(%a: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %eps = arith.constant 1.0e-05 : f64
  %var = arith.constant dense<[0.25, 1.5, 3.0, 0.0]> : tensor<4xf32>
  %e = tensor.empty() : tensor<4xf32>
  %s = linalg.generic {indexing_maps = [#v, #v], iterator_types = ["parallel"]}
      ins(%var : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %t = arith.truncf %eps : f64 to f32
    %y = arith.addf %in, %t : f32
    %r = math.sqrt %y : f32
    %ok = arith.cmpf one, %r, %zero : f32
    cf.assert %ok, "zero"
    %d = arith.divf %one, %r : f32
    linalg.yield %d : f32
  } -> tensor<4xf32>
  %s2 = tensor.expand_shape %s [[0, 1]] output_shape [4, 1] : tensor<4xf32> into tensor<4x1xf32>
  %o = tensor.empty() : tensor<4x3xf32>
  %m = linalg.generic {indexing_maps = [#x, #c, #x], iterator_types = ["parallel", "parallel"]}
      ins(%a, %s2 : tensor<4x3xf32>, tensor<4x1xf32>) outs(%o : tensor<4x3xf32>) {
  ^bb0(%in: f32, %k: f32, %out: f32):
    %y = arith.mulf %in, %k : f32
    linalg.yield %y : f32
  } -> tensor<4x3xf32>
  return %m : tensor<4x3xf32>
}
"""


def test_elementwise_ops_on_constants_are_constants():
    """A batch norm's 1 / sqrt(var + eps) and its expand_shape are computed at import: one
    block is left, reading a constant of the scale's float32 values."""
    a = _rand(4, 3)
    mod, (m,) = _run(BATCH_NORM_SCALE, [a], [(4, 3)])
    var = np.array([0.25, 1.5, 3.0, 0.0], "float32")
    scale = np.float32(1) / np.sqrt(var + np.float32(1e-05))
    np.testing.assert_array_equal(m, a * scale[:, None])
    assert _blocks(mod) == ["generic_mul"]
    values = ", ".join(repr(float(x)) for x in scale)
    assert f'T.allocate_const([{values}], "float32", [4, 1])' in mod.script()


def test_an_op_on_constants_that_would_round_otherwise_stays_a_block():
    """exp is not correctly rounded: numpy's could differ from the program's; a failing
    assert is the program's to report."""
    for old, new in [("math.sqrt", "math.exp"), ("0.0]>", "-1.0e-05]>")]:
        text = BATCH_NORM_SCALE.replace(old, new)
        mod = tir_mlir.from_linalg(text)
        assert len(_blocks(mod)) == 3, old


def test_linalg_on_memrefs():
    """Buffers are the program's own; a fill into a temporary followed by the matmul into it
    is the matmul's T.init; memref.copy is a copy block; the function keeps its signature."""
    text = """
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @mm_relu(%A: memref<4x6xf32>, %B: memref<6x5xf32>, %C: memref<4x5xf32>,
                   %D: memref<4x5xf32>) {
  %zero = arith.constant 0.0 : f32
  %t = memref.alloc() : memref<4x5xf32>
  linalg.fill ins(%zero : f32) outs(%t : memref<4x5xf32>)
  linalg.matmul ins(%A, %B : memref<4x6xf32>, memref<6x5xf32>) outs(%t : memref<4x5xf32>)
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%t : memref<4x5xf32>) outs(%C : memref<4x5xf32>) {
  ^bb0(%x: f32, %o: f32):
    %r = arith.maximumf %x, %zero : f32
    linalg.yield %r : f32
  }
  memref.copy %t, %D : memref<4x5xf32> to memref<4x5xf32>
  memref.dealloc %t : memref<4x5xf32>
  return
}
"""
    a, b = _rand(4, 6), _rand(6, 5)
    mod, (c, d) = _run(text, [a, b], [(4, 5), (4, 5)], func="mm_relu")
    np.testing.assert_allclose(c, np.maximum(a @ b, 0), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(d, a @ b, rtol=1e-5, atol=1e-6)
    assert _blocks(mod) == ["matmul", "generic_relu", "copy"]
    assert (
        'def mm_relu(arg0: T.Buffer((4, 6), "float32"), arg1: T.Buffer((6, 5), "float32"), '
        'arg2: T.Buffer((4, 5), "float32"), arg3: T.Buffer((4, 5), "float32")):' in mod.script()
    )
    assert "with T.init():" in mod.script()
    assert "matmul = T.alloc_buffer((4, 5))" in mod.script()  # named after its writer


@pytest.mark.parametrize(
    "pred, op",
    [
        ("ugt", np.greater),
        ("ult", np.less),
        ("uge", np.greater_equal),
        ("ule", np.less_equal),
        ("one", np.not_equal),
        ("ueq", np.equal),
    ],
)
def test_unordered_compares_keep_nan(pred, op):
    """torch-mlir's unordered compares are true on NaN, ordered ones false; `one` false."""
    text = f"""
#id = affine_map<(d0) -> (d0)>
func.func @f(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xi1> {{
  %e = tensor.empty() : tensor<4xi1>
  %r = linalg.generic {{indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}}
      ins(%a, %b : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xi1>) {{
  ^bb0(%x: f32, %y: f32, %o: i1):
    %c = arith.cmpf {pred}, %x, %y : f32
    linalg.yield %c : i1
  }} -> tensor<4xi1>
  return %r : tensor<4xi1>
}}
"""
    a = np.array([1, 2, np.nan, 3], "float32")
    b = np.array([2, 2, 1, np.nan], "float32")
    _, (r,) = _run(text, [a, b], [(4,)], out_dtypes=["bool"])
    nan = np.isnan(a) | np.isnan(b)
    expected = op(a, b) | nan if pred != "one" else op(a, b) & ~nan
    np.testing.assert_array_equal(r, expected)


def test_generic_contraction_and_index_arithmetic():
    """A matmul written as a generic is a `generic_dot` reduction; `linalg.index` arithmetic
    is iter var arithmetic (an iota: out[i, j] = i * 4 + j)."""
    text = """
#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#b = affine_map<(d0, d1, d2) -> (d2, d1)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @f(%x: tensor<3x5xf32>, %y: tensor<5x4xf32>) -> (tensor<3x4xf32>, tensor<3x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<3x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<3x4xf32>) -> tensor<3x4xf32>
  %m = linalg.generic {indexing_maps = [#a, #b, #c],
                       iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %y : tensor<3x5xf32>, tensor<5x4xf32>) outs(%f : tensor<3x4xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %pq = arith.mulf %p, %q : f32
    %s = arith.addf %acc, %pq : f32
    linalg.yield %s : f32
  } -> tensor<3x4xf32>
  %iota = linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel"]}
      outs(%e : tensor<3x4xf32>) {
  ^bb0(%o: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %c4 = arith.constant 4 : index
    %i4 = arith.muli %i, %c4 : index
    %k = arith.addi %i4, %j : index
    %ki = arith.index_cast %k : index to i32
    %kf = arith.sitofp %ki : i32 to f32
    linalg.yield %kf : f32
  } -> tensor<3x4xf32>
  return %m, %iota : tensor<3x4xf32>, tensor<3x4xf32>
}
"""
    x, y = _rand(3, 5), _rand(5, 4)
    mod, (m, iota) = _run(text, [x, y], [(3, 4), (3, 4)])
    np.testing.assert_allclose(m, x @ y, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(iota, np.arange(12, dtype="float32").reshape(3, 4))
    assert _blocks(mod) == ["generic_dot", "generic_mul_add"]
    assert 'out1[v_ax0, v_ax1] = T.Cast("float32", v_ax0 * 4 + v_ax1)' in mod.script()


def test_zero_dimensional_tensors():
    """A full reduction into a tensor<f32> (a block with reduce iter vars only) and a 0-d
    input broadcast."""
    text = """
func.func @f(%a: tensor<4x6xf32>, %s: tensor<f32>) -> (tensor<f32>, tensor<4x6xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<f32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %r = linalg.reduce ins(%a : tensor<4x6xf32>) outs(%f : tensor<f32>) dimensions = [0, 1]
    (%in: f32, %acc: f32) {
      %x = arith.addf %in, %acc : f32
      linalg.yield %x : f32
    }
  %e2 = tensor.empty() : tensor<4x6xf32>
  %b = linalg.broadcast ins(%s : tensor<f32>) outs(%e2 : tensor<4x6xf32>) dimensions = [0, 1]
  return %r, %b : tensor<f32>, tensor<4x6xf32>
}
"""
    a, scalar = _rand(4, 6), np.array(3.0, "float32")
    mod, (total, b) = _run(text, [a, scalar], [(), (4, 6)])
    np.testing.assert_allclose(total, a.sum(), rtol=1e-5)
    np.testing.assert_array_equal(b, np.full((4, 6), 3.0))
    assert "out0[()] = arg0[v_k0, v_k1] + out0[()]" in mod.script()


def test_init_not_folded_where_the_reduction_skips_elements():
    """A reduction writing only column 0 of a filled 3x4 output: the other columns keep the
    fill, so the fill stays a block of its own (a T.init would leave them unwritten)."""
    text = """
#in = affine_map<(d0, d1) -> (d0, d1)>
#out = affine_map<(d0, d1) -> (d0, 0)>
func.func @f(%a: tensor<3x4xf32>) -> tensor<3x4xf32> {
  %seven = arith.constant 7.0 : f32
  %e = tensor.empty() : tensor<3x4xf32>
  %f = linalg.fill ins(%seven : f32) outs(%e : tensor<3x4xf32>) -> tensor<3x4xf32>
  %r = linalg.generic {indexing_maps = [#in, #out], iterator_types = ["parallel", "reduction"]}
      ins(%a : tensor<3x4xf32>) outs(%f : tensor<3x4xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %x, %acc : f32
    linalg.yield %s : f32
  } -> tensor<3x4xf32>
  return %r : tensor<3x4xf32>
}
"""
    a = _rand(3, 4)
    mod, (r,) = _run(text, [a], [(3, 4)])
    expected = np.full((3, 4), 7.0, "float32")
    expected[:, 0] += a.sum(1)
    np.testing.assert_allclose(r, expected, rtol=1e-5)
    assert _blocks(mod) == ["fill", "generic_sum"]


def test_elements_an_op_does_not_write_keep_its_init():
    """A parallel op writing only column 0 of its 3x4 init: the result is the init elsewhere."""
    text = """
#in = affine_map<(d0) -> (d0)>
#out = affine_map<(d0) -> (d0, 0)>
func.func @f(%a: tensor<3xf32>, %init: tensor<3x4xf32>) -> tensor<3x4xf32> {
  %r = linalg.generic {indexing_maps = [#in, #out], iterator_types = ["parallel"]}
      ins(%a : tensor<3xf32>) outs(%init : tensor<3x4xf32>) {
  ^bb0(%x: f32, %o: f32):
    %y = arith.negf %x : f32
    linalg.yield %y : f32
  } -> tensor<3x4xf32>
  return %r : tensor<3x4xf32>
}
"""
    a, init = _rand(3), _rand(3, 4)
    mod, (r,) = _run(text, [a, init], [(3, 4)])
    expected = init.copy()
    expected[:, 0] = -a
    np.testing.assert_array_equal(r, expected)
    assert _blocks(mod) == ["copy", "generic_neg"]


def test_slices_and_concat():
    """extract_slice (strided, rank-reducing), insert_slice (in place into a fill, and into a
    tensor also returned as is: copied first), concat."""
    text = """
func.func @f(%a: tensor<6x8xf32>, %b: tensor<2x8xf32>)
    -> (tensor<3x4xf32>, tensor<8xf32>, tensor<6x8xf32>, tensor<6x8xf32>, tensor<6x8xf32>,
        tensor<8x8xf32>) {
  %s = tensor.extract_slice %a[1, 0] [3, 4] [2, 2] : tensor<6x8xf32> to tensor<3x4xf32>
  %row = tensor.extract_slice %a[4, 0] [1, 8] [1, 1] : tensor<6x8xf32> to tensor<8xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<6x8xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<6x8xf32>) -> tensor<6x8xf32>
  %ins = tensor.insert_slice %b into %z[2, 0] [2, 8] [1, 1] : tensor<2x8xf32> into tensor<6x8xf32>
  %e2 = tensor.empty() : tensor<6x8xf32>
  %n = linalg.negf ins(%a : tensor<6x8xf32>) outs(%e2 : tensor<6x8xf32>) -> tensor<6x8xf32>
  %ins2 = tensor.insert_slice %row into %n[0, 0] [1, 8] [1, 1] : tensor<8xf32> into tensor<6x8xf32>
  %cat = tensor.concat dim(0) %a, %b : (tensor<6x8xf32>, tensor<2x8xf32>) -> tensor<8x8xf32>
  return %s, %row, %ins, %n, %ins2, %cat
      : tensor<3x4xf32>, tensor<8xf32>, tensor<6x8xf32>, tensor<6x8xf32>, tensor<6x8xf32>,
        tensor<8x8xf32>
}
"""
    a, b = _rand(6, 8), _rand(2, 8)
    mod, (s, row, ins, n, ins2, cat) = _run(
        text, [a, b], [(3, 4), (8,), (6, 8), (6, 8), (6, 8), (8, 8)]
    )
    np.testing.assert_array_equal(s, a[1:7:2, 0:8:2])
    np.testing.assert_array_equal(row, a[4])
    expected = np.zeros((6, 8), "float32")
    expected[2:4] = b
    np.testing.assert_array_equal(ins, expected)
    np.testing.assert_array_equal(n, -a)
    expected = -a
    expected[0] = a[4]
    np.testing.assert_array_equal(ins2, expected)
    np.testing.assert_array_equal(cat, np.concatenate([a, b]))
    text = mod.script()
    assert "out0[v_ax0, v_ax1] = arg0[v_ax0 * 2 + 1, v_ax1 * 2]" in text
    assert "out5[v_ax0 + 6, v_ax1] = arg1[v_ax0, v_ax1]" in text
    assert _blocks(mod) == [
        "extract_slice",
        "extract_slice_1",
        "fill",
        "insert_slice",
        "negf",
        "copy",
        "insert_slice_1",
        "concat",
        "concat_1",
    ]


def test_bool_and_splat_constants():
    """A bool constant is an int8 T.allocate_const read as T.Cast("bool", ...) (TensorIR has no
    bool constants); a splat constant is no buffer: its reads are the scalar."""
    text = """
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @f(%a: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %m = arith.constant dense<[[true, false], [false, true]]> : tensor<2x2xi1>
  %ninf = arith.constant dense<0xFF800000> : tensor<2x2xf32>
  %e = tensor.empty() : tensor<2x2xf32>
  %r = linalg.generic {indexing_maps = [#id, #id, #id, #id],
                       iterator_types = ["parallel", "parallel"]}
      ins(%a, %m, %ninf : tensor<2x2xf32>, tensor<2x2xi1>, tensor<2x2xf32>)
      outs(%e : tensor<2x2xf32>) {
  ^bb0(%x: f32, %k: i1, %n: f32, %o: f32):
    %y = arith.select %k, %x, %n : f32
    linalg.yield %y : f32
  } -> tensor<2x2xf32>
  return %r : tensor<2x2xf32>
}
"""
    a = _rand(2, 2)
    mod, (r,) = _run(text, [a], [(2, 2)])
    np.testing.assert_array_equal(r, np.where(np.eye(2, dtype=bool), a, -np.inf))
    text = mod.script()
    assert 'T.allocate_const([1, 0, 0, 1], "int8", [2, 2])' in text
    assert (
        'out[v_ax0, v_ax1] = T.Select(T.Cast("bool", cst_1[v_ax0, v_ax1]), '
        'arg0[v_ax0, v_ax1], T.float32("-inf"))' in text
    )
