"""Regenerate the recorded producer output in this folder: torch-mlir's (torch and
torch-mlir), and JAX's StableHLO lowered to linalg by IREE's input conversion (jax and
iree-base-compiler); each part runs when its packages are installed.

    python tests/data/linalg/regenerate.py

Each torch model is exported with `torch_mlir.fx.export_and_import(..., output_type=
"linalg-on-tensors")` and written without debug locations (an error then points into the .mlir
file itself), weights as `dense_resource` blobs; the JAX function's StableHLO
(`jax.jit(f).lower(x).as_text()`) goes through `iree-opt --chlo-legalize-to-stablehlo
--iree-stablehlo-to-iree-input`, weights as `dense` constants. Beside each `NAME.mlir`,
`NAME.npz` holds the example inputs, the weights and the producer's outputs (`in0`, ...,
`w.fc1.weight`, ..., `out0`, ...), so the tests compute numpy references and compare with the
producer's numbers without it. Shapes and weights are kept small so the files stay small.

`NAME_dynamic.mlir` are models exported with dynamic dimensions (`torch.export.Dim`, so
`tensor<?x16xf32>`), whose import is one symbolic kernel for every size; their `.npz` holds
example inputs of prime sizes and torch's outputs for them.
"""
import subprocess
from pathlib import Path

import numpy as np

try:
    import torch
    import torch.nn.functional as F
    from torch import nn
except ImportError:             # the JAX part alone
    torch = None

HERE = Path(__file__).parent


Module = nn.Module if torch is not None else object


class MLP(Module):
    """Linear -> GELU -> Linear -> softmax."""

    def __init__(self):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(16, 32), nn.Linear(32, 8)

    def forward(self, x):
        return torch.softmax(self.fc2(F.gelu(self.fc1(x))), dim=-1)


class LayerNorm(Module):
    def __init__(self):
        super().__init__()
        self.norm = nn.LayerNorm(32)
        nn.init.normal_(self.norm.weight)       # not the default ones and zeros
        nn.init.normal_(self.norm.bias)

    def forward(self, x):
        return self.norm(x)


class ConvReLU(Module):
    """conv2d (3x3, padding 1) + bias + ReLU."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)

    def forward(self, x):
        return torch.relu(self.conv(x))


class Attention(Module):
    """Scaled dot-product attention of (batch, heads, seq, dim) queries, keys and values."""

    def forward(self, q, k, v):
        return F.scaled_dot_product_attention(q, k, v)


class TransformerBlock(Module):
    """Causal self-attention (one fused qkv projection, chunked; 2 heads) + residual +
    LayerNorm: torch-mlir's slices, transposes, reshapes and the causal mask constant."""

    def __init__(self):
        super().__init__()
        self.qkv, self.proj, self.norm = nn.Linear(16, 48), nn.Linear(16, 16), nn.LayerNorm(16)

    def forward(self, x):
        q, k, v = (t.view(1, 8, 2, 8).transpose(1, 2) for t in self.qkv(x).chunk(3, dim=-1))
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.norm(x + self.proj(a.transpose(1, 2).reshape(1, 8, 16)))


class SmallCNN(Module):
    """conv (stride 2, padding 1) -> batch norm -> ReLU -> max pool -> global average pool ->
    linear -> sigmoid."""

    def __init__(self):
        super().__init__()
        self.conv, self.bn, self.fc = nn.Conv2d(3, 4, 3, 2, 1), nn.BatchNorm2d(4), nn.Linear(4, 5)
        self.bn.running_mean.normal_()
        self.bn.running_var.uniform_(0.5, 2.0)
        nn.init.normal_(self.bn.weight)

    def forward(self, x):
        y = F.max_pool2d(F.relu(self.bn(self.conv(x))), 2)
        return torch.sigmoid(self.fc(F.adaptive_avg_pool2d(y, 1).flatten(1)))


class ResNetBlock(Module):
    """A ResNet basic block: (conv 3x3 -> batch norm -> ReLU) x 2, the second ReLU after the
    residual add; batch norm in eval mode with nontrivial running statistics."""

    def __init__(self):
        super().__init__()
        self.conv1, self.bn1 = nn.Conv2d(8, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8)
        self.conv2, self.bn2 = nn.Conv2d(8, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8)
        for bn in (self.bn1, self.bn2):
            bn.running_mean.uniform_(-0.5, 0.5)
            bn.running_var.uniform_(0.5, 1.5)

    def forward(self, x):
        y = F.relu(self.bn1(self.conv1(x)))
        return F.relu(self.bn2(self.conv2(y)) + x)


