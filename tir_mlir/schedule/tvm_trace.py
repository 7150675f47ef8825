"""Traces in TVM's JSON form, as TVM's JSONDatabase writes them:
`[[[kind, inputs, attrs, outputs], ...], [[instruction index, decision], ...]]`, e.g.
`["Split", ["l2", "None", 4], [1, 0], ["l5", "l6"]]`.

Inputs are handle names, "None", numbers, quoted strings or lists of those, or an index map
as the text of TVM's object graph (tvm_index_map.py); attributes are plain values (booleans as
0/1). A buffer chosen by (index, type number) is our ("read" | "write", index). Each supported instruction kind maps to a Schedule method, its
inputs and attributes to that method's parameters; a kind outside the table (or a
tir-mlir-only method) raises ValueError naming it."""

import json
from typing import TYPE_CHECKING, Dict, Tuple

from tir_mlir.schedule.tvm_index_map import lambda_to_tvm, tvm_to_lambda

if TYPE_CHECKING:
    from tir_mlir.schedule.trace import Trace

# kind -> (Schedule method, parameters read from inputs, parameters read from attrs).
# "*p": p takes all remaining inputs (a var-positional parameter or a list such as factors).
_KINDS: Dict[str, Tuple[str, Tuple[str, ...], Tuple[str, ...]]] = {
    "GetBlock": ("get_block", (), ("name", "func_name")),
    "GetLoops": ("get_loops", ("block",), ()),
    "GetChildBlocks": ("get_child_blocks", ("block_or_loop",), ()),
    "GetProducers": ("get_producers", ("block",), ()),
    "GetConsumers": ("get_consumers", ("block",), ()),
    "Split": ("split", ("loop", "*factors"), ("preserve_unit_iters", "disable_predication")),
    "Fuse": ("fuse", ("*loops",), ("preserve_unit_iters",)),
    "Reorder": ("reorder", ("*ordered_loops",), ()),
    "AddUnitLoop": ("add_unit_loop", ("block_or_loop",), ()),
    "Parallel": ("parallel", ("loop",), ()),
    "Vectorize": ("vectorize", ("loop",), ()),
    "Unroll": ("unroll", ("loop",), ()),
    "Bind": ("bind", ("loop",), ("thread_axis",)),
    "Annotate": ("annotate", ("block_or_loop", "ann_val"), ("ann_key",)),
    "Unannotate": ("unannotate", ("block_or_loop",), ("ann_key",)),
    "ComputeAt": ("compute_at", ("block", "loop"), ("preserve_unit_loops", "index")),
    "ReverseComputeAt": ("reverse_compute_at", ("block", "loop"), ("preserve_unit_loops", "index")),
    "ComputeInline": ("compute_inline", ("block",), ()),
    "ReverseComputeInline": ("reverse_compute_inline", ("block",), ()),
    "CacheRead": (
        "cache_read",
        ("block", "consumer_blocks"),
        ("read_buffer_index", "storage_scope"),
    ),
    "CacheWrite": (
        "cache_write",
        ("block", "consumer_blocks"),
        ("write_buffer_index", "storage_scope"),
    ),
    "SetScope": ("set_scope", ("block",), ("buffer_index", "storage_scope")),
    "StorageAlign": ("storage_align", ("block",), ("buffer_index", "axis", "factor", "offset")),
    "DecomposeReduction": ("decompose_reduction", ("block", "loop"), ()),
    "RFactor": ("rfactor", ("loop",), ("factor_axis",)),
    "Blockize": ("blockize", ("target",), ("preserve_unit_iters",)),
    "Tensorize": ("tensorize", ("block_or_loop",), ("tensor_intrin", "preserve_unit_iters")),
    "PadEinsum": ("pad_einsum", ("block",), ("padding",)),
    "RollingBuffer": ("rolling_buffer", ("block",), ("write_buffer_index",)),
    "UnsafeHideBufferAccess": (
        "unsafe_hide_buffer_access",
        ("block", "buf_type", "buf_index_array"),
        (),
    ),
    "LoopPartition": ("loop_partition", ("loop", "*factors"), ("preserve_unit_iters",)),
    "Merge": ("merge", ("*loops",), ()),
    "CacheIndex": ("cache_index", ("block_rv",), ("storage_scope", "cse_thresh")),
    "CacheInplace": ("cache_inplace", ("block_rv",), ("read_buffer_index", "storage_scope")),
    "ReIndex": ("reindex", ("block",), ("buffer_index", "buffer_index_type")),
    "ReindexCacheRead": (
        "reindex_cache_read",
        ("block", "index_map"),
        ("read_buffer_index", "storage_scope"),
    ),
    "ReindexCacheWrite": (
        "reindex_cache_write",
        ("block", "index_map"),
        ("write_buffer_index", "storage_scope"),
    ),
    "ReadAt": ("read_at", ("loop", "block"), ("read_buffer_index", "storage_scope")),
    "WriteAt": ("write_at", ("loop", "block"), ("write_buffer_index", "storage_scope")),
    "DecomposePadding": ("decompose_padding", ("block", "loop"), ()),
    "SetAxisSeparator": (
        "set_axis_separator",
        ("block",),
        ("buffer_index", "buffer_index_type", "axis_separators"),
    ),
    "TransformLayout": (
        "transform_layout",
        ("block", "index_map"),
        ("buffer_index", "buffer_index_type", "pad_value", "assume_injective_transform"),
    ),
    "TransformBlockLayout": ("transform_block_layout", ("block",), ("index_map",)),
    "ReorderBlockIterVar": ("reorder_block_iter_var", ("block", "new_order"), ()),
    "AnnotateBufferAccess": (
        "annotate_buffer_access",
        ("block", "buffer_index", "buf_type", "gen_new_ranges"),
        (),
    ),
    "UnsafeSetDType": ("unsafe_set_dtype", ("block",), ("buffer_index", "dtype")),
    "SampleCategorical": ("sample_categorical", (), ("candidates", "probs")),
    "SamplePerfectTile": ("sample_perfect_tile", ("loop",), ("n", "max_innermost_factor")),
    "SamplePartitionedTile": (
        "sample_partitioned_tile",
        ("loop",),
        ("n", "partition_pos", "innerpart_factor"),
    ),
    "SampleComputeLocation": ("sample_compute_location", ("block",), ()),
    "EnterPostproc": ("enter_postproc", (), ()),
}
_METHODS = {method: (kind, ins, attrs) for kind, (method, ins, attrs) in _KINDS.items()}
_BOOL_ATTRS = {
    "preserve_unit_iters",
    "disable_predication",
    "preserve_unit_loops",
    "assume_injective_transform",
}
# Index-map inputs: TVM's object-graph JSON text here, lambda text in our traces
# ("gen_new_ranges": the (begin, end) pairs flattened).
_INDEX_MAPS = {"index_map": False, "gen_new_ranges": True}
_BUF_TYPES = ("read", "write")  # TVM's BufferIndexType numbers


