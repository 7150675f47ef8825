"""The shared symbolic workload (tests/data/symbolic/*.tir) builds ONCE per program and gives,
at five sizes (primes, sizes below every tile), the numbers the reference interpreter gives
for the program specialized at that size (a static program: the oracle shares no lowering with
the kernel)."""

from pathlib import Path

import numpy as np
import pytest
from tir_mlir.passes.lowering.tir_to_affine import TirToAffine

import tir_mlir
from tir_mlir.analysis import size_exprs
from tir_mlir.context import get_context
from tir_mlir.frontend.parser import build as build_ir
from tir_mlir.frontend.parser import parse_ast
from tir_mlir.interpreter import interpret
from tir_mlir.runtime.signature import signatures
from tir_mlir.transforms.specialize import specialize_module

FOLDER = Path(__file__).parent.parent / "data" / "symbolic"
PROGRAMS = sorted(p.stem for p in FOLDER.glob("*.tir"))
SIZES = (1, 3, 5, 7, 13)
# Values of the scalar parameters a caller passes (a loop extent must stay within its buffer).
SCALARS = {
    "chunk": lambda n: 4,
    "k": lambda n: 5,
    "offset": lambda n: -2,
    "shift": lambda n: 3,
    "x": lambda n: 7,
    "alpha": lambda n: 1.5,
    "y": lambda n: -0.5,
    "t": lambda n: 0.5,
}
# Sizes a program's T.assume or shapes ask for, from the size under test.
VAR_SIZES = {
    "assume_div4": lambda n: {"n": 4 * n},
    "conv2d_hw": lambda n: {"h": n + 2, "wd": n + 4},
    "window_sum": lambda n: {"n": n + 2},
}


def _program(name):
    path = FOLDER / f"{name}.tir"
    return build_ir(parse_ast(path.read_text(), str(path)), str(path))


def _values(name, params, n) -> dict:
    """Every size var and scalar parameter at size `n` (the k-th var is n + k)."""
    values = VAR_SIZES.get(name, lambda n: {})(n)
    for k, p in enumerate(q for q in params if q.kind == "var"):
        values.setdefault(p.name, n + k)
    for p in params:
        if p.kind in ("index", "scalar"):
            values[p.name] = SCALARS[p.name](n)
    return values


def _arrays(params, values, rng):
    arrays = []
    for p in params:
        if p.kind == "buffer":
            shape = [size_exprs.evaluate(s, values) for s in p.shape]
            arrays.append((rng.random(shape) * 4 - 2).astype(p.dtype))
    return arrays


@pytest.mark.parametrize("name", PROGRAMS)
def test_builds_once_and_matches_the_specialized_program(name, monkeypatch):
    runs = []
    real = TirToAffine.__call__
    monkeypatch.setattr(TirToAffine, "__call__", lambda self, m: (runs.append(1), real(self, m)))
    mod = _program(name)
    lib = tir_mlir.build(mod)
    assert len(runs) == 1
    ((fname, params),) = lib.sigs.items()
    rng = np.random.default_rng(0)
    for n in SIZES:
        values = _values(name, params, n)
        arrays = _arrays(params, values, rng)
        expected = [a.copy() for a in arrays]
        static = mod.copy()
        with get_context():
            specialize_module(static.module, values)
            assert all(p.kind == "buffer" for p in signatures(static.module)[fname])
        interpret(static, fname, *expected)
        it = iter(arrays)
        lib[fname](
            *[next(it) if p.kind == "buffer" else values[p.name] for p in params if p.kind != "var"]
        )
        for got, want in zip(arrays, expected):
            np.testing.assert_allclose(
                got, want, rtol=2e-5, atol=1e-5, err_msg=f"{name} at {values}"
            )
    assert len(runs) == 1
