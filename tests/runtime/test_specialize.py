"""Specialization as constant propagation over the IR (tir_mlir/transforms/specialize.py): the
result prints exactly like the same program written with the numbers."""

import re

import numpy as np
import pytest
from symbolic_build import SOURCES, _check_at_sizes, program

import tir_mlir
from tir_mlir.context import get_context
from tir_mlir.frontend.parser import build as build_ir
from tir_mlir.frontend.parser import parse_ast
from tir_mlir.transforms.specialize import SpecializeError, specialize_module


def specialized(name, values):
    mod = program(name).copy()
    with get_context():
        specialize_module(mod.module, values)
        mod.module.operation.verify()
    return mod


def written_with(name, values):
    """The program's source with its size vars' declarations gone, its specialized scalar
    parameters out of the signature, and every name replaced by its number."""
    src = re.sub(
        r"\n    \w+(, \w+)* = T\.int(32|64)\(\)(, T\.int(32|64)\(\))*\n", "\n", SOURCES[name]
    )
    for k, v in values.items():
        src = re.sub(rf", {k}: T\.\w+", "", src)
        src = re.sub(rf"\b{k}\b", repr(v), src)
    return build_ir(parse_ast(src, f"{name}.py"), f"{name}.py")


CASES = [
    ("add", {"n": 128}),
    ("tiled", {"n": 10}),
    ("two_stage", {"n": 6}),
    ("axpb", {"alpha": 1.5, "n": 8, "shift": -3}),
    ("flat", {"n": 2, "m": 3}),
    ("head", {"n": 20}),
    ("reverse", {"n": 5}),
    ("halves", {"n": 9}),
    ("conv2d", {"h": 5, "wd": 7}),
    ("batch_matmul", {"bs": 2, "n": 5}),
]


@pytest.mark.parametrize("name, values", CASES, ids=[c[0] for c in CASES])
def test_prints_like_the_program_written_with_the_numbers(name, values):
    mod = specialized(name, values)
    assert mod.script() == written_with(name, values).script()
    text = mod.mlir()
    assert "?x" not in text and "tir.match_shape" not in text and "index {" not in text


def test_specialized_refines_types_and_drops_arguments():
    mod = specialized("two_stage", {"n": 6})
    text = mod.mlir()
    assert "memref<6x16xf32>" in text and 'memref.alloc() {tir.name = "B"' in text
    assert re.search(
        r"func\.func @two_stage\(%arg0: memref<6x16xf32> \{[^}]*\}, %arg1: "
        r"memref<6x16xf32> \{[^}]*\}\)",
        text,
    )


def test_partial_specialization_keeps_the_other_sizes_symbolic():
    mod = specialized("flat", {"m": 3})
    assert "memref<?x3xf32>" in mod.mlir()
    lib = tir_mlir.build(mod)
    (params) = lib.sigs["flat"]
    assert [p.name for p in params] == ["A", "B", "n"]
    _check_at_sizes(lib, "flat", seed=9)


def test_specialized_program_gives_the_symbolic_kernels_numbers():
    lib = tir_mlir.build(specialized("axpb", {"alpha": 1.5, "n": 8, "shift": -3}))
    a, b = np.random.default_rng(1).random(8, dtype="float32"), np.zeros(8, "float32")
    lib["axpb"](a, b)
    np.testing.assert_allclose(b, a * np.float32(1.5) - 3, rtol=1e-6)


def test_bad_values_are_refused():
    with pytest.raises(SpecializeError, match="no function has a parameter or size named 'q'"):
        specialized("add", {"q": 3})
    with pytest.raises(SpecializeError, match="n takes an integer, got 2.5"):
        specialized("add", {"n": 2.5})
    with pytest.raises(SpecializeError, match="break the function's assumption"):
        specialized("scaled", {"n": 6})
    assert "tir.assume" not in specialized("scaled", {"n": 8}).mlir()
