"""Handles never change code: a schedule that only takes handles (`get_block`, `get_loops`,
`get_producers`, `get_consumers`, `get_child_blocks`) lowers to exactly the scf of the program
as parsed.

A handle leaves a stable id (`tir.sid`) on its block or loop; lowering strips them from its
copy of the module, so no stage can read one as a user annotation (loop-interchange once did,
and left a matmul after `get_loops` with its inner loop striding across the rows of B)."""

from pathlib import Path

import lowering_programs as lp
import pytest
import shared_programs as sp
from mlir import ir
from tir_mlir.passes.lowering.pipeline import lower

import tir_mlir
from tir_mlir import te

TESTS = Path(__file__).parent.parent
MATMUL_1024 = (TESTS / "golden" / "matmul.tir").read_text().replace("128", "1024")


def _corpus() -> dict:
    """name -> IRModule factory: the printed programs, the shared test programs, hand-written
    tir-dialect programs and whole scheduled programs."""
    files = (
        sorted((TESTS / "golden").glob("*.tir"))
        + sorted((TESTS / "data" / "tuner_candidates").glob("*.tir"))
        + [
            TESTS / "data" / n
            for n in (
                "mm_relu_scheduled.tir",
                "conv2d_2021.tir",
                "softmax_sum_per_element.tir",
                "vector_add_module.tir",
            )
        ]
    )
    out = {f"{p.parent.name}/{p.name}": (lambda p=p: tir_mlir.load(str(p))) for p in files}
    for name, text in [
        ("MATMUL_16", sp.MATMUL_16),
        ("MM_RELU_16", sp.MM_RELU_16),
        ("CONV2D_PAD_C4_6X6", sp.CONV2D_PAD_C4_6X6),
        ("CONV2D_C2_6X6", sp.CONV2D_C2_6X6),
        ("MM_T", sp.MM_T),
        ("GEMV_DESC", sp.GEMV_DESC),
    ]:
        out[name] = lambda t=text: tir_mlir.parse(t)
    out["matmul_1024"] = lambda: tir_mlir.parse(MATMUL_1024)
    out["lp.matmul_64"] = lambda: lp.matmul(64)
    out["lp.matmul_i8"] = lambda: lp.matmul(32, "i8", "i32")
    out["lp.matmul_parallel"] = lambda: lp.matmul(64, kinds=("parallel", "serial", "serial"))
    out["lp.scale_2d"] = lambda: lp.scale_2d(64, 64, ("serial", "vectorized"))
    out["lp.split_where"] = lambda: lp.split_where(100, 16)
    return out


CORPUS = _corpus()


def _blocks(mod) -> list:
    """(function, block name) of every block whose name is unique in its function."""
    names = []
    for func in mod:
        found = []

        def visit(op, found=found):
            if op.name == "tir.block":
                found.append(ir.StringAttr(op.attributes["name"]).value)
            return ir.WalkResult.ADVANCE

        mod[func].walk(visit, ir.WalkOrder.PRE_ORDER)
        names += [(func, n) for n in found if found.count(n) == 1]
    return names


def _scf(mod) -> str:
    return str(lower(mod.module, emit="scf"))


def test_corpus_is_large_enough():
    assert len(CORPUS) >= 30


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_handles_do_not_change_lowering(name):
    parsed = CORPUS[name]()
    sch = tir_mlir.Schedule(parsed)
    for func, block in _blocks(parsed):
        b = sch.get_block(block, func_name=func)
        sch.get_loops(b)
        sch.get_producers(b)
        sch.get_consumers(b)
        sch.get_child_blocks(sch.get_block("root", func_name=func))
    assert "tir.sid" in sch.mod.mlir()  # the handles are there to be ignored
    assert _scf(sch.mod) == _scf(parsed)


def test_handles_leave_the_schedule_module_alone():
    """Lowering strips the ids from its copy only: the schedule's handles stay usable."""
    sch = tir_mlir.Schedule(tir_mlir.parse(sp.MATMUL_16))
    _, j, _ = sch.get_loops(sch.get_block("C"))
    _scf(sch.mod)
    assert "tir.sid" in sch.mod.mlir()
    sch.split(j, factors=[None, 4])
    assert len(sch.get_loops(sch.get_block("C"))) == 4


def _te_matmul(n):
    A = te.placeholder((n, n), name="A")
    B = te.placeholder((n, n), name="B")
    k = te.reduce_axis((0, n), name="k")
    C = te.compute((n, n), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    return A, B, C


@pytest.mark.parametrize("n", [64, 1024])
def test_te_schedule_lowers_as_its_prim_func(n):
    """`te.create_schedule` takes a handle of every loop; unscheduled, it still lowers to the
    code of `te.create_prim_func` of the same computation."""
    A, B, C = _te_matmul(n)
    s = te.create_schedule(C.op)
    scheduled = te.lower(s, [A, B, C])
    assert "tir.sid" in scheduled.mlir()
    plain = te.create_prim_func([A, B, C])
    assert _scf(scheduled) == _scf(plain)