class FlattenLinear(Module):
    """(batch, 4, 8) -> (batch * 4, 8) -> Linear -> (batch, 4, 6) -> sum over the 4: a
    dynamic collapse and expand, their sizes computed from the batch."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 6)

    def forward(self, x):
        return self.fc(x.reshape(-1, 8)).reshape(x.shape[0], 4, 6).sum(1)


def models():
    """name -> (module, example inputs)."""
    g = torch.Generator().manual_seed(0)

    def rand(*shape):
        return torch.randn(*shape, generator=g)
    return {
        "mlp": (MLP(), (rand(4, 16),)),
        "layernorm": (LayerNorm(), (rand(4, 8, 32),)),
        "conv_relu": (ConvReLU(), (rand(1, 3, 16, 16),)),
        "attention": (Attention(), (rand(1, 2, 16, 8), rand(1, 2, 16, 8), rand(1, 2, 16, 8))),
        "transformer_block": (TransformerBlock(), (rand(1, 8, 16),)),
        "small_cnn": (SmallCNN(), (rand(2, 3, 16, 16),)),
        "resnet_block": (ResNetBlock(), (rand(1, 8, 16, 16),)),
    }


def dynamic_models():
    """name -> (module, example inputs, dynamic dimensions of the first input)."""
    from torch.export import Dim
    g = torch.Generator().manual_seed(1)

    def rand(*shape):
        return torch.randn(*shape, generator=g)
    batch, seq = Dim("batch"), Dim("seq")
    return {
        "mlp_dynamic": (MLP(), (rand(5, 16),), {0: batch}),
        "layernorm_dynamic": (LayerNorm(), (rand(3, 7, 32),), {0: batch, 1: seq}),
        "conv_relu_dynamic": (ConvReLU(), (rand(3, 3, 16, 16),), {0: batch}),
        "flatten_linear_dynamic": (FlattenLinear(), (rand(5, 4, 8),), {0: batch}),
    }


def export(model, args, dynamic=None) -> str:
    # (imported here: the tests build the models with torch alone)
    from torch_mlir import fx
    shapes = None if dynamic is None else {"x": dynamic}
    module = fx.export_and_import(model, *args, output_type="linalg-on-tensors",
                                  dynamic_shapes=shapes)
    return module.operation.get_asm(large_elements_limit=1 << 30)


def jax_dense_gelu_layernorm():
    """(function, example input, weights): a dense layer, JAX's tanh GELU, a layer norm."""
    rng = np.random.default_rng(0)
    w = {"w": rng.standard_normal((16, 32)).astype("float32") * 0.2,
         "b": rng.standard_normal(32).astype("float32") * 0.1,
         "g": rng.standard_normal(32).astype("float32")}

    def f(x):
        import jax
        h = jax.nn.gelu(x @ w["w"] + w["b"])
        mu = h.mean(-1, keepdims=True)
        var = ((h - mu) ** 2).mean(-1, keepdims=True)
        return (h - mu) * jax.lax.rsqrt(var + 1e-5) * w["g"]
    return f, rng.standard_normal((4, 16)).astype("float32"), w


def export_jax(f, x) -> str:
    """JAX -> StableHLO -> linalg (IREE's StableHLO input conversion, `iree-opt`)."""
    import jax
    stablehlo = jax.jit(f).lower(x).as_text()
    return subprocess.run(["iree-opt", "--chlo-legalize-to-stablehlo",
                           "--iree-stablehlo-to-iree-input"], input=stablehlo,
                          capture_output=True, text=True, check=True).stdout


def main():
    if torch is not None:
        torch.manual_seed(0)
        cases = {name: (model, args, None) for name, (model, args) in models().items()}
        cases.update(dynamic_models())
        for name, (model, args, dynamic) in cases.items():
            model.eval()
            with torch.no_grad():
                out = model(*args)
            outs = out if isinstance(out, tuple) else (out,)
            (HERE / f"{name}.mlir").write_text(export(model, args, dynamic))
            np.savez(HERE / f"{name}.npz", **{f"in{i}": a.numpy() for i, a in enumerate(args)},
                     **{f"w.{k}": w.numpy() for k, w in model.state_dict().items()},
                     **{f"out{i}": o.numpy() for i, o in enumerate(outs)})
            print(f"wrote {name}.mlir, {name}.npz")
    try:
        import jax  # noqa: F401
    except ImportError:
        print("jax is not installed: the JAX part is skipped")
        return
    f, x, weights = jax_dense_gelu_layernorm()
    (HERE / "jax_dense_gelu_layernorm.mlir").write_text(export_jax(f, x))
    np.savez(HERE / "jax_dense_gelu_layernorm.npz", in0=x, out0=np.asarray(f(x)),
             **{f"w.{k}": v for k, v in weights.items()})
    print("wrote jax_dense_gelu_layernorm.mlir, jax_dense_gelu_layernorm.npz")


if __name__ == "__main__":
    main()
