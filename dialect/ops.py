"""Python views of the ops a TensorIR program is made of.

`Block` wraps a `tir.block`; `Loop` wraps an `affine.for` carrying `tir.*` attributes
(TensorIR loops are upstream loops). Views hold no state beyond the wrapped operation, so
they are cheap to create and always read the current IR.

Loop attributes (all discardable, on affine.for; the typed ones are in dialect/attrs.py):
  tir.name         loop variable name ("i", "j_0", "i_j_fused")
  tir.kind         #tir.for_kind<"parallel" | "vectorized" | "unroll" | "thread_binding">
                   (absent: serial)
  tir.thread       #tir.thread<"threadIdx.x">: the thread tag of a thread_binding loop
  tir.annotations  #tir.annotations<{...}>: the loop's annotations
  tir.index_dtype  #tir.index_dtype<"int64"> when the loop var is a T.int64 (absent: int32); the
                   IV stays `index`
"""

from typing import Callable, Optional, Sequence, TypeVar, overload

from mlir import ir
from mlir.dialects import affine
from tir_mlir.dialect import TERMINATOR
from tir_mlir.dialect import attrs as tir_attrs
from tir_mlir.dialect import spelling

from tir_mlir.ir.affine_exprs import expr_bounds
from tir_mlir.analysis.symbolic import Int, SymExpr

ITER_KINDS = {"S": "spatial", "R": "reduce", "O": "opaque"}
LOOP_KINDS = ("serial", "parallel", "vectorized", "unroll", "thread_binding")
# The thread axes a thread_binding loop may be bound to (#tir.thread in tir.irdl.mlir).
THREAD_TAGS = tuple(f"{s}.{a}" for s in ("blockIdx", "threadIdx", "vthread") for a in "xyz") + (
    "vthread",
)
# TensorIR dtype of index values (loop vars, iter vars, buffer dims, index constants); MLIR
# values stay `index`. Absent means int32. See docs/design.md, "Index dtypes".
INDEX_DTYPE = "tir.index_dtype"
KIND = "tir.kind"  # Loop.kind: #tir.for_kind<...>, absent when serial
THREAD = "tir.thread"  # Loop.thread: #tir.thread<...>
ANNOTATIONS = "tir.annotations"  # Loop.annotations: #tir.annotations<{...}>
# Unit attr of a `with T.block("root")` given non-empty T.reads/T.writes (a tensor intrinsic's
# description): printed as a block, like TVM, not as the implicit root.
EXPLICIT_ROOT = "tir.explicit_root"
# DictAttr on a func.func: the annotations of TVM's root block (the function body here),
# printed as `with T.block("root"): T.block_attr({...})`; see root_annotations().
ROOT_ANNOTATIONS = "tir.root_annotations"
# DenseElementsAttr on a memref.alloc: the contents of a T.allocate_const buffer.
CONST_DATA = "tir.const_data"
# Unit attr on such an alloc: indexed through `T.Buffer(..., data=K)`, not a T.decl_buffer.
# TVM declares no buffer then: it is no block's inferred read region (a T.reads entry written
# for it is kept) and prints as `T.Buffer`.
CONST_UNDECLARED = "tir.const_undeclared"


def is_undeclared_const(buf: ir.Value) -> bool:
    """A T.allocate_const buffer indexed through `T.Buffer(..., data=K)`."""
    return (
        isinstance(buf, ir.OpResult)
        and buf.owner.name == "memref.alloc"
        and CONST_UNDECLARED in buf.owner.attributes
    )


def index_dtype_attr(dtype: str) -> ir.Attribute:
    """`#tir.index_dtype<"int64">`."""
    return tir_attrs.string("index_dtype", dtype)


def index_dtype_value(attr: ir.Attribute) -> str:
    return tir_attrs.string_value(attr, "index_dtype")


def _op(x) -> ir.Operation:
    try:
        return x.operation
    except AttributeError:
        return x


@overload
def str_attr(attrs, key: str, default: None = None) -> Optional[str]: ...
@overload
def str_attr(attrs, key: str, default: str) -> str: ...
def str_attr(attrs, key: str, default: Optional[str] = None) -> Optional[str]:
    """The value of string attribute `key` of `attrs` (op attributes or a dict), or `default`."""
    return ir.StringAttr(attrs[key]).value if key in attrs else default


