"""TVM's JSON traces (the form in its tuning logs) for 20 different schedules, most using
issue 13's primitives: TVM's replays here to the program TVM made (TVM structural equality;
also the same text as the schedule applied directly here), and ours replays in TVM to the
same program. The schedules come from the primitives' own tests."""

import json
from pathlib import Path

import pytest

import tir_mlir
from tir_mlir import Schedule, Trace
from tir_mlir.schedule.tvm_trace import from_tvm_json, to_tvm_json
from shared_programs import MATMUL_16

from schedule_cases import block_iters as iters
from schedule_cases import buffer_access as access
from schedule_cases import cache_index as index
from schedule_cases import cache_inplace as inplace
from schedule_cases import decompose_padding as padding
from schedule_cases import loop_partition as partition
from schedule_cases import merge as merge
from schedule_cases import pad_einsum as einsum
from schedule_cases import axis_separator as separator
from schedule_cases import read_write_at as at
from schedule_cases import reindex as reindex
from schedule_cases import reindex_cache as reindex_cache
from schedule_cases import rolling_buffer as rolling
from schedule_cases import set_dtype as dtype


def _first(cases):
    return cases[sorted(cases)[0]]


def _tiled(sch):
    b = sch.get_block("C")
    i, j, k = sch.get_loops(b)
    i0, i1 = sch.split(i, [None, 4])
    j0, j1 = sch.split(j, [None, 8])
    sch.reorder(i0, j0, k, i1, j1)
    sch.parallel(sch.fuse(i0, j0))
    sch.vectorize(j1)
    sch.transform_layout(b, ("read", 1), lambda a, c: (c // 4, a, c % 4))


def _sampled(sch):
    b = sch.get_block("C")
    i, j, k = sch.get_loops(b)
    sch.split(i, sch.sample_perfect_tile(i, n=2, max_innermost_factor=8, decision=[4, 4]))
    sch.cache_write(b, 0, "local")
    sch.decompose_reduction(b, sch.get_loops(b)[1])


CASES = {
    "loop_partition": _first(partition.SCHEDULES),
    "merge": _first(merge.SCHEDULES),
    "cache_index": _first(index.AGREES),
    "cache_inplace": inplace.AGREES["update_blockized"],
    "reindex": _first(reindex.SCHEDULES),
    "reindex_cache_read": reindex_cache.SCHEDULES["read_split_map"],
    "reindex_cache_write": reindex_cache.SCHEDULES["write_transposed_with_reader"],
    "read_at": at.SCHEDULES["read_tile"],
    "write_at": at.SCHEDULES["write_tile"],
    "rolling_buffer": rolling.SCHEDULES["conv1d_after_compute_at"],
    "decompose_padding": padding.SCHEDULES["conv_compute_at"],
    "pad_einsum": _first(einsum.SCHEDULES),
    "set_axis_separator": _first(separator.SCHEDULES),
    "annotate_buffer_access": _first(access.SCHEDULES),
    "unsafe_hide_buffer_access": access.SCHEDULES["hide_read"],
    "transform_block_layout": iters.LAYOUTS["split_and_move"],
    "reorder_block_iter_var": _first(iters.REORDERS),
    "unsafe_set_dtype": (dtype.SRC, dtype.set_dtype("float16")),
    "tiled_transform_layout": (MATMUL_16, _tiled),
    "sampled_cache_write": (MATMUL_16, _sampled),
}
# the printed module differs from TVM's beyond structural equality (docs/tvm_compat.md):
# cache_index keeps no strides on its index buffers and re-infers the block's T.reads
NOT_TVM_EQUAL = {"cache_index"}
RECORDED = Path(__file__).parent.parent / "data" / "tvm_json_traces"


def plain(obj):
    """TVM's JSON trace object as the plain lists, strings and numbers of its log files."""
    if obj is None or isinstance(obj, (bool, int, float)):
        return int(obj) if isinstance(obj, bool) else obj
    if isinstance(obj, str):
        return str(obj)
    if hasattr(obj, "value"):
        return int(obj.value) if isinstance(obj.value, bool) else obj.value
    return [plain(x) for x in obj]


def _tvm_schedule(src):
    import tvm

    return tvm.tir.Schedule(tvm.script.from_source(src))


def _tvm_func(mod):
    """The module's one PrimFunc (from_source gives a bare PrimFunc for a bare function)."""
    import tvm

    func = mod if isinstance(mod, tvm.tir.PrimFunc) else mod[mod.get_global_vars()[0]]
    return func.without_attr("global_symbol")


def _equal_in_tvm(ours_text, theirs_mod):
    """TVM structural equality, else after TVM's Simplify (TVM keeps substitution trees like
    `(i_0 + i_1) * 8`), else without T.reads/T.writes (loop_partition, annotate_buffer_access:
    region printing, docs/tvm_compat.md)."""
    import tvm

    a, b = _tvm_func(tvm.script.from_source(ours_text)), _tvm_func(theirs_mod)
    simplify = tvm.tir.transform.Simplify()
    if tvm.ir.structural_equal(a, b) or tvm.ir.structural_equal(
        simplify(tvm.IRModule({"main": a}))["main"], simplify(tvm.IRModule({"main": b}))["main"]
    ):
        return True
    a, b = (_tvm_func(tvm.script.from_source(_strip_regions(t))) for t in (ours_text, b.script()))
    return tvm.ir.structural_equal(a, b)


def _strip_regions(text):
    return "\n".join(
        ln for ln in text.splitlines() if not ln.lstrip().startswith(("T.reads(", "T.writes("))
    )


def test_twenty_different_schedules():
    traces = set()
    for src, fn in CASES.values():
        sch = Schedule(tir_mlir.parse(src))
        fn(sch)
        traces.add(str(sch.trace))
    assert len(traces) == len(CASES) == 20


def _recorded(name):
    """TVM 0.21's JSON trace of the schedule, as its database writes it (recorded)."""
    return (RECORDED / f"{name}.json").read_text()


@pytest.mark.parametrize("name", sorted(CASES))
def test_tvm_json_trace_replays_here(name):
    src, fn = CASES[name]
    direct = Schedule(tir_mlir.parse(src))
    fn(direct)
    for trace in (from_tvm_json(_recorded(name)), Trace.from_json(_recorded(name))):
        replayed = Schedule(tir_mlir.parse(src))
        trace.apply_to_schedule(replayed, remove_postproc=False)
        assert replayed.mod.script() == direct.mod.script()


@pytest.mark.tvm
@pytest.mark.parametrize("name", sorted(CASES))
def test_tvm_writes_the_recorded_json_trace(name, request):
    """TVM writes the trace that the test above replays (`--update-golden` records it again),
    and the program replayed from it here is TVM's."""
    src, fn = CASES[name]
    theirs = _tvm_schedule(src)
    fn(theirs)
    log_line = json.dumps(plain(theirs.trace.as_json()))  # as TVM's database writes it
    if request.config.getoption("--update-golden"):
        (RECORDED / f"{name}.json").write_text(log_line + "\n")
    assert json.loads(log_line) == json.loads(_recorded(name))
    replayed = Schedule(tir_mlir.parse(src))
    from_tvm_json(log_line).apply_to_schedule(replayed, remove_postproc=False)
    if name not in NOT_TVM_EQUAL:
        assert _equal_in_tvm(replayed.mod.script(), theirs.mod)


@pytest.mark.tvm
@pytest.mark.parametrize("name", sorted(CASES))
def test_our_json_trace_replays_in_tvm(name):
    import tvm

    src, fn = CASES[name]
    ours = Schedule(tir_mlir.parse(src))
    fn(ours)
    log_line = json.dumps(to_tvm_json(ours.trace))
    replayed = _tvm_schedule(src)
    tvm.tir.schedule.Trace.apply_json_to_schedule(json.loads(log_line), replayed)
    theirs = _tvm_schedule(src)
    fn(theirs)
    assert tvm.ir.structural_equal(_tvm_func(replayed.mod), _tvm_func(theirs.mod))


def test_cli_replays_a_tvm_json_trace(tmp_path):
    from click.testing import CliRunner
    from tir_mlir.cli import main

    src, fn = CASES["reindex_cache_read"]
    (tmp_path / "p.tir").write_text(src)
    (tmp_path / "t.json").write_text(_recorded("reindex_cache_read"))
    out = CliRunner().invoke(
        main, ["schedule", str(tmp_path / "p.tir"), "--transform", str(tmp_path / "t.json")]
    )
    assert out.exit_code == 0, out.output
    direct = Schedule(tir_mlir.parse(src))
    fn(direct)
    assert out.output.strip() == direct.mod.script().strip()


def test_unknown_tvm_instruction_is_a_trace_error():
    from tir_mlir.errors import TraceError

    with pytest.raises(TraceError, match="'NoSuchKind' has no tir-mlir counterpart"):
        Trace.from_json('[[["NoSuchKind", [], [], []]], []]')
