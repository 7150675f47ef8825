"""Without TVM: the programs of tests/support/adapter_programs.py keep their meaning under the
schedules fixed for TVM's own tests (numbers vs the unscheduled program, printed text)."""

import pytest

import tir_mlir
from schedule_check import check_numerics, interp

import adapter_programs as progs


def _sched(src):
    return tir_mlir.Schedule(tir_mlir.parse(src))


def _func(mod):
    return list(mod.functions)[0]


def test_builtin_call_prints_back_and_is_not_lowered():
    mod = tir_mlir.parse(progs.OPAQUE)
    text = mod.script()
    # the call is a bare statement, the written regions stay (not B read and written in full)
    assert "\n            T.tvm_fill_fragment(B.data, 8, 8, 8, 0, vi * 8 + vj)" in text
    assert text.count("T.reads()") == 2 and "T.writes(A[0:8, 0:8])" in text
    assert tir_mlir.parse(text).script() == text
    with pytest.raises(tir_mlir.TIRError, match="cannot lower T.tvm_fill_fragment"):
        tir_mlir.build(mod)


def test_builtin_takes_only_dtype_keyword():
    bad = progs.OPAQUE.replace("vi * 8 + vj)", "vi * 8 + vj, layout=1)")
    with pytest.raises(tir_mlir.TIRError, match="unexpected keyword argument 'layout'"):
        tir_mlir.parse(bad)


def test_set_scope_through_match_buffer_numbers():
    s, before = _sched(progs.MATCHED), tir_mlir.parse(progs.MATCHED)
    s.set_scope(s.get_block("B"), 0, "local")
    text = s.mod.script()
    assert 'B_local = T.alloc_buffer((16, 4), scope="local")' in text
    assert text.count('scope="local", offset_factor=1)') == 2  # both views follow
    check_numerics(before, s.mod, _func(s.mod))


def test_decompose_padding_after_nondividing_tiles_numbers():
    s, before = _sched(progs.PADDED_POOL), tir_mlir.parse(progs.PADDED_POOL)
    io, _ = s.split(s.get_loops(s.get_block("pool"))[0], factors=[None, 8])
    s.compute_at(s.get_block("pad"), io)
    s.decompose_padding(s.get_block("pad"), s.get_loops(s.get_block("pad"))[1])
    where = [ln.strip() for ln in s.mod.script().splitlines() if "T.where" in ln]
    # the in-bound conditions first, then the tile's own bound
    assert any(w.startswith("T.where(3 <= ") and w.endswith("< 36)") for w in where), where
    check_numerics(before, s.mod, _func(s.mod))


def test_bind_above_nested_reduction_numbers():
    s, before = _sched(progs.NESTED), tir_mlir.parse(progs.NESTED)
    s.bind(s.get_loops(s.get_block("inner"))[1], "threadIdx.x")
    s.bind(s.get_loops(s.get_block("outer"))[0], "blockIdx.x")
    check_numerics(before, s.mod, _func(s.mod), interp)


def test_parallel_refuses_non_quasi_affine_reduction():
    s = _sched(progs.NOT_QUASI_AFFINE)
    before = s.mod.script()
    with pytest.raises(tir_mlir.ScheduleError, match="compact dataflow"):
        s.parallel(s.get_loops(s.get_block("B"))[0])
    assert s.mod.script() == before


@pytest.mark.parametrize("case", sorted(progs.RFACTOR_REFUSED))
def test_rfactor_refusals_leave_module_unchanged(case):
    s = _sched(progs.RFACTOR_REFUSED[case])
    before = s.mod.script()
    block = s.get_block("C" if case == "not_covered" else "B")
    with pytest.raises(tir_mlir.ScheduleError, match="rfactor"):
        s.rfactor(s.get_loops(block)[-1], 0)
    assert s.mod.script() == before


@pytest.mark.parametrize("which", [3, 4])
def test_rfactor_with_unit_loops_numbers(which):
    s, before = _sched(progs.ROWSUM_SPLIT), tir_mlir.parse(progs.ROWSUM_SPLIT)
    s.rfactor(s.get_loops(s.get_block("B"))[which], 0)
    # the write-back nest keeps the unit loops u and w (TVM's loop structure)
    assert len(s.get_loops(s.get_block("B"))) == 4
    check_numerics(before, s.mod, _func(s.mod))


def test_blockize_without_unit_iters_numbers():
    s, before = _sched(progs.ROWSUM_SPLIT), tir_mlir.parse(progs.ROWSUM_SPLIT)
    s.blockize(s.get_loops(s.get_block("B"))[3], preserve_unit_iters=False)
    assert "vi_o = T.axis.spatial(8, i)" in s.mod.script()
    check_numerics(before, s.mod, _func(s.mod))


def test_written_accumulator_read_keeps_its_place_and_index():
    s = _sched(progs.FOLDED_READ)
    text = s.mod.script()
    assert "T.reads(C[vi, vc], A[vi, vc // 8 * 3 + vr], W[vc, vr])" in text
    assert tir_mlir.parse(text).script() == text
    # ("read", 0) is C, as TVM counts the written T.reads (refused: C is also written)
    with pytest.raises(tir_mlir.ScheduleError, match="reads and writes buffer 'C'"):
        s.reindex(s.get_block("C"), ("read", 0))
    before = tir_mlir.parse(progs.FOLDED_READ)
    s.reindex(s.get_block("C"), ("read", 1))
    assert "A_reindex = T.alloc_buffer((4, 3))" in s.mod.script()  # no dimension for vc
    check_numerics(before, s.mod, _func(s.mod))


def test_reverse_compute_at_reduction_consumer_numbers():
    s, before = _sched(progs.TILED_THEN_REDUCED), tir_mlir.parse(progs.TILED_THEN_REDUCED)
    s.reverse_compute_at(s.get_block("B"), s.get_loops(s.get_block("P"))[0])
    assert "vk = T.axis.reduce(16, io * 4 + ax1)" in s.mod.script()
    check_numerics(before, s.mod, _func(s.mod))


def test_compute_at_floordiv_region_numbers():
    s, before = _sched(progs.TILED_REPEAT), tir_mlir.parse(progs.TILED_REPEAT)
    s.compute_at(s.get_block("t"), s.get_loops(s.get_block("y"))[0])
    assert "vi = T.axis.spatial(4, io // 2)" in s.mod.script()
    check_numerics(before, s.mod, _func(s.mod))


def test_const_first_binding_round_trips_and_follows_rewrites():
    s = _sched(progs.CONST_FIRST)
    text = s.mod.script()
    assert "vi = T.axis.spatial(16, 8 + i)" in text and tir_mlir.parse(text).script() == text
    s.split(s.get_loops(s.get_block("hi"))[0], factors=[2, 4])  # a new binding: flat
    assert "vi = T.axis.spatial(16, i_0 * 4 + i_1 + 8)" in s.mod.script()