def _dict_attr(attrs, key) -> dict:
    return {n.name: n.attr for n in ir.DictAttr(attrs[key])} if key in attrs else {}


def _set_attr(attrs, key, value: Optional[ir.Attribute]):
    """Set attribute `key`, or remove it when `value` is None."""
    if value is not None:
        attrs[key] = value
    elif key in attrs:
        del attrs[key]


def root_annotations(func) -> dict:
    """The root block's annotations of a func.func (name -> attribute), {} when none."""
    return _dict_attr(_op(func).attributes, ROOT_ANNOTATIONS)


def set_root_annotations(func, values: dict) -> None:
    """Replace the root block's annotations of a func.func ({} removes them)."""
    value = ir.DictAttr.get(dict(values)) if values else None
    _set_attr(_op(func).attributes, ROOT_ANNOTATIONS, value)


def integer_set(attr: ir.Attribute) -> ir.IntegerSet:
    """The IntegerSet held by an IntegerSetAttr (the LLVM 22 bindings have no accessor, so the
    constraints are read back from the attribute's text through an affine map)."""
    text = str(attr)
    head, _, body = text[len("affine_set<") : -1].partition(" : ")
    dims, _, syms = head.partition("[")
    parts, depth, cur = [], 0, ""
    for ch in body.strip()[1:-1]:
        depth += ch == "("
        depth -= ch == ")"
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    parts = [p.strip() for p in parts + [cur] if p.strip()]
    exprs = [p.rsplit(" ", 2)[0] for p in parts]
    eqs = [p.endswith("== 0") for p in parts]
    map_text = f"affine_map<{dims}{'[' + syms if syms else ''} -> ({', '.join(exprs) or '0'})>"
    m = ir.AffineMapAttr(ir.Attribute.parse(map_text, attr.context)).value
    return ir.IntegerSet.get(m.n_dims, m.n_symbols, list(m.results), eqs or [False], attr.context)


def add_terminator(block: ir.Block, loc=None):
    """End a region block of a `tir` op with the borrowed terminator."""
    with ir.InsertionPoint(block):
        ir.Operation.create(TERMINATOR, loc=loc)


def body_ops(block: ir.Block):
    """Operations of a region block, without the terminator (`gpu.yield` or `affine.yield`)."""
    ops = list(block.operations)
    if ops and ops[-1].operation.name in (TERMINATOR, "affine.yield"):
        ops = ops[:-1]
    return [_op(o) for o in ops]


EXTERN = "tir.extern"


def extern_op(callee: str, args, result: ir.Type, attrs=None, loc=None) -> ir.Value:
    """A `tir.extern` whose region yields `args` (at the current insertion point)."""
    attributes = {"callee": ir.StringAttr.get(callee), **(attrs or {})}
    op = ir.Operation.create(EXTERN, results=[result], attributes=attributes, regions=1, loc=loc)
    block = op.regions[0].blocks.append()
    with ir.InsertionPoint(block):
        ir.Operation.create(TERMINATOR, operands=list(args), loc=loc)
    return op.result


def extern_callee(op) -> Optional[str]:
    """The callee of a `tir.extern`, None for any other op."""
    op = _op(op)
    return ir.StringAttr(op.attributes["callee"]).value if op.name == EXTERN else None


def extern_args(op) -> list:
    return list(_op(op).regions[0].blocks[0].operations[-1].operands)


def memo(table: dict, key, make, limit: int = 4096):
    """`table[key]`, made by `make(key)` the first time. For tables keyed by MLIR attributes or
    affine expressions: uniqued by their context (a key holds a reference to it), immutable,
    and read over and over by a schedule replay. A table past `limit` entries starts over."""
    got = table.get(key, table)
    if got is table:
        if len(table) > limit:
            table.clear()
        got = table[key] = make(key)
    return got


_DOMAINS: dict = {}


def _decode_domains(attr) -> tuple:
    """(min, extent) per entry; a symbolic entry (an affine map over the block's symbols)
    is kept as its AffineMap, for `Block.domains` to apply to the operands."""
    return tuple(
        d.value
        if isinstance(d, ir.AffineMapAttr)
        else tuple(ir.IntegerAttr(x).value for x in ir.ArrayAttr(d))
        for d in ir.ArrayAttr(attr)
    )


