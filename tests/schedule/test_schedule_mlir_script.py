"""A trace as an MLIR script of the `tir_schedule` dialect (tir_mlir/schedule/mlir_script.py):
the scripts of 20 different traces verify with `mlir-opt --irdl-file=dialect/schedule.irdl.mlir`
and replay to the same programs; the CLI prints and applies them; bad scripts give located
errors."""

import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

import tir_mlir
from tir_mlir import Schedule, ScheduleError
from tir_mlir.errors import TraceError
from tir_mlir.cli import main
from tir_mlir.passes.lowering.llvm_ir import MLIR_BIN
from tir_mlir.schedule.mlir_script import irdl_text, trace_from_mlir, trace_to_mlir
from schedule_random import from_seed, program, random_schedule
from shared_programs import MATMUL_16

ROOT = Path(__file__).resolve().parent.parent.parent
IRDL = ROOT / "dialect" / "schedule.irdl.mlir"


def test_irdl_file_is_in_sync_with_the_primitives():
    assert IRDL.read_text() == irdl_text(), (
        "regenerate dialect/schedule.irdl.mlir: python -m tir_mlir.schedule.mlir_script"
    )


def _hand_written():
    """Schedules of issue 13's primitives that random draws rarely complete."""
    from schedule_cases import block_iters as iters
    from schedule_cases import cache_inplace as inplace
    from schedule_cases import decompose_padding as padding
    from schedule_cases import read_write_at as at
    from schedule_cases import rolling_buffer as rolling

    return [
        rolling.SCHEDULES["conv1d_after_compute_at"],
        padding.SCHEDULES["conv_compute_at"],
        inplace.AGREES["update_blockized"],
        at.SCHEDULES["write_then_read"],
        iters.LAYOUTS["then_split"],
    ]


def _traces(n=20):
    """(program text, Schedule) of n different traces: random schedules of at least 4
    instructions (the applied prefix when a step is rejected), each using a primitive the ones
    before did not; five hand-written ones; and a sampled one."""
    fixed = _hand_written()
    out, seen, seed = [], set(), 0
    while len(out) < n - 1 - len(fixed):
        name, steps = from_seed(seed)
        seed += 1
        src = program(name)
        sch = Schedule(tir_mlir.parse(src))
        try:
            random_schedule(src, steps)(sch)
        except ScheduleError:
            pass
        names = {inst.name for inst in sch.trace.insts}
        if len(sch.trace) >= 4 and names - seen:
            seen |= names
            out.append((src, sch))
    for src, fn in fixed:
        sch = Schedule(tir_mlir.parse(src))
        fn(sch)
        out.append((src, sch))
    sch = Schedule(tir_mlir.parse(MATMUL_16), seed=3)
    b = sch.get_block("C")
    i, j, k = sch.get_loops(b)
    sch.split(i, sch.sample_perfect_tile(i, n=2, max_innermost_factor=8))
    sch.annotate(
        b, "pragma_auto_unroll_max_step", sch.sample_categorical([0, 16, 64], [0.2, 0.3, 0.5])
    )
    sch.transform_layout(b, ("read", 0), lambda a, c: (c, a))
    out.append((MATMUL_16, sch))
    return out


_CACHE = []


def _cached_traces():
    if not _CACHE:
        _CACHE.extend(_traces())
    return _CACHE


def test_twenty_different_traces_over_the_new_primitives():
    traces = _cached_traces()
    assert len({str(sch.trace) for _, sch in traces}) == 20
    names = {inst.name for _, sch in traces for inst in sch.trace.insts}
    assert {
        "decompose_padding",
        "rolling_buffer",
        "cache_inplace",
        "read_at",
        "write_at",
        "reindex",
        "loop_partition",
        "transform_block_layout",
        "pad_einsum",
    } <= names


