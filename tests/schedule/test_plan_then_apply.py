"""Primitives plan, then apply: every ScheduleError is raised before the first mutation.

The schedule's Rewriter (tir_mlir/schedule/rewriter.py) refuses a ScheduleError raised after
the module changed (an internal error naming the primitive); these tests check that it does,
and drive every primitive over the test workloads with legal and illegal arguments: none may
be refused, and each leaves the op index the module's (checked after every primitive, as
TIR_MLIR_CHECK_INDEX=1 is set for the tests)."""

import itertools
import re
from pathlib import Path

import pytest
from mlir import ir

from tir_mlir import Schedule, ScheduleError, parse
from tir_mlir.analysis.structure import erase
from tir_mlir.schedule.primitive import primitive
from tir_mlir.schedule.rewriter import REFUSED

DATA = Path(__file__).resolve().parents[1] / "data" / "programs"
PASSES = Path(__file__).resolve().parents[2] / "passes" / "schedule"
WORKLOADS = [
    "matmul",
    "mm_relu",
    "conv2d_pad",
    "softmax",
    "layernorm",
    "edge_misc",
    "edge_opaque",
    "transpose_add",
    "depthwise_conv2d",
    "where_ite",
]
IDENTITY = "lambda *v: v"


class _Faulty(Schedule):
    """A schedule with two primitives that check after they mutate (what must not be)."""

    @primitive
    def rename_then_refuse(self, block: str) -> None:
        op = self._block(block)
        op.attributes["name"] = ir.StringAttr.get("renamed")
        raise ScheduleError("rename_then_refuse: too late")

    @primitive
    def erase_then_refuse(self, block: str) -> None:
        erase(self._block(block))
        raise ScheduleError("erase_then_refuse: too late")

    @primitive
    def refuse_first(self, block: str) -> None:
        self._block(block)
        raise ScheduleError("refuse_first: in time")


def _matmul():
    return parse((DATA / "matmul.tir").read_text())


@pytest.mark.parametrize("name", ["rename_then_refuse", "erase_then_refuse"])
def test_a_schedule_error_after_a_mutation_is_refused(name):
    sch = _Faulty(_matmul())
    before = sch.mod.script()
    with pytest.raises(
        ScheduleError,
        match=f"{name}: internal error: a ScheduleError {REFUSED} .*: {name}: too late",
    ):
        getattr(sch, name)("C")
    assert sch.mod.script() == before and len(sch.trace) == 0
    assert sch.get(sch.get_block("C")).name_hint == "C"  # the index is the module's


def test_a_schedule_error_before_any_mutation_passes_through():
    sch = _Faulty(_matmul())
    sch.get_loops("C")  # handles given out while planning do not count
    with pytest.raises(ScheduleError, match="^refuse_first: in time$"):
        sch.refuse_first("C")


def test_trusted_replay_has_no_snapshot_to_compare():
    sch = _Faulty(_matmul())
    with sch.trusted_mode(), pytest.raises(ScheduleError, match="^rename_then_refuse: too late"):
        sch.rename_then_refuse("C")


def _calls(b, b2, l, l2):
    """(primitive, args): legal and illegal calls on block b (b2 another block, or None) and
    loops l, l2 (two loops around b)."""
    yield "split", (l, [None, 3])
    yield "fuse", (l, l2)
    yield "reorder", (l2, l)
    yield "add_unit_loop", (b,)
    yield "merge", (l, l2)
    yield "loop_partition", (l, [3, None])
    yield "parallel", (l,)
    yield "vectorize", (l,)
    yield "bind", (l, "threadIdx.x")
    for k in (0, 1):
        yield "cache_read", (b, k, "shared")
        yield "cache_write", (b, k, "local")
        yield "cache_inplace", (b, k, "local")
        yield "reindex", (b, ("read", k))
        yield "reindex", (b, ("write", k))
        yield "read_at", (l, b, k, "shared")
        yield "write_at", (l, b, k, "shared")
        yield "set_scope", (b, k, "shared")
        yield "storage_align", (b, k, 0, 16, 1)
        yield "unsafe_set_dtype", (b, k, "float16")
        yield "rolling_buffer", (b, k)
        yield "prefetch", (b, k, l)
        yield "set_axis_separator", (b, ("write", k), [1])
        yield "transform_layout", (b, ("write", k), "lambda i, j: (j, i)")
        yield "transform_layout", (b, ("read", k), "lambda i, j: (i // 4, j, i % 4)")
        yield "reindex_cache_read", (b, k, "shared", IDENTITY)
        yield "reindex_cache_write", (b, k, "shared", IDENTITY)
    yield "cache_index", (b, "global")
    yield "compute_at", (b, l)
    yield "reverse_compute_at", (b, l)
    yield "compute_inline", (b,)
    yield "reverse_compute_inline", (b,)
    yield "compute_root", (b,)
    yield "rfactor", (l, 0)
    yield "decompose_reduction", (b, l)
    yield "decompose_reduction", (b, l2)
    yield "blockize", (l,)
    yield "tensorize", (b, "mac16_f32")
    yield "tensorize", (l, "mac16_f32")
    yield "transform_block_layout", (b, IDENTITY)
    yield "reorder_block_iter_var", (b, [1, 0])
    yield "pad_einsum", (b, [32] * 3)
    yield "decompose_padding", (b, l)
    yield "annotate", (b, "k", 1)
    yield "unannotate", (b, "k")
    yield "set_store_predicate", (b, "lambda *v: v[0] < 7")
    yield "sample_perfect_tile", (l, 2)
    yield "sample_compute_location", (b,)
    if b2 is not None:
        yield "compute_at", (b2, l)
        yield "reverse_compute_at", (b2, l)
        yield "cache_read", (b, 0, "shared", [b2])


@pytest.mark.parametrize("workload", WORKLOADS)
def test_every_primitive_raises_only_before_its_first_mutation(workload):
    base = Schedule(parse((DATA / f"{workload}.tir").read_text()))
    blocks = [base.get_block(n) for n in base.get_block_names()]
    nests = [base.get_loops(b) for b in blocks]
    before = base.mod.mlir()  # (with the sids the handles above gave)
    applied = refused = 0
    for b, loops in zip(blocks, nests):
        pairs = list(itertools.permutations(loops, 2))[:2] or [(lp, lp) for lp in loops]
        b2 = next((x for x in blocks if x is not b), None)
        for l, l2 in pairs:
            for name, args in _calls(b, b2, l, l2):
                sch = base.copy()
                try:
                    getattr(sch, name)(*args)
                    applied += 1
                except ScheduleError as e:
                    refused += 1
                    assert REFUSED not in str(e), f"{workload}: {name}{args}: {e}"
                    assert sch.mod.mlir() == before
    assert applied and refused  # (both kinds of call were made)


def test_rewrites_erase_only_through_the_one_erase():
    """The op index is kept across primitives because it hears of every erased op: a rewrite
    erases through tir_mlir.analysis.structure.erase, never Operation.erase itself."""
    direct = [
        f"{p.name}:{n + 1}"
        for p in sorted(PASSES.glob("*.py"))
        for n, line in enumerate(p.read_text().splitlines())
        if re.search(r"\.erase\(\)", line)
    ]
    assert direct == []
