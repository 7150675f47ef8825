"""Invariants of a tir-dialect module that MLIR's own verifier does not know, checked in Python
before any rewrite or pass touches the IR (the LLVM in the wheels aborts on broken invariants
instead of reporting them).

`check(module, filename)` raises TIRParseError at the offending op for:
  * the shape of a program: only `func.func`s at top level, buffers are memrefs of a
    TensorIR dtype with no zero-sized (or absurdly large) static dimension; parameters are
    buffers or scalars (index for integer vars, a TensorIR dtype otherwise);
  * symbolic shapes (docs/symbolic.md): a dynamic buffer parameter has a `tir.match_shape`
    giving its sizes, which (like `tir.assume` operands, loop bound and block symbol
    operands) are symbols: index values defined at the top level of the function;
  * the names the printer writes as Python names (functions, buffers, handle parameters, loop
    and iterator variables, `tir.call` callees) are identifiers, and every `tir.dtype` names a dtype, so that the
    printed program parses again;
  * a `tir.block` whose attributes disagree with its body (iterator count, binding arity,
    domains, iterator kinds);
  * TensorIR well-formedness: a block with iterators does not read a loop variable from
    outside it directly (instead of through a block iterator). TVM rejects that as "not
    well-formed"; it would let a primitive erase a loop whose variable is still used.
"""

import keyword
from typing import Optional

from mlir import ir

from tir_mlir.dialect import attrs as tir_attrs
from tir_mlir.dialect.buffers import arg_attrs
from tir_mlir.dialect.ops import LOOP_KINDS, Block, Loop, integer_set
from tir_mlir.dtypes import is_dtype
from tir_mlir.errors import SourceLoc, TIRParseError
from tir_mlir.ir.ir_walk import walk

MAX_BUFFER_BYTES = 1 << 40  # 1 TiB: beyond this an allocation is a typo, not a program
_ELEMENT_TYPES = ("i1", "i8", "i16", "i32", "i64", "f16", "bf16", "f32", "f64")
MATCH_SHAPE = "tir.match_shape"
ASSUME = "tir.assume"


def check(module: ir.Module, filename: str = "<string>") -> None:
    for top in module.body.operations:
        top = top.operation
        if top.name != "func.func":
            _fail(
                top,
                filename,
                f"expected only functions (func.func) at the top level, got '{top.name}'",
            )
        _check_func(top, filename)


def _fail(op, filename, message, notes=()):
    """Raise at `op`; `notes`: (message, op) pairs for related locations."""
    raise TIRParseError(
        message,
        _loc(op, filename) or SourceLoc(filename, 1, 1),
        [(m, _loc(o, filename)) for m, o in notes],
    )


def _loc(op, filename):
    loc = SourceLoc.of(op.location)
    if loc is not None and loc.file == "-":  # MLIR's name for text parsed from a string
        loc = SourceLoc(filename, loc.line, loc.col)
    return loc


def is_identifier(name: str) -> bool:
    return name.isidentifier() and not keyword.iskeyword(name)


def _check_name(attr, op, filename, what):
    try:
        name = ir.StringAttr(attr).value
    except ValueError:
        _fail(op, filename, f"{what} must be a string, got {attr}")
    if not is_identifier(name):
        _fail(op, filename, f"{what} {name!r} is not a Python identifier")


def _check_dtype(attrs, op, filename, what):
    """`tir.dtype`, and the typed attributes of buffers and index values."""
    _check_typed(attrs, op, filename, what, TYPED_BUFFER_ATTRS)
    if "tir.dtype" in attrs:
        attr = attrs["tir.dtype"]
        if not isinstance(attr, ir.StringAttr) or not is_dtype(ir.StringAttr(attr).value):
            _fail(op, filename, f"{what}: tir.dtype {str(attr)[:60]} is not a dtype")
    if "tir.index_dtype" in attrs:
        value = attrs["tir.index_dtype"]
        items = list(ir.ArrayAttr(value)) if isinstance(value, ir.ArrayAttr) else [value]
        if any(tir_attrs.mnemonic(x) != "index_dtype" for x in items):
            _fail(
                op,
                filename,
                f"{what}: tir.index_dtype must be a #tir.index_dtype<...> (or "
                f"an array of them), got {str(value)[:60]}",
            )