def _domain_attr(lo_ext, symbols: list) -> ir.Attribute:
    """A `domains` entry: [min, extent] when constant, else a map over `symbols` (which
    grows with the symbols the entry uses)."""
    lo, ext = lo_ext
    if not isinstance(lo, SymExpr) and not isinstance(ext, SymExpr):
        i64 = ir.IntegerType.get_signless(64)
        return ir.ArrayAttr.get([ir.IntegerAttr.get(i64, int(v)) for v in (lo, ext)])
    exprs = [
        v.embed(symbols) if isinstance(v, SymExpr) else ir.AffineConstantExpr.get(int(v))
        for v in (lo, ext)
    ]
    return ir.AffineMapAttr.get(ir.AffineMap.get(0, len(symbols), exprs))


def with_symbols(amap: ir.AffineMap, n_symbols: int) -> ir.AffineMap:
    """`amap` over `n_symbols` symbols (at least its own): the same results."""
    if amap.n_symbols == n_symbols:
        return amap
    return ir.AffineMap.get(amap.n_dims, n_symbols, list(amap.results))


def set_with_symbols(iset: ir.IntegerSet, n_symbols: int) -> ir.IntegerSet:
    if iset.n_symbols == n_symbols:
        return iset
    cons = list(iset.constraints)
    return ir.IntegerSet.get(
        iset.n_dims, n_symbols, [c.expr for c in cons], [c.is_eq for c in cons]
    )