@pytest.mark.parametrize("k", range(20))
def test_scripts_verify_with_mlir_opt_and_replay(k, tmp_path):
    src, sch = _cached_traces()[k]
    text = trace_to_mlir(sch.trace)
    path = tmp_path / "s.mlir"
    path.write_text(text)
    p = subprocess.run(
        [str(MLIR_BIN / "mlir-opt"), f"--irdl-file={IRDL}", str(path)],
        capture_output=True,
        text=True,
    )
    assert p.returncode == 0, p.stderr
    trace = trace_from_mlir(text)
    assert str(trace).replace(" ", "") and len(trace) == len(sch.trace)
    fresh = Schedule(tir_mlir.parse(src))
    trace.apply_to_schedule(fresh, remove_postproc=False)
    assert fresh.mod.script() == sch.mod.script()
    assert trace_to_mlir(fresh.trace) == text


def test_script_text_of_a_split():
    sch = Schedule(tir_mlir.parse(MATMUL_16))
    _, j, _ = sch.get_loops(sch.get_block("C"))
    sch.split(j, factors=[None, 4])
    assert trace_to_mlir(sch.trace).splitlines()[1:4] == [
        '  %0 = "tir_schedule.get_block"() {func_name = "main", name = "C"} : () -> '
        "!tir_schedule.handle",
        '  %1:3 = "tir_schedule.get_loops"(%0) {block = #tir_schedule.operand} : '
        "(!tir_schedule.handle) -> (!tir_schedule.handle, !tir_schedule.handle, !tir_schedule.handle)",
        '  %2:2 = "tir_schedule.split"(%1#1) {disable_predication = false, factors = '
        "[#tir_schedule.none, 4], loop = #tir_schedule.operand, names = #tir_schedule.none, "
        "preserve_unit_iters = true} : (!tir_schedule.handle) -> (!tir_schedule.handle, "
        "!tir_schedule.handle)",
    ]


@pytest.mark.parametrize(
    "text,match,line",
    [
        (
            'module {\n  %0 = "tir_schedule.get_block"() {name = "C"} : () -> !tir_schedule.handle\n'
            '  "tir_schedule.no_such"(%0) : (!tir_schedule.handle) -> ()\n}',
            "unregistered operation 'tir_schedule.no_such'",
            3,
        ),
        (
            'module {\n  %0 = "tir_schedule.get_block"() {name = "C", bogus = 1} : () -> '
            "!tir_schedule.handle\n}",
            "get_block: unknown argument 'bogus'",
            2,
        ),
        (
            'module {\n  %0 = "tir_schedule.get_block"() {name = "C"} : () -> !tir_schedule.handle\n'
            '  "tir_schedule.vectorize"(%0, %0) {loop = #tir_schedule.operand} : '
            "(!tir_schedule.handle, !tir_schedule.handle) -> ()\n}",
            "operand\\(s\\) left over",
            3,
        ),
        (
            'module {\n  %0 = "arith.constant"() {value = 1 : i64} : () -> i64\n}',
            "expected a tir_schedule op, got 'arith.constant'",
            2,
        ),
        (
            'module {\n  %0 = "tir_schedule.get_block"( : () -> !tir_schedule.handle\n}',
            "expected",
            2,
        ),
    ],
)
def test_bad_scripts_are_located_errors(text, match, line):
    with pytest.raises(TraceError, match=match) as e:
        trace_from_mlir(text, "s.mlir")
    assert (e.value.loc.file, e.value.loc.line) == ("s.mlir", line)


def test_cli_prints_and_applies_an_mlir_script(tmp_path):
    prog = tmp_path / "mm.tir"
    prog.write_text(MATMUL_16)
    script = tmp_path / "s.py"
    script.write_text(
        "def schedule(sch):\n    i, j, k = sch.get_loops(sch.get_block('C'))\n"
        "    sch.reorder(k, i)\n    sch.split(j, factors=[None, 4])\n"
    )
    runner = CliRunner()
    first = runner.invoke(
        main,
        [
            "schedule",
            str(prog),
            "--transform",
            str(script),
            "--print-trace",
            "--trace-format",
            "mlir",
        ],
    )
    assert first.exit_code == 0, first.output
    program_text, mlir_text = first.output.split("module {", 1)
    (tmp_path / "s.mlir").write_text("module {" + mlir_text)
    again = runner.invoke(main, ["schedule", str(prog), "--transform", str(tmp_path / "s.mlir")])
    assert again.exit_code == 0, again.output
    assert again.output == program_text
