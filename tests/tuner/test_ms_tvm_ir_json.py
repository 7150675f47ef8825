"""Programs as TVM 0.21's serialised IRModule (tvm_ir_json writes it, tvm_ir_read reads it
back), the form JSONDatabase's workloads file holds so that TVM reads tir-mlir's tuning logs
as they are. Without TVM: our graph equals the one TVM 0.21 wrote for the same program
(recorded in tests/data/tvm_ir_json), TVM's graph reads back as the program, JSONDatabase
round-trips. With TVM: TVM loads every graph structurally equal to its parse of our text, and
TVM's JSONDatabase reads a log tir-mlir tuned, replays its records and compiles a program
that computes the right numbers."""

import base64
import json
import struct
from pathlib import Path

import numpy as np
import pytest

import tir_mlir
import tir_mlir.meta_schedule as ms
from tir_mlir.printer.equality import structural_hash
from tir_mlir.meta_schedule.database import JSONDatabase, TuningRecord
from tir_mlir.meta_schedule.database.tvm_ir_json import module_to_tvm_json, tvm_payload
from tir_mlir.meta_schedule.database.tvm_ir_read import (
    graph_from_payload,
    tvm_json_to_script,
)
from workloads import matmul

DATA = Path(__file__).parent.parent / "data"
RECORDED = sorted(p.stem for p in (DATA / "tvm_ir_json").glob("*.json"))
PROGRAMS = [
    "matmul",
    "mm_relu",
    "conv2d_pad",
    "softmax",
    "layernorm",
    "int8_matmul",
    "transpose_add",
    "maxpool2d",
    "batch_matmul",
    "depthwise_conv2d",
    "conv2d_nhwc",
    "fp16_chain",
    "where_ite",
]
# symbolic programs (tests/data/symbolic): sizes `n = T.int32()`, handles bound by
# T.match_buffer, scalar parameters, int64 sizes
SYMBOLIC = [
    "add",
    "axpy_float",
    "batch_matmul",
    "conv2d_hw",
    "extent_div",
    "extent_min",
    "extent_product",
    "int64_scalar",
    "int_scalar_index",
    "layernorm",
    "matmul_n",
    "matmul_nmk",
    "pad_if_then_else",
    "product_fused",
    "reduce_max",
    "relu_two_stage",
    "reverse",
    "row_sum",
    "rowmax_nested",
    "scalar_extent",
    "scalar_f64_i64",
    "scale_add",
    "scale_offset",
    "softmax",
    "transpose",
    "window_sum",
    "axpy_chunk",
    "chunked_where",
    "triangular",
]
# fields that hold a value, not a node; TVM's struct_info_ (derived by its PrimFunc
# constructor) is left null by the writer
_VALUES = {
    "dtype",
    "kind",
    "iter_type",
    "buffer_type",
    "data_alignment",
    "offset_factor",
    "v_int64",
    "ndim",
    "purity",
}
_IMMS = ("ir.IntImm", "ir.FloatImm")  # whose "value" is a number


def _program(name, folder="programs"):
    """The program as tir-mlir prints and parses it (the text a workload holds)."""
    return tir_mlir.parse(tir_mlir.load(DATA / folder / f"{name}.tir").script())


def _tree(nodes, ref):
    node = nodes[ref]
    out = [node["type_key"], node.get("repr_str"), tuple(node.get("keys", ()))]
    for key, val in sorted(node.get("attrs", {}).items()):
        if key == "struct_info_":
            continue
        literal = key in _VALUES or val == "null" or (key == "value" and node["type_key"] in _IMMS)
        out.append((key, val if literal else _tree(nodes, int(val))))
    out.append(tuple(_tree(nodes, i) for i in node.get("data", ())))
    return tuple(out)


def _canonical(graph_text):
    graph = json.loads(graph_text)
    return _tree(graph["nodes"], graph["root"])


def test_recorded_graphs_exist():
    assert len(RECORDED) >= 5


@pytest.mark.parametrize("name", RECORDED)
def test_our_graph_is_tvms(name):
    theirs = (DATA / "tvm_ir_json" / f"{name}.json").read_text()
    assert _canonical(module_to_tvm_json(_program(name))) == _canonical(theirs)


@pytest.mark.parametrize("name", RECORDED)
def test_tvms_graph_reads_back_as_the_program(name):
    mod = _program(name)
    back = tir_mlir.parse(tvm_json_to_script((DATA / "tvm_ir_json" / f"{name}.json").read_text()))
    assert structural_hash(back) == structural_hash(mod)


@pytest.mark.parametrize("name", PROGRAMS)
def test_round_trip(name):
    mod = _program(name)
    back = tir_mlir.parse(tvm_json_to_script(module_to_tvm_json(mod)))
    assert structural_hash(back) == structural_hash(mod)


ANNOTATED_LOOP = """
@T.prim_func
def main(A: T.Buffer((16,), "float32")):
    for i in T.serial(16, annotations={"pragma_x": 1}):
        with T.block("A"):
            vi = T.axis.remap("S", [i])
            A[vi] = A[vi] + T.float32(1)
"""