class Block:
    """View of `tir.block`: with T.block(name) and its iter vars, bindings, init and body."""

    OP_NAME = "tir.block"

    def __init__(self, op):
        self.op = _op(op)
        assert self.op.name == self.OP_NAME, self.op.name

    @staticmethod
    def is_block(op) -> bool:
        return _op(op).name == Block.OP_NAME

    # --- attributes -------------------------------------------------------------------------
    @property
    def name(self) -> str:
        return ir.StringAttr(self.op.attributes["name"]).value  # required by the dialect

    @property
    def iter_names(self) -> list:
        return [ir.StringAttr(a).value for a in ir.ArrayAttr(self.op.attributes["iter_names"])]

    @property
    def iter_types(self) -> list:
        """One of "S" (spatial), "R" (reduce), "O" (opaque) per iter var."""
        return [ir.StringAttr(a).value for a in ir.ArrayAttr(self.op.attributes["iter_types"])]

    @property
    def domains(self) -> list:
        """(min, extent) per iter var: ints, or SymExprs over the block's symbols."""
        doms = memo(_DOMAINS, self.op.attributes["domains"], _decode_domains)
        if all(type(d) is tuple for d in doms):
            return list(doms)
        syms = self.symbols
        return [
            d if type(d) is tuple else tuple(SymExpr.from_map(d, syms[: d.n_symbols])) for d in doms
        ]

    @property
    def index_dtypes(self) -> list:
        """TensorIR dtype ("int32" | "int64") of each iter var."""
        a = self.op.attributes
        if INDEX_DTYPE not in a:
            return ["int32"] * len(ir.ArrayAttr(a["iter_names"]))
        return [index_dtype_value(x) for x in ir.ArrayAttr(a[INDEX_DTYPE])]

    @property
    def bindings(self) -> ir.AffineMap:
        """Map from `dims` to the iter var values: iter var k = bindings.results[k](dims)."""
        return ir.AffineMapAttr(self.op.attributes["bindings"]).value

    @property
    def dims(self) -> list:
        """The operands `bindings` maps as dims (loop vars, outer iter vars)."""
        operands = list(self.op.operands)
        n = self.bindings.n_symbols
        return operands[: len(operands) - n] if n else operands

    @property
    def symbols(self) -> list:
        """The trailing operands: function-level index values the bindings, the symbolic
        domains and the predicate use as symbols (docs/symbolic.md)."""
        n = self.bindings.n_symbols
        return list(self.op.operands)[len(self.op.operands) - n :] if n else []

    # --- spelling hints (the printer's, kept beside the IR: dialect/spelling.py) ---------------
    @property
    def where_spelling(self) -> dict:
        """str(constraint expr) -> the operator the program wrote it with, for the T.where
        constraints the printer spells otherwise by default (`i >= 2`, not `2 <= i`)."""
        return dict(spelling.block(self.op).where)

    @where_spelling.setter
    def where_spelling(self, ops: dict):
        spelling.update(self.op, where=ops)

    @property
    def const_first_bindings(self) -> set:
        """str(binding expr) of the bindings the program wrote constant first (`8 + i`): TVM
        keeps the expression as written, so the printer does too while it is unchanged."""
        return set(spelling.block(self.op).const_first)

    @const_first_bindings.setter
    def const_first_bindings(self, keys: set):
        spelling.update(self.op, const_first=keys)

    @property
    def start_first_bindings(self) -> set:
        """str(binding expr) of the bindings compute_at made `start + new loop` (TVM's form
        of `hh_0 * 8 - 1 + ax0`)."""
        return set(spelling.block(self.op).start_first)

    @start_first_bindings.setter
    def start_first_bindings(self, keys: set):
        spelling.update(self.op, start_first=keys)

    @property
    def binding_trees(self) -> dict:
        """str(binding expr) -> the binding as TVM's split/fuse wrote it (an expression tree of
        tir_mlir/analysis/iter_map.py: `(f0 * 1024 + f1) // 512`, the same numbers as the
        affine map's `f0 * 2 + f1 floordiv 512`)."""
        return dict(spelling.block(self.op).bindings)

    @binding_trees.setter
    def binding_trees(self, trees: dict):
        spelling.update(self.op, bindings=trees)

    @property
    def where_trees(self) -> dict:
        """str(T.where constraint expr) -> the sum it bounds as TVM's split/fuse wrote it (a
        tree as `binding_trees`: `i_0 * 100 + (i_1_0 * 10 + i_1_1)` of `... < 512`)."""
        return dict(spelling.block(self.op).where_trees)

    @where_trees.setter
    def where_trees(self, trees: dict):
        spelling.update(self.op, where_trees=trees)

    @property
    def predicate(self) -> Optional[ir.IntegerSet]:
        """T.where, as an integer set over `dims`; None when the block always runs."""
        a = self.op.attributes
        return integer_set(a["predicate"]) if "predicate" in a else None

    @property
    def annotations(self) -> dict:
        return _dict_attr(self.op.attributes, "annotations")

    # --- regions ----------------------------------------------------------------------------
    @property
    def body(self) -> ir.Block:
        return self.op.regions[0].blocks[0]

    @property
    def init(self) -> Optional[ir.Block]:
        blocks = self.op.regions[1].blocks
        return blocks[0] if len(blocks) else None

    @property
    def region_blocks(self) -> list[ir.Block]:
        """The body, then the init if the block has one: zip a rebuilt block's with the old
        one's to move both."""
        init = self.init
        return [self.body] if init is None else [self.body, init]

    @property
    def iter_vars(self) -> list:
        return list(self.body.arguments)

    # --- building ---------------------------------------------------------------------------
    @staticmethod
    def build(
        name: str,
        iter_names: Sequence[str],
        iter_types: Sequence[str],
        domains: Sequence[tuple],
        bindings: ir.AffineMap,
        dims: Sequence[ir.Value],
        *,
        symbols: Sequence[ir.Value] = (),
        predicate: Optional[ir.IntegerSet] = None,
        annotations: Optional[dict] = None,
        has_init: bool = False,
        index_dtypes: Optional[Sequence[str]] = None,
        loc=None,
        ip=None,
    ) -> "Block":
        """Create a block whose body (and init, if asked) hold only the terminator.
        `domains`: (min, extent) pairs of ints or SymExprs. `symbols`: the symbol operands
        `bindings` and `predicate` use (symbol k is `symbols[k]`); the symbols of symbolic
        domains are added after them, and every map gets the whole list.
        `index_dtypes`: the TensorIR dtype of each iter var; None: implied by the bindings
        (int64 when bound to int64 loop vars, tir_mlir/ir/index_dtypes.py)."""
        loc = loc or ir.Location.unknown()
        syms = list(symbols)
        domain_attrs = [_domain_attr(d, syms) for d in domains]
        if len(syms) > bindings.n_symbols:
            bindings = with_symbols(bindings, len(syms))
        attrs = {
            "name": ir.StringAttr.get(name),
            "iter_names": ir.ArrayAttr.get([ir.StringAttr.get(n) for n in iter_names]),
            "iter_types": ir.ArrayAttr.get([ir.StringAttr.get(t) for t in iter_types]),
            "domains": ir.ArrayAttr.get(domain_attrs),
            "bindings": ir.AffineMapAttr.get(bindings),
        }
        if predicate is not None:
            attrs["predicate"] = ir.IntegerSetAttr.get(set_with_symbols(predicate, len(syms)))
        if annotations:
            attrs["annotations"] = ir.DictAttr.get(dict(annotations))
        if index_dtypes is None:
            from tir_mlir.ir.index_dtypes import binding_dtypes  # (it imports this module)

            index_dtypes = binding_dtypes(bindings, dims)
        if any(d != "int32" for d in index_dtypes):
            attrs[INDEX_DTYPE] = ir.ArrayAttr.get([index_dtype_attr(d) for d in index_dtypes])
        op = ir.Operation.create(
            Block.OP_NAME, operands=list(dims) + syms, attributes=attrs, regions=2, loc=loc, ip=ip
        )
        index = ir.IndexType.get()
        body = op.regions[0].blocks.append(*([index] * len(iter_names)))
        add_terminator(body, loc)
        if has_init:
            add_terminator(op.regions[1].blocks.append(*([index] * len(iter_names))), loc)
        return Block(op)

    def set_attr(self, key: str, value: Optional[ir.Attribute]):
        _set_attr(self.op.attributes, key, value)


