"""Regenerate the recorded torch-mlir output in this folder (needs torch and torch-mlir).

    python tests/data/linalg/regenerate.py

Each model is exported with `torch_mlir.fx.export_and_import(..., output_type=
"linalg-on-tensors")` and written without debug locations (an error then points into the .mlir
file itself), weights as `dense_resource` blobs. Beside each `NAME.mlir`, `NAME.npz` holds the
example inputs, the weights and torch's outputs (`in0`, ..., `w.fc1.weight`, ..., `out0`, ...),
so the tests compute numpy references and compare with torch's numbers without torch. Shapes and weights are kept small so the files stay small.
"""
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

HERE = Path(__file__).parent


class MLP(nn.Module):
    """Linear -> GELU -> Linear -> softmax."""

    def __init__(self):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(16, 32), nn.Linear(32, 8)

    def forward(self, x):
        return torch.softmax(self.fc2(F.gelu(self.fc1(x))), dim=-1)


class LayerNorm(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = nn.LayerNorm(32)
        nn.init.normal_(self.norm.weight)       # not the default ones and zeros
        nn.init.normal_(self.norm.bias)

    def forward(self, x):
        return self.norm(x)


class ConvReLU(nn.Module):
    """conv2d (3x3, padding 1) + bias + ReLU."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)

    def forward(self, x):
        return torch.relu(self.conv(x))


class Attention(nn.Module):
    """Scaled dot-product attention of (batch, heads, seq, dim) queries, keys and values."""

    def forward(self, q, k, v):
        return F.scaled_dot_product_attention(q, k, v)


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
    }


def export(model: nn.Module, args) -> str:
    # (imported here: the tests build the models with torch alone)
    from torch_mlir import fx
    module = fx.export_and_import(model, *args, output_type="linalg-on-tensors")
    return module.operation.get_asm(large_elements_limit=1 << 30)


def main():
    torch.manual_seed(0)
    for name, (model, args) in models().items():
        model.eval()
        with torch.no_grad():
            out = model(*args)
        outs = out if isinstance(out, tuple) else (out,)
        (HERE / f"{name}.mlir").write_text(export(model, args))
        np.savez(HERE / f"{name}.npz", **{f"in{i}": a.numpy() for i, a in enumerate(args)},
                 **{f"w.{k}": w.numpy() for k, w in model.state_dict().items()},
                 **{f"out{i}": o.numpy() for i, o in enumerate(outs)})
        print(f"wrote {name}.mlir, {name}.npz")


if __name__ == "__main__":
    main()