@pytest.mark.parametrize("name", SYMBOLIC)
def test_symbolic_round_trip(name):
    mod = _program(name, "symbolic")
    back = tir_mlir.parse(tvm_json_to_script(module_to_tvm_json(mod)))
    assert back.script() == mod.script()


@pytest.mark.parametrize("name", ["assume_div4", "guarded_if"])
def test_symbolic_constructs_the_writer_refuses(name):
    with pytest.raises(ValueError, match="is not supported in a TVM workload"):
        module_to_tvm_json(_program(name, "symbolic"))


def test_unsupported_constructs_are_named():
    with pytest.raises(ValueError, match="loop .* is not supported"):
        module_to_tvm_json(tir_mlir.parse(ANNOTATED_LOOP))
    with pytest.raises(ValueError, match="statement tir.Evaluate is not supported"):
        tvm_json_to_script(
            json.dumps(
                {
                    "root": 1,
                    "nodes": [
                        {"type_key": ""},
                        {"type_key": "ir.IRModule", "attrs": {"functions": "2"}},
                        {"type_key": "ffi.Map", "data": [3, 5]},
                        {"type_key": "ir.GlobalVar", "attrs": {"name_hint": "4"}},
                        {"type_key": "ffi.String", "repr_str": "main"},
                        {
                            "type_key": "tir.PrimFunc",
                            "attrs": {"params": "6", "buffer_map": "7", "attrs": "8", "body": "10"},
                        },
                        {"type_key": "ffi.Array"},
                        {"type_key": "ffi.Map"},
                        {"type_key": "ir.DictAttrs", "attrs": {"__dict__": "9"}},
                        {"type_key": "ffi.Map"},
                        {"type_key": "tir.Evaluate", "attrs": {}},
                    ],
                }
            )
        )


def _graph_of(name="matmul"):
    return json.loads((DATA / "tvm_ir_json" / f"{name}.json").read_text())


def _first(graph, type_key):
    return next(n for n in graph["nodes"] if n["type_key"] == type_key)


def _extent(graph):
    """The IntImm node of the first loop's extent."""
    return graph["nodes"][int(_first(graph, "tir.For")["attrs"]["extent"])]


def test_hostile_graphs_are_refused():
    """A graph is data from a file: what it names is checked, and it cannot make the reader
    loop or print without bound."""
    g = _graph_of()
    _first(g, "ir.GlobalVar")["attrs"]["name_hint"] = str(len(g["nodes"]))
    g["nodes"].append({"type_key": "ffi.String", "repr_str": "f(): pass\nimport os\ndef g"})
    with pytest.raises(ValueError, match="is not a name"):
        tvm_json_to_script(json.dumps(g))
    g = _graph_of()
    _extent(g)["attrs"]["value"] = "1) + T.evil("
    with pytest.raises(ValueError):
        tvm_json_to_script(json.dumps(g))
    g = _graph_of()  # an Add whose operand is itself
    add = _first(g, "tir.Add")
    add["attrs"]["a"] = str(g["nodes"].index(add))
    with pytest.raises(ValueError, match="nested too deeply"):
        tvm_json_to_script(json.dumps(g))
    g = _graph_of()  # 60 levels of x + x: 2**60 terms if expanded
    add = _first(g, "tir.Add")
    prev = add["attrs"]["b"]
    for _ in range(60):
        g["nodes"].append(
            {
                "type_key": "tir.Add",
                "attrs": {"a": prev, "b": prev, "dtype": "float32", "span": "null"},
            }
        )
        prev = str(len(g["nodes"]) - 1)
    add["attrs"]["b"] = prev
    with pytest.raises(ValueError, match="too large"):
        tvm_json_to_script(json.dumps(g))
    with pytest.raises(ValueError, match="not a TVM IRModule graph"):
        tvm_json_to_script(json.dumps({"root": 5, "nodes": []}))


def test_a_null_required_field_is_named():
    g = _graph_of()
    _first(g, "tir.For")["attrs"]["body"] = "null"
    with pytest.raises(ValueError, match=r"tir\.For\.body is null"):
        tvm_json_to_script(json.dumps(g))


def test_json_database_keeps_an_unreadable_workload_by_its_hash(tmp_path):
    g = _graph_of()
    _extent(g)["attrs"]["dtype"] = "int32; import os"
    paths = tmp_path / "w.json", tmp_path / "r.json"
    paths[0].write_text(json.dumps(["123", tvm_payload(json.dumps(g))]) + "\n")
    db = JSONDatabase(str(paths[0]), str(paths[1]))
    assert len(db) == 0 and not db.has_workload(_program("matmul"))


