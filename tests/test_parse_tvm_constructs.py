"""TensorIR constructs TVM 0.21 accepts, beyond the basic ones (issue 15): each program is
read by TVM and by tir-mlir, printed identically, and run to the same numbers where it runs."""
import pytest

from tvm_same import same_as_tvm

pytest.importorskip("tvm")


def test_likely_in_a_block_condition():
    same_as_tvm('''
@T.prim_func
def likely(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    for i in range(16):
        with T.block("b"):
            vi = T.axis.spatial(16, i)
            if T.likely(vi < 15):
                B[vi] = A[vi + 1]
            else:
                B[vi] = A[vi]
''')


def test_likely_outside_blocks_and_in_values():
    same_as_tvm('''
@T.prim_func
def likely(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    for i in range(16):
        B[i] = T.if_then_else(T.likely(i < 15), A[i + 1], T.float32(0.0))
''')


def test_block_attr_on_root_and_inner_blocks():
    same_as_tvm('''
@T.prim_func
def f(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32")):
    with T.block("root"):
        T.reads(A[0:16, 0:16])
        T.writes(B[0:16, 0:16])
        T.block_attr({"meta_schedule.auto_tensorize": "x", "k": 4, "l": [1, 2], "f": 1.5, "b": True})
        for i, j in T.grid(16, 16):
            with T.block("b"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.block_attr({"x": T.int64(3), "s": "y", "u": T.int8(-1)})
                B[vi, vj] = A[vi, vj] + T.float32(1)
''')
