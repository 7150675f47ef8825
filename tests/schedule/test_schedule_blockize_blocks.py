"""blockize of a list of sibling blocks (TVM 0.21's `blockize([b1, b2])`): TVM's text, the
numbers of the unscheduled program, the trace replayed, and the lists TVM cannot blockize."""

import pytest

from schedule_check import check_all, check_error, parse
from tir_mlir import Schedule

SIBLINGS = """
@T.prim_func
def main(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32")):
    for m in range(6):
        for i, j in T.grid(3, 1):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj] * T.float32(2)
        for i, j in T.grid(128, 64):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj + 64] = A[vi, vj + 64] * T.float32(3)
"""


def _blockize(preserve_unit_iters):
    def fn(sch):
        sch.blockize([sch.get_block("B"), sch.get_block("C")], preserve_unit_iters)

    return fn


def test_siblings_in_one_outer_block():
    sch = check_all(SIBLINGS, _blockize(False), "main", tvm_diff=False)
    assert """    for m in range(6):
        with T.block("outer_B_C_"):
            vi_o = T.axis.spatial(1, 0)
            vj_o = T.axis.spatial(1, 0)
            T.reads(A[0:128, 0:128])
            T.writes(B[0:128, 0:128])
            for i, j in T.grid(3, 1):
                with T.block("B"):
                    vi_i = T.axis.spatial(3, i)
                    T.reads(A[vi_i, 0])
                    T.writes(B[vi_i, 0])
                    B[vi_i, 0] = A[vi_i, 0] * T.float32(2.0)
            for i, j in T.grid(128, 64):
                with T.block("C"):
                    vi_i, vj_i = T.axis.remap("SS", [i, j])""" in sch.mod.script()
    assert str(sch.trace).endswith("sch.blockize(target=[b0, b1], preserve_unit_iters=False)")


def test_a_preserved_unit_iter_reads_the_outer_iter_var():
    sch = check_all(SIBLINGS, _blockize(True), "main", tvm_diff=False)
    assert "B[vi_i, vj_o] = A[vi_i, vj_o] * T.float32(2.0)" in sch.mod.script()


OUTER_LOOP_BINDING = SIBLINGS.replace(
    'vi, vj = T.axis.remap("SS", [i, j])\n                B[vi, vj] =',
    "vi = T.axis.spatial(128, m * 3 + i)\n                vj = T.axis.spatial(128, j)\n"
    "                B[vi, vj] =",
)
APART = """
@T.prim_func
def main(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32"), C: T.Buffer((16,), "float32")):
    for i in range(16):
        with T.block("B"):
            vi = T.axis.remap("S", [i])
            B[vi] = A[vi]
    for i in range(16):
        with T.block("X"):
            vi = T.axis.remap("S", [i])
            C[vi] = A[vi]
    for i in range(16):
        with T.block("C"):
            vi = T.axis.remap("S", [i])
            C[vi] = B[vi] + C[vi]
"""
ILLEGAL = {
    "outer_loop_in_binding": (OUTER_LOOP_BINDING, ["B", "C"], "uses a loop outside"),
    "not_consecutive": (APART, ["B", "C"], "not consecutive"),
    "twice": (SIBLINGS, ["B", "B"], "given twice"),
    "empty": (SIBLINGS, [], "empty"),
}


@pytest.mark.parametrize("name", sorted(ILLEGAL))
def test_illegal_lists_refused(name):
    src, names, match = ILLEGAL[name]
    sch = Schedule(parse(src))
    blocks = [sch.get_block(n) for n in names]
    check_error(sch, lambda s: s.blockize(blocks), match)


@pytest.mark.tvm
def test_tvm_refuses_a_binding_on_an_outer_loop():
    import tvm

    sch = tvm.tir.Schedule(tvm.script.from_source(OUTER_LOOP_BINDING))
    with pytest.raises(tvm.TVMError):
        sch.blockize([sch.get_block("B"), sch.get_block("C")])