def test_json_database_writes_tvm_graphs_and_reads_them(tmp_path):
    mod = _program("softmax")
    paths = str(tmp_path / "w.json"), str(tmp_path / "r.json")
    db = JSONDatabase(*paths)
    sch = tir_mlir.Schedule(mod)
    sch.parallel(sch.get_loops(sch.get_block("exp"))[0])
    db.commit_tuning_record(
        TuningRecord(sch.trace, db.commit_workload(mod), [1e-3], "llvm -num-cores=2")
    )
    (line,) = Path(paths[0]).read_text().splitlines()
    shash, payload = json.loads(line)
    data = base64.b64decode(payload)  # TVM's form: length-prefixed graph text
    assert struct.unpack("<Q", data[:8])[0] == len(data) - 8
    graph = json.loads(graph_from_payload(payload))
    assert graph["nodes"][graph["root"]]["type_key"] == "ir.IRModule"
    again = JSONDatabase(*paths)
    (record,) = again.get_all_tuning_records()
    assert record.workload.shash == shash
    assert record.workload.mod.script() == mod.script()
    assert again.query_ir_module(mod, "llvm -num-cores=2").script() == sch.mod.script()


def test_json_database_keeps_what_the_writer_does_not_cover(tmp_path):
    """A program outside the writer's constructs is stored as TVMScript (tir-mlir reads it)."""
    mod = tir_mlir.parse(ANNOTATED_LOOP)
    paths = str(tmp_path / "w.json"), str(tmp_path / "r.json")
    JSONDatabase(*paths).commit_workload(mod)
    payload = json.loads(Path(paths[0]).read_text())[1]
    assert base64.b64decode(payload).startswith(b"# from tvm.script")
    assert JSONDatabase(*paths).has_workload(mod)


# --- with TVM ---------------------------------------------------------------------------------

MAIN = matmul(64)


@pytest.mark.tvm
@pytest.mark.parametrize(
    "folder,name", [("programs", n) for n in PROGRAMS] + [("symbolic", n) for n in SYMBOLIC]
)
def test_tvm_loads_our_graph(folder, name):
    import tvm

    mod = _program(name, folder)
    theirs = tvm.script.from_source(mod.script())
    if not isinstance(theirs, tvm.IRModule):
        theirs = tvm.IRModule({next(iter(mod.functions)): theirs})
    loaded = tvm.ir.load_json(module_to_tvm_json(mod))
    assert tvm.ir.structural_equal(loaded, theirs)
    assert loaded.script() == theirs.script()


@pytest.mark.tvm
def test_tvm_reads_a_tuned_log_as_it_is(tmp_path):
    import tvm
    from tvm import meta_schedule as tms

    mod = tir_mlir.parse(MAIN)
    target = "llvm -num-cores=2"
    db = ms.tune_tir(
        mod,
        target,
        str(tmp_path),
        max_trials_global=4,
        num_trials_per_iter=4,
        seed=0,
        cost_model="random",
        strategy="replay-trace",
    )
    ours = db.get_all_tuning_records()
    tdb = tms.database.JSONDatabase(
        path_workload=str(tmp_path / "database_workload.json"),
        path_tuning_record=str(tmp_path / "database_tuning_record.json"),
    )
    assert len(tdb) == len(ours) == 4
    tmod = tvm.script.from_source(mod.script())
    if not isinstance(tmod, tvm.IRModule):
        tmod = tvm.IRModule({"main": tmod})
    measured = set()
    for record in ours:
        sch = tir_mlir.Schedule(mod)
        record.trace.apply_to_schedule(sch)
        measured.add(sch.mod.script())
    replayed = set()  # TVM lists the records in its own order
    for theirs in tdb.get_all_tuning_records():
        assert tvm.ir.structural_equal(theirs.workload.mod, tmod)
        tsch = tvm.tir.Schedule(theirs.workload.mod)
        theirs.trace.apply_to_schedule(tsch, False)
        replayed.add(tsch.mod["main"].script())
    assert replayed == measured and len(measured) == 4
    # TVM's compile_tir finds the best record (stored under the canonical target) and builds;
    # its queries skip the unscheduled program's record (no instructions: docs/meta_schedule.md),
    # which ours returns when it measured fastest (a loaded machine's timing decides that)
    best = db.query_tuning_record(mod, target, "main")
    tsch = tms.tir_integration.compile_tir(tdb, tmod, tvm.target.Target(best.target))
    scheduled = min((r for r in ours if len(r.trace)), key=lambda r: np.mean(r.run_secs))
    sch = tir_mlir.Schedule(mod)
    scheduled.trace.apply_to_schedule(sch)
    assert tsch.mod["main"].script() == sch.mod.script()
    if len(best.trace):
        assert sch.mod.script() == ms.tir_integration.compile_tir(db, mod, target).mod.script()
    lib = tvm.compile(tsch.mod, target="llvm")
    a, b = np.random.rand(64, 64).astype("float32"), np.random.rand(64, 64).astype("float32")
    c = tvm.nd.array(np.zeros((64, 64), "float32"))
    lib["main"](tvm.nd.array(a), tvm.nd.array(b), c)
    np.testing.assert_allclose(c.numpy(), a @ b, rtol=1e-4, atol=1e-4)
