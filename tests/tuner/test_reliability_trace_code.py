"""A tuning record's text never becomes code: every lambda a printed trace holds (index_map,
pad_value, gen_new_ranges) is parsed and printed again from its parse, or refused; the script
`tir-mlir tune` writes escapes the record's other strings."""

import json
import subprocess
import sys

import pytest

from schedule_check import parse
from shared_programs import MATMUL_16 as MM
from tir_mlir import Schedule, ScheduleError, Trace
from tir_mlir.errors import TraceError
from tir_mlir.meta_schedule.database.record import TuningRecord
from tir_mlir.schedule.tvm_trace import to_tvm_json
from tir_mlir.meta_schedule.database.workload import Workload
from tir_mlir.meta_schedule.tune_report import schedule_script
from tir_mlir.schedule.trace import Instruction

PAYLOAD = "lambda i, j: 0, **{{'x': __import__('os').system('touch {marker}')}}"


def _layout(pad_value, index_map="lambda i, j: (j, i)") -> dict:
    """A transform_layout record over a bijection: the pad value is never used."""
    return {
        "insts": [
            {"name": "get_block", "args": {"name": "C", "func_name": "main"}, "outputs": "b0"},
            {
                "name": "transform_layout",
                "args": {
                    "block": {"rv": "b0"},
                    "buffer": ["write", 0],
                    "index_map": index_map,
                    "pad_value": pad_value,
                    "assume_injective_transform": False,
                },
                "outputs": None,
            },
        ]
    }


def test_pad_value_payload_of_a_bijection_is_refused_on_load(tmp_path):
    marker = tmp_path / "pwned"
    with pytest.raises(TraceError, match="instruction 1: transform_layout: pad_value"):
        Trace.from_json(_layout(PAYLOAD.format(marker=marker)))
    assert not marker.exists()


@pytest.mark.parametrize("key", ["pad_value", "index_map"])
def test_a_constructed_trace_is_refused_on_replay_and_on_print(key, tmp_path):
    marker = tmp_path / "pwned"
    args = _layout(None)["insts"][1]["args"]
    args = {**args, "block": None, key: PAYLOAD.format(marker=marker)}
    inst = Instruction("transform_layout", args)
    with pytest.raises(TraceError, match=f"{key} is not a lambda a trace can hold"):
        str(Trace([inst]))
    sch = Schedule(parse(MM))
    with pytest.raises(ScheduleError):
        sch.transform_layout(
            sch.get_block("C"), ("write", 0), args["index_map"], pad_value=args["pad_value"]
        )
    assert not marker.exists()


def test_printed_trace_is_reprinted_from_the_parse():
    """A harmless but oddly written lambda is printed in the canonical form, not verbatim."""
    sch = Schedule(parse(MM))
    Trace.from_json(_layout("lambda  a ,b :  (  a+(b) ,)")).apply_to_schedule(sch)
    assert "pad_value=lambda a, b: (a + b,)," in str(sch.trace)


def test_constant_pad_value_text_replays_as_its_constant():
    sch = Schedule(parse(MM))
    sch.transform_layout(sch.get_block("C"), ("write", 0), lambda i, j: (j, i), pad_value=7.0)
    text = str(sch.trace)
    assert "pad_value=lambda indices_0, indices_1: (T.float32(7.0),)" in text
    replay = Schedule(parse(MM))
    Trace.from_json(sch.trace.as_json()).apply_to_schedule(replay)
    assert str(replay.trace) == text


def test_tvm_json_payload_is_refused(tmp_path):
    marker = tmp_path / "pwned"
    sch = Schedule(parse(MM))
    sch.transform_layout(sch.get_block("C"), ("write", 0), lambda i, j: (j, i), pad_value=7.0)
    tvm = to_tvm_json(sch.trace)
    tvm[0][1][2][2] = PAYLOAD.format(marker=marker)  # TransformLayout's pad_value
    with pytest.raises(TraceError, match="pad_value"):
        Trace.from_json(json.dumps(tvm))
    assert not marker.exists()


def test_best_schedule_script_escapes_the_record_target(tmp_path):
    marker = tmp_path / "pwned"
    sch = Schedule(parse(MM))
    sch.get_block("C")
    rec = TuningRecord(sch.trace, Workload(shash="0"), [1e-3], None)
    rec.target = f"llvm\nopen({str(marker)!r}, 'w')\n#"
    script = tmp_path / "best_schedule.py"
    script.write_text(schedule_script(rec, "mm.py", "main", None) + "schedule(None)\n")
    p = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, check=False)
    assert "NoneType" in p.stderr  # the script ran as far as the trace's first step
    assert not marker.exists()