# `tir.*` attributes whose value must be the dialect's attribute (dialect/attrs.py)
TYPED_BUFFER_ATTRS = (
    ("tir.scope", "scope"),
    ("tir.axis_separators", "axis_separators"),
    ("tir.offset_factor", "offset_factor"),
    ("tir.align", "align"),
)
TYPED_LOOP_ATTRS = (
    ("tir.kind", "for_kind"),
    ("tir.thread", "thread"),
    ("tir.annotations", "annotations"),
)
TYPED_BLOCK_ATTRS = tuple(
    (f"tir.{what}_{kind}s", mnemonic)
    for kind in ("read", "write")
    for what, mnemonic in (("explicit", "regions"), ("hidden", "buffers"))
) + (
    ("tir.reads_order", "buffers"),
    ("tir.writes_order", "buffers"),
    ("tir.accumulator_reads", "positions"),
)


def _check_typed(attrs, op, filename, what, keys):
    for key, mnemonic in keys:
        if key in attrs and tir_attrs.mnemonic(attrs[key]) != mnemonic:
            _fail(
                op,
                filename,
                f"{what}: {key} must be a #tir.{mnemonic}<...>, got {str(attrs[key])[:60]}",
            )


def _check_func(f, filename):
    if not f.regions[0].blocks:
        _fail(f, filename, "a prim_func needs a body")
    _check_name(f.attributes["sym_name"], f, filename, "function name")
    args = list(f.regions[0].blocks[0].arguments)
    for k, arg in enumerate(args):
        if isinstance(arg.type, ir.MemRefType):
            _check_buffer_type(arg.type, f, filename, f"parameter {k}")
        elif not isinstance(arg.type, ir.IndexType) and str(arg.type) not in _ELEMENT_TYPES:
            _fail(
                f,
                filename,
                f"parameter {k}: a parameter must be a buffer (memref), an "
                f"integer var (index) or a scalar of a TensorIR dtype, got "
                f"{arg.type}",
            )
    _check_symbols(f, args, filename)
    _check_func_attrs(f, filename)
    if "arg_attrs" in f.attributes:
        for k, attrs in enumerate(ir.ArrayAttr(f.attributes["arg_attrs"])):
            attrs = ir.DictAttr(attrs)
            if "tir.name" in attrs:
                _check_name(attrs["tir.name"], f, filename, f"parameter {k}: name")
            if "tir.param" in attrs:
                _check_name(attrs["tir.param"], f, filename, f"parameter {k}: handle name")
            _check_dtype(attrs, f, filename, f"parameter {k}")
    for op in walk(f):
        if "tir.name" in op.attributes:
            _check_name(op.attributes["tir.name"], op, filename, "name")
        _check_dtype(op.attributes, op, filename, _name(op) or op.name)
        if op.name == "tir.call" and "callee" in op.attributes:  # printed as T.<callee>(...)
            _check_name(op.attributes["callee"], op, filename, "tir.call: callee")
        for r in op.results:
            if isinstance(r.type, ir.MemRefType):
                _check_buffer_type(r.type, op, filename, _name(op) or op.name)
        if op.name == Block.OP_NAME:
            _check_block(op, filename)
        if op.name == "affine.for":
            _check_loop(op, filename)
        if op.name in (MATCH_SHAPE, ASSUME) and (op.parent is None or op.parent.operation != f):
            _fail(op, filename, f"'{op.name}' must be at the top level of the function body")


def _check_func_attrs(f, filename):
    """What the TVMScript parser allows in T.func_attr (the printer writes it back as such):
    `tir.noalias` is read as an integer by the build."""
    if "tir.func_attrs" not in f.attributes:
        return
    try:
        attrs = ir.DictAttr(f.attributes["tir.func_attrs"])
    except ValueError:
        _fail(
            f,
            filename,
            f"tir.func_attrs must be a dictionary, got {str(f.attributes['tir.func_attrs'])[:60]}",
        )
    if "tir.noalias" in attrs and not isinstance(
        attrs["tir.noalias"], (ir.BoolAttr, ir.IntegerAttr)
    ):
        _fail(
            f,
            filename,
            f"T.func_attr: 'tir.noalias' must be True, False or an integer, "
            f"found {str(attrs['tir.noalias'])[:60]}",
        )


def is_symbol(v: ir.Value, func) -> bool:
    """Whether `v` is a symbol of `func`: an index value defined at the top level of its body
    (an argument, or an op's result there)."""
    if not isinstance(v.type, ir.IndexType):
        return False
    body = func.regions[0].blocks[0]
    if isinstance(v.owner, ir.Block):
        return v.owner == body
    parent = v.owner.operation.parent
    return parent is not None and parent.operation == func


