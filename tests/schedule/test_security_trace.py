"""A trace is data: replaying it (or an index map / predicate given as text) never executes
code and never reaches anything but the Schedule's primitives."""

import json

import pytest

from schedule_check import parse
from shared_programs import MATMUL_16 as MM
from tir_mlir import Schedule, ScheduleError, Trace
from tir_mlir.errors import TraceError
from tir_mlir.schedule.safe_lambda import parse_lambda
from tir_mlir.schedule.trace import primitive_names

PAYLOADS = [
    "lambda i, j: ().__class__.__base__.__subclasses__()",
    "lambda i, j: __import__('os').system('touch {marker}')",
    "lambda i, j: [c for c in ().__class__.__base__.__subclasses__()]",
    "lambda i, j: (lambda: 0)()",
    "lambda i, j: (i, j) if open('{marker}', 'w') else (j, i)",
    "lambda i, j: (i.__class__, j)",
    "lambda i, j: exec('import os')",
    "lambda i, j: (j, i)\nimport os",
    "lambda i, j: (j, i); import os",
    "(lambda i, j: (j, i))",
    'lambda i, j: ("abc", j)',
    "lambda i, j: (1.5, j)",
    "lambda i, j: (True, j)",
    "lambda i, j: (i[0], j)",
    "lambda i, j: (k, j)",
    "lambda *a: a",
    "lambda i, i: (i, i)",
    "lambda i, j: (j, i" + ")" * 3,
    "lambda i, j: " + "(" * 5000 + "i" + ")" * 5000,
]


def _layout_trace(index_map: str) -> dict:
    return {
        "insts": [
            {"name": "get_block", "args": {"name": "C", "func_name": "main"}, "outputs": "b0"},
            {
                "name": "transform_layout",
                "args": {
                    "block": {"rv": "b0"},
                    "buffer": ["read", 0],
                    "index_map": index_map,
                    "pad_value": None,
                    "assume_injective_transform": False,
                },
                "outputs": None,
            },
        ],
        "decisions": {},
    }


@pytest.mark.parametrize("payload", PAYLOADS)
def test_lambda_text_never_executes(payload, tmp_path):
    marker = tmp_path / "pwned"
    text = payload.format(marker=marker) if "{marker}" in payload else payload
    mod = parse(MM)
    sch = Schedule(mod)
    with pytest.raises(ScheduleError):  # refused on load (TraceError) or on replay
        Trace.from_json(json.dumps(_layout_trace(text))).apply_to_schedule(sch)
    assert not marker.exists()
    assert sch.mod.script() == mod.script()
    with pytest.raises(ScheduleError):  # the same text passed to the primitive directly
        Schedule(mod).transform_layout(Schedule(mod).get_block("C"), ("read", 0), text)
    assert not marker.exists()


def test_lambda_text_that_is_an_index_map_works():
    """The parsed text gives the same layout as the Python lambda it was recorded from."""
    by_text, by_fn = Schedule(parse(MM)), Schedule(parse(MM))
    by_text.transform_layout(
        by_text.get_block("C"), ("write", 0), "lambda i, j: (i // 4, j, i % 4)"
    )
    by_fn.transform_layout(by_fn.get_block("C"), ("write", 0), lambda i, j: (i // 4, j, i % 4))
    assert by_text.mod.script() == by_fn.mod.script()
    assert str(by_text.trace) == str(by_fn.trace)
    replay = Schedule(parse(MM))
    Trace.from_json(json.dumps(by_text.trace.as_json())).apply_to_schedule(replay)
    assert replay.mod.script() == by_fn.mod.script()


def test_safe_lambda_evaluates_only_arithmetic():
    f = parse_lambda("lambda a, b: (a * 3 + b // 2, -a % 5, (a < b) & (a == 1))")
    assert f(4, 7) == (15, 1, False)
    assert f.params == ["a", "b"]


@pytest.mark.parametrize(
    "name",
    [
        "__init__",
        "_resolve",
        "_handle",
        "copy",
        "mod",
        "trace",
        "__class__",
        "_verify",
        "__reduce__",
        "no_such",
        7,
        None,
    ],
)
def test_trace_accepts_only_primitive_names(name):
    bad = {"insts": [{"name": name, "args": {}, "outputs": None}]}
    with pytest.raises(TraceError, match="instruction 0: unknown schedule primitive"):
        Trace.from_json(json.dumps(bad))


def test_replay_of_a_constructed_trace_checks_names_too():
    from tir_mlir.schedule.trace import Instruction

    sch = Schedule(parse(MM))
    with pytest.raises(TraceError, match="unknown schedule primitive '_resolve'"):
        Trace([Instruction("_resolve", {})]).apply_to_schedule(sch)


def test_primitive_names_come_from_the_decorator():
    names = primitive_names()
    assert {"split", "fuse", "get_block", "transform_layout", "tile", "compute_at"} <= names
    assert not any(n.startswith("_") for n in names)
    assert "copy" not in names and "get" not in names


@pytest.mark.parametrize(
    "obj, match",
    [
        ("not json", "not valid JSON"),
        ("[1, 2]", "a trace is a JSON object"),
        ('{"insts": 3}', "a trace is a JSON object"),
        ('{"insts": [3]}', "an instruction is"),
        ('{"insts": [{"name": "split", "args": []}]}', "an instruction is"),
        ('{"insts": [{"name": "split", "args": {"bogus": 1}}]}', "unknown argument 'bogus'"),
        ('{"insts": [{"name": "split", "args": {"self": 1}}]}', "unknown argument 'self'"),
        (
            '{"insts": [{"name": "get_block", "args": {"name": "C"}, "outputs": "__init__"}]}',
            "bad handle name",
        ),
        ('{"insts": [{"name": "get_loops", "args": {"block": {"rv": 5}}}]}', "bad handle name"),
        ('{"insts": [{"name": "get_loops", "args": {"block": {"x": 5}}}]}', "bad argument"),
        ('{"insts": [], "decisions": {"a": 1}}', "decisions"),
        (
            '{"insts": [{"name": "get_loops", "args": {"block": '
            + "[" * 100000
            + "]" * 100000
            + "}}]}",
            "nested too deeply|not valid JSON",
        ),
    ],
)
def test_malformed_trace_json(obj, match):
    with pytest.raises(TraceError, match=match):
        Trace.from_json(obj)


def test_trace_with_undefined_handle_or_bad_types_leaves_module_unchanged():
    mod = parse(MM)
    for insts in (
        [{"name": "get_loops", "args": {"block": {"rv": "b9"}}, "outputs": ["l1"]}],
        [
            {
                "name": "get_block",
                "args": {"name": ["C"], "func_name": {"dict": {}}},
                "outputs": "b0",
            }
        ],
        [{"name": "fuse", "args": {"loops": 3, "preserve_unit_iters": True}, "outputs": "l0"}],
    ):
        sch = Schedule(mod)
        with pytest.raises(ScheduleError):
            Trace.from_json({"insts": insts}).apply_to_schedule(sch)
        assert sch.mod.script() == mod.script()