def to_tvm_json(trace) -> list:
    """TVM's JSON form of a tir_mlir Trace."""
    ours = trace.as_json()
    insts = []
    for inst in ours["insts"]:
        if inst["name"] not in _METHODS:
            raise ValueError(f"instruction {inst['name']!r} has no TVM counterpart")
        kind, ins, attrs = _METHODS[inst["name"]]
        args = _tvm_args(inst["name"], dict(inst["args"]), attrs)
        inputs = []
        for p in ins:
            val = args.get(p.lstrip("*"))
            if p in _INDEX_MAPS:
                inputs.append(val)
            elif p.startswith("*"):  # (always recorded: the list of handles)
                inputs += [_input(v) for v in args[p[1:]]]
            elif p == "consumer_blocks":
                inputs.append([_input(v) for v in (val or [])])
            else:
                inputs.append(_input(val))
        attr_vals = [int(args[a]) if a in _BOOL_ATTRS else args.get(a) for a in attrs]
        out = inst["outputs"]
        insts.append(
            [
                kind,
                inputs,
                attr_vals,
                [] if out is None else (list(out) if isinstance(out, list) else [out]),
            ]
        )
    decisions = [[int(k), v] for k, v in ours["decisions"].items()]
    return [insts, decisions]


def _tvm_args(method: str, args: dict, attrs) -> dict:
    """Our arguments in TVM's terms: a buffer as (index, type number), index maps as TVM's
    JSON, annotate_buffer_access's buf_type as a number (unsafe_hide_buffer_access keeps the
    string)."""
    if "buffer_index_type" in attrs:
        buf = args.pop("buffer", None)
        if not (isinstance(buf, (list, tuple)) and len(buf) == 2 and buf[0] in _BUF_TYPES):
            raise ValueError(
                f"{method}: a buffer given as {buf!r} has no TVM JSON form "
                f'(TVM records ("read" | "write", index))'
            )
        args["buffer_index_type"], args["buffer_index"] = _BUF_TYPES.index(buf[0]), buf[1]
    for p, pairs in _INDEX_MAPS.items():
        if p in args:
            args[p] = lambda_to_tvm(args[p], pairs)
    if method == "annotate_buffer_access":
        args["buf_type"] = _BUF_TYPES.index(args["buf_type"])
    return args