def _check_symbols(f, args, filename):
    """Each dynamic buffer parameter has a tir.match_shape of its rank whose static sizes are
    the type's; the sizes of symbolic shapes are symbols."""
    matched = set()
    for op in f.regions[0].blocks[0].operations:
        op = op.operation
        if op.name == MATCH_SHAPE:
            buf, sizes = op.operands[0], list(op.operands)[1:]
            if not isinstance(buf.type, ir.MemRefType):
                _fail(op, filename, f"tir.match_shape: expected a buffer, got {buf.type}")
            shape = ir.AffineMapAttr(op.attributes["shape"]).value
            t = ir.MemRefType(buf.type)
            if shape.n_dims or shape.n_symbols != len(sizes) or len(shape.results) != t.rank:
                _fail(
                    op,
                    filename,
                    f"tir.match_shape: shape {shape} must map its "
                    f"{len(sizes)} operands to the {t.rank} sizes of {t}",
                )
            for d, e in zip(t.shape, shape.results):
                c = e.maybe_downcast()
                if d != ir.ShapedType.get_dynamic_size() and not (
                    isinstance(c, ir.AffineConstantExpr) and c.value == d
                ):
                    _fail(
                        op,
                        filename,
                        f"tir.match_shape: shape {shape} disagrees with the static sizes of {t}",
                    )
            _check_symbol_operands(op, sizes, f, filename)
            if isinstance(buf.owner, ir.Block):
                matched.add(ir.BlockArgument(buf).arg_number)
        elif op.name == ASSUME:
            integer_set(op.attributes["condition"])
            _check_symbol_operands(op, list(op.operands), f, filename)
    sizes = {
        v
        for op in f.regions[0].blocks[0].operations
        if op.operation.name == MATCH_SHAPE
        for v in list(op.operation.operands)[1:]
    }
    for k, (arg, attrs) in enumerate(zip(args, arg_attrs(f))):
        if "tir.implicit" in attrs and arg not in sizes:
            _fail(
                f,
                filename,
                f"parameter {k}: an implicit var (tir.implicit) must be a size "
                f"in some tir.match_shape",
            )
    for k, arg in enumerate(args):
        if (
            isinstance(arg.type, ir.MemRefType)
            and not ir.MemRefType(arg.type).has_static_shape
            and k not in matched
        ):
            _fail(
                f,
                filename,
                f"parameter {k}: a buffer of dynamic shape {arg.type} needs a "
                f"tir.match_shape giving its sizes",
            )


def _check_symbol_operands(op, values, f, filename):
    for v in values:
        if not is_symbol(v, f):
            _fail(
                op,
                filename,
                f"'{op.name}': its operands must be symbols of the function "
                f"(index values defined at the top level of its body)",
            )


def _check_loop(op, filename):
    _check_typed(op.attributes, op, filename, "loop", TYPED_LOOP_ATTRS)
    kind = Loop(op).kind
    if kind not in LOOP_KINDS:
        _fail(
            op, filename, f"loop: unknown kind {kind!r} (expected one of {', '.join(LOOP_KINDS)})"
        )
    if kind == "thread_binding" and Loop(op).thread is None:
        _fail(op, filename, "loop: a thread_binding loop needs tir.thread")


def _name(op) -> Optional[str]:
    return ir.StringAttr(op.attributes["tir.name"]).value if "tir.name" in op.attributes else None


