"""Printed output parses back to the same program: TVM's spellings of special floats, an empty
module, deep expressions."""
import pytest

import tir_mlir
from tir_mlir import TIRParseError

PROGRAM = '''# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
    for i in range(4):
        with T.block("B"):
            vi = T.axis.spatial(4, i)
            B[vi] = T.max(T.min(A[vi], {hi}), {lo}) + {nan}
'''


def test_special_floats_round_trip():
    src = PROGRAM.format(hi='T.float32("inf")', lo='T.float32("-inf")', nan="T.float32(1e999)")
    text = tir_mlir.parse(src).script()
    assert 'T.min(A[vi], T.float32("inf")), T.float32("-inf")) + T.float32("inf")' in text
    assert tir_mlir.parse(text).script() == text
    nan = tir_mlir.parse(PROGRAM.format(hi="A[vi]", lo="A[vi]", nan='T.float32("nan")'))
    assert tir_mlir.parse(nan.script()).script() == nan.script()
    with pytest.raises(TIRParseError, match='takes "inf", "-inf" or "nan"'):
        tir_mlir.parse(PROGRAM.format(hi='T.float32("big")', lo="A[vi]", nan="A[vi]"))


def test_empty_module_prints_as_tvm_and_reparses():
    text = ('# from tvm.script import ir as I\n# from tvm.script import tir as T\n\n'
            '@I.ir_module\nclass Module:\n    pass')
    mod = tir_mlir.parse(text)
    assert len(mod) == 0 and mod.script() == text


def test_deep_expressions_print_and_reparse():
    for body in (" + ".join(f"A[{k % 4}]" for k in range(3000)),
                 "T.max(" * 300 + "A[vi]" + ", A[0])" * 300):
        mod = tir_mlir.parse(PROGRAM.format(hi="A[vi]", lo="A[vi]", nan=body))
        text = mod.script()
        assert tir_mlir.parse(text).script() == text