def _our_args(args: dict) -> dict:
    """The reverse of _tvm_args."""
    if "buffer_index_type" in args:
        args["buffer"] = [_BUF_TYPES[args.pop("buffer_index_type")], args.pop("buffer_index")]
    for p, pairs in _INDEX_MAPS.items():
        if p in args:
            args[p] = tvm_to_lambda(args[p], pairs)
    if isinstance(args.get("buf_type"), int):
        args["buf_type"] = _BUF_TYPES[args["buf_type"]]
    return args


def _input(v):
    if isinstance(v, dict) and "rv" in v:
        return v["rv"]
    if v is None:
        return "None"
    if isinstance(v, str):
        return f'"{v}"'
    if isinstance(v, list):
        return [_input(x) for x in v]
    return v


def from_tvm_json(obj) -> "Trace":
    """A tir_mlir Trace from TVM's JSON form (a list, or its text)."""
    from tir_mlir.schedule.trace import Trace, _signature

    if isinstance(obj, str):
        obj = json.loads(obj)
    insts_json, decisions = obj
    insts = []
    for kind, inputs, attr_vals, outputs in insts_json:
        if kind not in _KINDS:
            raise ValueError(f"TVM instruction {kind!r} has no tir-mlir counterpart")
        method, ins, attrs = _KINDS[kind]
        args = {}
        for k, p in enumerate(ins):
            if p.startswith("*"):
                args[p[1:]] = [_value(v) for v in inputs[k:]]
                break
            raw = p in _INDEX_MAPS
            args[p] = None if k >= len(inputs) else inputs[k] if raw else _value(inputs[k])
        for a, v in zip(attrs, attr_vals):
            args[a] = bool(v) if a in _BOOL_ATTRS else v
        args = _our_args(args)
        if args.get("consumer_blocks") == []:
            args["consumer_blocks"] = None
        try:
            params = _signature(method).parameters
        except AttributeError:
            raise ValueError(
                f"TVM instruction {kind!r} needs Schedule.{method}, which this tir-mlir lacks"
            ) from None
        args = {k: args[k] for k in params if k in args}  # in the method's order
        returns_list = method in (
            "get_loops",
            "get_child_blocks",
            "get_producers",
            "get_consumers",
            "split",
            "sample_perfect_tile",
            "sample_partitioned_tile",
            "loop_partition",
            "cache_index",
            "cache_inplace",
        )
        out = list(outputs) if returns_list else (outputs[0] if outputs else None)
        insts.append({"name": method, "args": args, "outputs": out})
    return Trace.from_json({"insts": insts, "decisions": {str(i): d for i, d in decisions}})


def _value(v):
    """A TVM input as our trace JSON value: handle names become {"rv": name}."""
    if isinstance(v, list):
        return [_value(x) for x in v]
    if isinstance(v, str):
        if v == "None":
            return None
        if len(v) >= 2 and v[0] == v[-1] == '"':  # TVM quotes a string, escaping nothing
            return v[1:-1]
        return {"rv": v}
    return v