def _check_buffer_type(t, op, filename, what):
    if not isinstance(t, ir.MemRefType):
        _fail(op, filename, f"{what}: a buffer must be a memref, got {t}")
    t = ir.MemRefType(t)
    elem = t.element_type
    if isinstance(elem, ir.VectorType):  # a buffer of float32x4...
        elem = elem.element_type
    if str(elem) not in _ELEMENT_TYPES:
        _fail(
            op,
            filename,
            f"{what}: element type {t.element_type} is not a TensorIR dtype "
            f"(one of {', '.join(_ELEMENT_TYPES)})",
        )
    dynamic = ir.ShapedType.get_dynamic_size()
    static = [d for d in t.shape if d != dynamic]
    if any(d <= 0 for d in static):
        _fail(op, filename, f"{what}: buffer has a zero-sized dimension ({t})")
    size = t.element_type.shape[0] if isinstance(t.element_type, ir.VectorType) else 1
    for d in static:
        size *= d
    nbytes = size * max(1, _bits(elem) // 8)
    if nbytes > MAX_BUFFER_BYTES:
        _fail(
            op,
            filename,
            f"{what}: buffer of {nbytes} bytes is larger than the {MAX_BUFFER_BYTES} bytes allowed",
        )


def _bits(t) -> int:
    s = str(t)
    return 16 if s == "bf16" else int(s.lstrip("if"))


def _check_block(op, filename):
    blk = Block(op)
    name = ir.StringAttr(op.attributes["name"]).value
    if len(op.regions) != 2 or len(op.regions[0].blocks) != 1:
        _fail(op, filename, f"block {name!r}: expected a body region with one block")
    _check_typed(op.attributes, op, filename, f"block {name!r}", TYPED_BLOCK_ATTRS)
    n = len(op.regions[0].blocks[0].arguments)
    try:
        iters = (len(blk.iter_names), len(blk.iter_types), len(blk.domains))
        bindings = blk.bindings
    except (ValueError, TypeError, IndexError) as e:
        _fail(op, filename, f"block {name!r}: malformed attributes ({e})")
    if iters != (n, n, n):
        _fail(
            op,
            filename,
            f"block {name!r}: {n} iterators but {iters[0]} names, {iters[1]} "
            f"kinds and {iters[2]} domains",
        )
    if (bindings.n_dims + bindings.n_symbols, len(bindings.results)) != (len(op.operands), n):
        _fail(
            op,
            filename,
            f"block {name!r}: bindings {bindings} must map its "
            f"{len(op.operands)} operands to {n} iterators",
        )
    func = op.parent
    while func is not None and func.operation.name != "func.func":
        func = func.parent
    if func is not None:
        _check_symbol_operands(op, blk.symbols, func.operation, filename)
    if any(t not in ("S", "R", "O") for t in blk.iter_types):
        _fail(op, filename, f"block {name!r}: iterator kinds must be S, R or O")
    for iter_name in ir.ArrayAttr(op.attributes["iter_names"]):
        _check_name(iter_name, op, filename, f"block {name!r}: iterator")
    for dom in blk.domains:  # (min, extent): a domain may start anywhere
        if len(dom) != 2 or (isinstance(dom[1], int) and dom[1] <= 0):
            _fail(
                op,
                filename,
                f"block {name!r}: empty or malformed iterator domain (min, extent) {dom}",
            )
    for arg in op.regions[0].blocks[0].arguments:
        if not isinstance(arg.type, ir.IndexType):
            _fail(op, filename, f"block {name!r}: iterators must be of type index")
    init = op.regions[1].blocks
    if len(init) > 1 or (
        init
        and [a.type for a in init[0].arguments]
        != [a.type for a in op.regions[0].blocks[0].arguments]
    ):
        _fail(op, filename, f"block {name!r}: the init region must take the block's iterators")
    if n == 0:
        return  # an opaque block (no iterators) may read loop variables, as in TVM
    for region in op.regions:
        for inner in _ops_in(region):
            for v in inner.operands:
                if _is_outer_loop_var(v, op):
                    _fail(
                        inner,
                        filename,
                        f"block {name!r} is not well-formed: it uses "
                        f"{_describe(v)} defined outside the block; use a "
                        f"block iterator (T.axis.*) bound to it",
                        [(f"{_describe(v)} defined here", _defining_op(v))],
                    )


def _ops_in(region):
    for b in region.blocks:
        for child in b.operations:
            child = child.operation
            yield child
            yield from walk(child)


def _defining_op(v) -> Optional[ir.Operation]:
    owner = v.owner
    if isinstance(owner, ir.Block):
        return owner.owner.operation if owner.owner is not None else None
    return owner.operation if hasattr(owner, "operation") else owner


def _is_outer_loop_var(v, block_op) -> bool:
    """Whether `v` is the variable of a loop around `block_op` (not one inside it)."""
    if not isinstance(v.owner, ir.Block):
        return False
    p = _defining_op(v)
    if p is None or p.name in (Block.OP_NAME, "func.func"):
        return False
    while p is not None:
        if p == block_op:
            return False
        if p.name == "func.func":
            return True
        p = p.parent
        p = p.operation if p is not None else None
    return True


def _describe(v) -> str:
    d = _defining_op(v)
    if isinstance(v.owner, ir.Block) and d is not None:
        if d.name == Block.OP_NAME:
            return f"iterator of block {ir.StringAttr(d.attributes['name']).value!r}"
        return f"loop variable {_name(d)!r}" if _name(d) else f"a variable of '{d.name}'"
    return f"a value of '{d.name}'" if d is not None else "a value"