def _iv_loop(iv: ir.Value) -> "Loop":
    """The loop whose induction variable `iv` is (a block argument of its body)."""
    return Loop(ir.BlockArgument(iv).owner.owner)


def _const_map(value: int) -> ir.AffineMapAttr:
    return _shared(
        ("map", value),
        lambda: ir.AffineMapAttr.get(ir.AffineMap.get(0, 0, [ir.AffineConstantExpr.get(value)])),
    )


_SHARED: dict = {}
_SHARED_CONTEXT: list = [None]


_A = TypeVar("_A", bound=ir.Attribute)


def _shared(key, make: Callable[[], _A]) -> _A:
    """The attribute `make()` builds, made once per key in the current context (attributes
    are immutable and uniqued by their context: a schedule replay builds thousands of loops
    with the same few bound maps, steps and kinds)."""
    table = _shared_table()
    got = table.get(key)
    if got is None:
        got = table[key] = make()
    return got


def _shared_table() -> dict:
    """`_shared`'s table for the current context."""
    ctx = ir.Context.current
    if _SHARED_CONTEXT[0] is not ctx or len(_SHARED) > 4096:
        _SHARED.clear()
        _SHARED_CONTEXT[0] = ctx
    return _SHARED


def _loop_attrs(lo: int, hi: int, kind: str) -> dict:
    """The attributes of `for _ in range(lo, hi)` of that kind, but its name."""
    table = _shared_table()
    key = ("loop", lo, hi, kind)
    got = table.get(key)
    if got is None:
        got = table[key] = {
            "lowerBoundMap": _const_map(lo),
            "upperBoundMap": _const_map(hi),
            "step": ir.IntegerAttr.get(ir.IndexType.get(), 1),
            "operandSegmentSizes": ir.DenseI32ArrayAttr.get([0, 0, 0]),
        }
        if kind != "serial":
            got[KIND] = tir_attrs.for_kind(kind)
    return dict(got)


_CONST_RESULTS: dict = {}


def _const_result(attr) -> Optional[int]:
    """The value of a single-result constant AffineMapAttr, else None (`memo`: a replay reads
    the bounds of every loop many times)."""
    return memo(_CONST_RESULTS, attr, _decode_const_result)


def _decode_const_result(attr) -> Optional[int]:
    e = ir.AffineMapAttr(attr).value.results[0].maybe_downcast()
    return e.value if isinstance(e, ir.AffineConstantExpr) else None


_INT_VALUES: dict = {}


def _int_value(attr) -> int:
    """The value of an IntegerAttr (`memo`: loop steps are read often)."""
    return memo(_INT_VALUES, attr, _decode_int)


def _decode_int(attr) -> int:
    return ir.IntegerAttr(attr).value


