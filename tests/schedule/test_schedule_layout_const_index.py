"""transform_layout maps written as TVM users write them: the index variables have a dtype
(`i.dtype`) and a result may be an integer constant object (`tir.const(0, i.dtype)`)."""

import pytest

from schedule_check import check_all

SRC = """
@T.prim_func
def main(B: T.Buffer((16,), "int32")):
    A = T.alloc_buffer((16,), "int32")
    for i in range(16):
        with T.block("block"):
            vi = T.axis.remap("S", [i])
            A[vi] = vi * 3
    for i in range(16):
        with T.block("copy"):
            vi = T.axis.remap("S", [i])
            B[vi] = A[vi]
"""


class _IntConst:
    """An integer constant object as TVM's tir.const returns it (value, dtype)."""

    def __init__(self, value, dtype):
        self.value, self.dtype = value, dtype


def test_map_with_a_constant_object_result():
    def sched(s):
        s.transform_layout("block", ("write", 0), lambda i: [_IntConst(0, i.dtype), i // 8, i % 8])

    sch = check_all(SRC, sched, "main", tvm_diff=False)
    assert 'A = T.alloc_buffer((1, 2, 8), "int32")' in sch.mod.script()
    assert "A[0, vi // 8, vi % 8] = vi * 3" in sch.mod.script()


@pytest.mark.tvm
def test_map_with_tvm_const_matches_tvm():
    import tvm

    def sched(s):
        s.transform_layout(
            "block", ("write", 0), lambda i: [tvm.tir.const(0, i.dtype), i // 8, i % 8]
        )

    check_all(SRC, sched, "main")