def _bound_map(value: Int) -> tuple:
    """(map, symbol operands) of a loop bound."""
    if isinstance(value, SymExpr):
        amap, operands = value.to_map()
        return amap, operands
    return ir.AffineMap.get(0, 0, [ir.AffineConstantExpr.get(int(value))]), []


class Loop:
    """View of an `affine.for` that stands for a TensorIR loop: constant bounds, bounds over
    the function's symbols (`range(n)`: `min`/`extent` are SymExprs), or bounds affine in
    outer loop variables (`range(i + 1)`)."""

    OP_NAME = "affine.for"

    def __init__(self, op):
        self.op = _op(op)
        assert self.op.name == self.OP_NAME, self.op.name

    @staticmethod
    def is_loop(op) -> bool:
        return _op(op).name == Loop.OP_NAME

    @property
    def name(self) -> str:
        return str_attr(self.op.attributes, "tir.name", "i")

    @property
    def kind(self) -> str:
        a = self.op.attributes
        return tir_attrs.string_value(a[KIND], "for_kind") if KIND in a else "serial"

    @property
    def thread(self) -> Optional[str]:
        a = self.op.attributes
        return tir_attrs.string_value(a[THREAD], "thread") if THREAD in a else None

    @property
    def annotations(self) -> dict:
        a = self.op.attributes
        return tir_attrs.annotations_value(a[ANNOTATIONS]) if ANNOTATIONS in a else {}

    @property
    def index_dtype(self) -> str:
        """TensorIR dtype of the loop var: "int32" or "int64"."""
        a = self.op.attributes
        return index_dtype_value(a[INDEX_DTYPE]) if INDEX_DTYPE in a else "int32"

    def _bound(self, key) -> Int:
        value = _const_result(self.op.attributes[key])
        if value is not None:
            return value
        amap, operands = self.lower_bound if key == "lowerBoundMap" else self.upper_bound
        if amap.n_dims or len(amap.results) != 1:
            from tir_mlir.errors import ScheduleError

            raise ScheduleError(
                f"loop {self.name!r} has bounds that depend on outer loops "
                f"(only its kind and annotations can be changed)"
            )
        return SymExpr.from_map(amap, operands)[0]

    @property
    def constant_bounds(self) -> bool:
        """False for `for j in range(i + 1)`: bounds affine in outer loop variables. True for
        constant bounds and for bounds over the function's symbols (`range(n)`)."""
        if not len(self.op.operands):
            return True
        return not (self.lower_bound[0].n_dims or self.upper_bound[0].n_dims)

    @property
    def symbolic(self) -> bool:
        """Whether the bounds use the function's symbols (`range(n)`)."""
        return bool(len(self.op.operands)) and self.constant_bounds

    def iv_range(self) -> tuple:
        """(first, last) value of the loop var; for bounds on outer loops, the widest over
        those loops' ranges."""
        op = self.op
        if not len(op.operands):  # constant bounds: the common case, read once each
            a = op.attributes
            lo = _const_result(a["lowerBoundMap"])
            hi = _const_result(a["upperBoundMap"])
            if lo is not None and hi is not None:
                step = _int_value(a["step"])
                return lo, lo + (hi - lo - 1) // step * step
        if self.constant_bounds:
            return self.min, self.min + (self.extent - 1) // self.step * self.step
        (lmap, lops), (umap, uops) = self.lower_bound, self.upper_bound
        lo = expr_bounds(lmap.results[0], [_iv_loop(v).iv_range() for v in lops])
        hi = expr_bounds(umap.results[0], [_iv_loop(v).iv_range() for v in uops])
        if lo is None or hi is None:
            raise ValueError(f"loop {self.name!r}: its bounds have no range over the outer loops")
        return lo[0], max(lo[0], hi[1] - 1)

    @property
    def lower_bound(self):
        """(AffineMap, operands) of the lower bound."""
        m = ir.AffineMapAttr(self.op.attributes["lowerBoundMap"]).value
        return m, list(self.op.operands)[: m.n_dims + m.n_symbols]

    @property
    def upper_bound(self):
        lm = ir.AffineMapAttr(self.op.attributes["lowerBoundMap"]).value
        m = ir.AffineMapAttr(self.op.attributes["upperBoundMap"]).value
        first = lm.n_dims + lm.n_symbols
        return m, list(self.op.operands)[first : first + m.n_dims + m.n_symbols]

    @property
    def min(self) -> Int:
        """The first value: an int, or a SymExpr when it uses the function's symbols."""
        return self._bound("lowerBoundMap")

    @property
    def extent(self) -> Int:
        """The trip count: an int, or a SymExpr (`n`, `(n + 3) // 4`) over symbols."""
        return self._bound("upperBoundMap") - self._bound("lowerBoundMap")

    @property
    def step(self) -> int:
        """1 for every TensorIR loop; lowering stages also see loops with other steps."""
        return ir.IntegerAttr(self.op.attributes["step"]).value

    @property
    def iv(self) -> ir.Value:
        return self.body.arguments[0]

    @property
    def body(self) -> ir.Block:
        return self.op.regions[0].blocks[0]

    @staticmethod
    def build(
        name: str,
        extent: Int,
        *,
        min: Int = 0,
        kind: str = "serial",
        thread: Optional[str] = None,
        annotations: Optional[dict] = None,
        index_dtype: str = "int32",
        bounds=None,
        loc=None,
        ip=None,
    ) -> "Loop":
        """Create `for name in range(min, min + extent)` with an empty body; `index_dtype` is
        the loop var's TensorIR dtype (pass the source loop's when replacing loops).
        `min`/`extent` may be SymExprs: bound maps over their symbols (`0 to %n`).
        `bounds` = ((lower map, operands), (upper map, operands)) replaces min/extent for
        bounds that depend on outer loop variables."""
        loc = loc or ir.Location.unknown()
        if bounds is None and (isinstance(min, SymExpr) or isinstance(extent, SymExpr)):
            bounds = (_bound_map(min), _bound_map(min + extent))
        if bounds is not None:
            (lmap, lops), (umap, uops) = bounds
            op = affine.AffineForOp(
                lmap, umap, lower_bound_operands=lops, upper_bound_operands=uops, loc=loc, ip=ip
            )
        else:  # (the generic builders: the Python ones cost twice as much)
            assert not isinstance(min, SymExpr) and not isinstance(extent, SymExpr)
            attrs = _loop_attrs(int(min), int(min) + int(extent), kind)
            attrs["tir.name"] = ir.StringAttr.get(name)
            op = ir.Operation.create(Loop.OP_NAME, attributes=attrs, regions=1, loc=loc, ip=ip)
            body = op.regions[0].blocks.append(ir.IndexType.get())
            ir.Operation.create("affine.yield", loc=loc, ip=ir.InsertionPoint(body))
            loop = Loop.__new__(Loop)  # (the view of the op just made: no checks)
            loop.op = op
            if thread or annotations:
                loop.set(thread=thread, annotations=annotations)
            if index_dtype != "int32":
                op.attributes[INDEX_DTYPE] = index_dtype_attr(index_dtype)
            return loop
        with ir.InsertionPoint(op.regions[0].blocks[0]):
            affine.AffineYieldOp([], loc=loc)
        loop = Loop(op)
        loop.set(name=name, kind=kind, thread=thread, annotations=annotations)
        if index_dtype != "int32":
            op.operation.attributes[INDEX_DTYPE] = index_dtype_attr(index_dtype)
        return loop

    def build_like(self, name: Optional[str] = None, *, ip=None) -> "Loop":
        """A new loop with an empty body and this one's range, kind, thread, annotations,
        index dtype and location; its name is `name` if given, else this one's."""
        return Loop.build(
            self.name if name is None else name,
            self.extent,
            min=self.min,
            kind=self.kind,
            thread=self.thread,
            annotations=self.annotations or None,
            index_dtype=self.index_dtype,
            loc=self.op.location,
            ip=ip,
        )

    def set(self, *, name=None, kind=None, thread=None, annotations=None):
        """Update the tir.* attributes given (thread/annotations: pass {} or "" to clear)."""
        a = self.op.attributes
        if name is not None:
            a["tir.name"] = ir.StringAttr.get(name)
        if kind is not None:
            _set_attr(a, KIND, tir_attrs.for_kind(kind) if kind != "serial" else None)
        if thread is not None:
            _set_attr(a, THREAD, tir_attrs.thread(thread) if thread else None)
        if annotations is not None:
            _set_attr(a, ANNOTATIONS, tir_attrs.annotations(annotations) if annotations else None)
