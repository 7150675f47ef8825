"""Which buffer holds each tensor of a linalg function, and the steps that fill them.

Tensors are values; TensorIR has buffers. Planning is done before anything is emitted, over
the function's ops in order (the tensor form is SSA, so this is a small bufferization):
- a function argument is an input buffer; each result gets an output buffer appended to the
  parameters (destination-passing style, as TVM calls a PrimFunc);
- a tensor constant is a constant buffer (`T.allocate_const`; a bool one holds int8, read
  back as bool), a splat one (`dense<0.0>`) no buffer: its reads are the scalar;
  `tensor.empty` is nothing by itself;
- a linalg op's result i lives in the buffer of its init operand when the op reads that init
  (a reduction accumulating into it, a conv adding to a broadcast bias) and nothing else uses
  the init; when something else does, the result gets a new buffer and a copy of the init
  first; when the op does not read its init, a new buffer;
- an elementwise producer (a `linalg.fill`, a bias `linalg.broadcast`, a parallel generic
  that does not read its init) whose only use is the init of a reduction becomes that
  reduction's `T.init()`, not a block of its own (folds.py);
- expand/collapse_shape, `tensor.pad`, extract_slice, concat: a new buffer and copy blocks;
  insert_slice: the destination's buffer (in place, or a copy) and a copy block;
- a new buffer is the output buffer when its tensor is returned, else an `alloc_buffer` named
  after the block writing it; returned values held elsewhere (an argument, a constant, a
  value returned twice) are copied into their output.
On memrefs the buffers are the program's own (arguments, `memref.alloc`), `memref.copy` is a
copy block, and a fill followed by a reduction into the same memref is folded the same way.
"""

import math
from dataclasses import dataclass, field

import numpy as np
from mlir import ir

from tir_mlir.frontend.linalg_import.const_eval import const_value, evaluate, float_dtype
from tir_mlir.frontend.linalg_import.consts import transpose_axes, transposed
from tir_mlir.frontend.linalg_import.folds import find_folds, writes_all
from tir_mlir.frontend.linalg_import.linalg_ops import (
    dead_outputs,
    has_uses,
    indexing_maps,
    n_inputs,
)
from tir_mlir.frontend.linalg_import.naming import block_name
from tir_mlir.frontend.linalg_import.sizes import SizeError, Sizes, is_dynamic
from tir_mlir.frontend.linalg_import.slices import SLICE_OPS, is_static
from tir_mlir.frontend.linalg_import.source import LinalgSource

_SKIPPED = ("memref.dealloc", "func.return")
# Scalar ops of the top level: sizes, evaluated where a shape uses them (sizes.py), and
# torch-mlir's shape checks (the kernel's T.match_buffer shapes check the arguments instead).
_SIZE_OPS = ("tensor.dim", "memref.dim", "affine.apply", "cf.assert")
_RESHAPES = ("tensor.expand_shape", "tensor.collapse_shape", "tensor.pad")


@dataclass(eq=False)
class Buffer:
    name: str
    shape: tuple  # a Size per dimension (sizes.py)
    element_type: ir.Type
    kind: str  # "input" | "output" | "alloc" | "const" | "splat"
    index: int = -1  # parameter position of an input / output
    data: ir.DenseElementsAttr | None = None  # a constant's contents
    splat: ir.Attribute | None = None  # a splat constant's element: no buffer, read inline
    loc: ir.Location | None = None
    value: ir.Value | None = None  # the memref, once emitted


@dataclass(eq=False)
class Compute:
    """One block computing a `linalg.generic` (`op`) that was the named op `kind`."""

    op: ir.Operation
    kind: str
    name: str
    operands: list  # a Buffer per operand; None for a scalar operand
    # output number -> (the producer op computing its T.init, a Buffer per producer input)
    inits: dict = field(default_factory=dict)


@dataclass(eq=False)
class Copy:
    """dst = src reshaped / padded (`op`: the tensor op, or None for a plain copy)."""

    src: Buffer
    dst: Buffer
    name: str
    op: ir.Operation | None
    loc: ir.Location
    part: int = 0  # which input of a tensor.concat


class Planner:
    def __init__(self, source: LinalgSource, func_op, kinds: dict):
        self.src = source
        self.func = func_op.operation
        self.kinds = kinds  # generic op -> named op it was
        self.buffers: dict = {}  # ir.Value -> Buffer
        self.steps: list = []
        self.inputs: list = []
        self.outputs: dict = {}  # position -> Buffer
        self.allocs: list = []  # alloc and const buffers, in order
        self.block_names: set = set()
        self.buffer_names: set = set()
        self.folded: dict = {}  # producer result (memrefs: (consumer, memref)) -> producer
        self.folded_ops: set = set()  # (folds.py)
        self.sizes = Sizes()
        self.shapes: dict = {}  # tensor / memref value -> its Sizes
        self.symbols: list = []  # the size vars' values, once emitted
        self.shared: set = set()  # values sharing a buffer (tensor.cast)

    # --- names ------------------------------------------------------------------------------
    def _unique(self, name: str, used: set) -> str:
        out, k = name, 1
        while out in used:
            out, k = f"{name}_{k}", k + 1
        used.add(out)
        return out

    def unique_name(self, name: str) -> str:
        """A name no buffer of the function has (for a size var)."""
        return self._unique(name, self.buffer_names)

    # --- the function -----------------------------------------------------------------------
    def plan(self):
        ops = [op.operation for op in self.func.regions[0].blocks[0].operations]
        ret = ops[-1]
        self.returned = {}
        for k, v in enumerate(ret.operands):
            self.returned.setdefault(v, []).append(k)
        self.n_results = len(ret.operands)
        for k, arg in enumerate(self.func.regions[0].blocks[0].arguments):
            et = self._element_type(arg.type, arg)
            # each dynamic dimension of an argument is a size var of its own until a loop
            # or an assert says it is another one's
            shape = tuple(
                self.sizes.new_var(k, d) if ir.ShapedType.is_dynamic_size(n) else n
                for d, n in enumerate(ir.ShapedType(arg.type).shape)
            )
            self.shapes[arg] = shape
            name = self._unique(arg.get_name().lstrip("%") or f"arg{k}", self.buffer_names)
            b = Buffer(name, shape, et, "input", k, loc=self.src.location(arg))
            self.buffers[arg] = b
            self.inputs.append(b)
        self.folded, self.folded_ops = find_folds(ops, self.kinds)
        for op in ops:
            try:
                self._op(op)
            except SizeError as e:
                raise self.src.error(str(e), e.op) from None
        for b in self.allocs:
            if not b.name:  # a memref.alloc nothing writes
                b.name = self._unique("buffer", self.buffer_names)
        for k, v in enumerate(ret.operands):
            out = self.outputs.get(k)
            if out is None:
                out = self._output(k, v, self.src.location(ret))
                if v in self.buffers:
                    self.steps.append(
                        Copy(
                            self.buffers[v],
                            out,
                            self._unique("copy", self.block_names),
                            None,
                            self.src.location(ret),
                        )
                    )
        self._drop_unread_constants()
        return self

    def _output(self, k: int, value: ir.Value, loc) -> Buffer:
        shape, et = self._shape(value, self.func)
        b = Buffer(
            self._unique(f"out{k}" if self.n_results > 1 else "out", self.buffer_names),
            shape,
            et,
            "output",
            k,
            loc=loc,
        )
        self.outputs[k] = b
        return b

    def _shape(self, v: ir.Value, op) -> tuple:
        """(Sizes, element type) of a tensor or memref value: its static shape, or the sizes
        planned for it where it was made."""
        et = self._element_type(v.type, op)
        shape = self.shapes.get(v)
        if shape is None:
            if not ir.ShapedType(v.type).has_static_shape:
                owner = v.owner
                what = "a block argument" if isinstance(owner, ir.Block) else f"'{owner.name}'"
                raise self.src.error(
                    f"the dynamic sizes of {v.type} made by {what} are not known", op
                )
            shape = self.shapes[v] = tuple(ir.ShapedType(v.type).shape)
        return shape, et

    def _dims(self, v: ir.Value, op) -> tuple:
        return self._shape(v, op)[0]

    def shape_of(self, v: ir.Value) -> tuple:
        """The planned Sizes of a tensor or memref value (for the emitter)."""
        return self._shape(v, self.func)[0]

    def _made(self, v: ir.Value, dynamic, op):
        """Record the shape of `v`, made by `op` with `dynamic` (index values) as the sizes
        of its dynamic dimensions in order (`tensor.empty(%d)`, `memref.alloc(%d)`)."""
        sizes = iter([self.sizes.of_value(x, self._dims) for x in dynamic])
        self.shapes[v] = tuple(
            next(sizes) if ir.ShapedType.is_dynamic_size(n) else n
            for n in ir.ShapedType(v.type).shape
        )

    def _element_type(self, t: ir.Type, op) -> ir.Type:
        """The element type of a tensor or memref type the import takes."""
        if not isinstance(t, (ir.RankedTensorType, ir.MemRefType)):
            raise self.src.error(
                f"unsupported type {t}: linalg import takes ranked tensors "
                f"and memrefs (scalar parameters and results are not "
                f"supported yet)",
                op,
            )
        shaped = ir.ShapedType(t)
        if isinstance(t, ir.MemRefType) and not _identity_layout(ir.MemRefType(t)):
            raise self.src.error(
                f"memref {t} has a non-identity layout (views are not supported)", op
            )
        et = shaped.element_type
        if not (
            isinstance(et, ir.IntegerType)
            and et.width in (1, 8, 16, 32, 64)
            or str(et) in ("f16", "bf16", "f32", "f64")
        ):
            raise self.src.error(f"unsupported element type {et}", op)
        return et

    def _new(self, value: ir.Value, name: str, loc) -> Buffer:
        """The buffer of a newly written tensor: its output when returned, else an
        allocation."""
        for k in self.returned.get(value, []):
            if k not in self.outputs:
                return self._output(k, value, loc)
        shape, et = self._shape(value, value.owner)
        b = Buffer(self._unique(name, self.buffer_names), shape, et, "alloc", loc=loc)
        self.allocs.append(b)
        return b

    # --- ops --------------------------------------------------------------------------------
    def _op(self, op):
        name = op.name
        if name in _SKIPPED:
            return
        if name == "tensor.empty":
            return self._made(op.results[0], op.operands, op)
        if name in _SIZE_OPS or name.startswith("arith.") and name != "arith.constant":
            if name == "cf.assert":
                self._assert(op)
            elif any(isinstance(r.type, (ir.RankedTensorType, ir.MemRefType)) for r in op.results):
                raise self.src.error(f"unsupported op '{name}' on tensors outside a linalg op", op)
            return
        if name == "tensor.cast":  # a refinement of the type: the same buffer
            self._cast(op)
            return
        if name == "arith.constant":
            if isinstance(op.results[0].type, ir.RankedTensorType):
                shape, et = self._shape(op.results[0], op)
                data = self.src.elements(op.attributes["value"], op)
                if data.is_splat:  # every element the same: read as that scalar
                    self.buffers[op.results[0]] = Buffer(
                        "splat",
                        shape,
                        et,
                        "splat",
                        splat=data.get_splat_value(),
                        loc=self.src.location(op),
                    )
                    return
                if et == ir.IntegerType.get_signless(1):
                    # TensorIR has no bool constants (T.allocate_const): int8, read as
                    # T.Cast("bool", ...)
                    et = ir.IntegerType.get_signless(8)
                    data = ir.DenseElementsAttr.get(  # pyright: ignore[reportCallIssue]
                        np.array(data).astype(np.int8)  # pyright: ignore[reportArgumentType]
                    )  # (an ndarray has the buffer protocol the stub asks for)
                b = Buffer(
                    self._unique(op.results[0].get_name().lstrip("%"), self.buffer_names),
                    shape,
                    et,
                    "const",
                    data=data,
                    loc=self.src.location(op),
                )
                self.allocs.append(b)
                self.buffers[op.results[0]] = b
            return  # a scalar constant is cloned where it is used
        if name in ("memref.alloc", "memref.alloca"):
            self._made(op.results[0], op.operands, op)
            shape, et = self._shape(op.results[0], op)
            # named after the first block writing it, as the tensor form's buffers are
            b = Buffer("", shape, et, "alloc", loc=self.src.location(op))
            self.allocs.append(b)
            self.buffers[op.results[0]] = b
            return
        if name == "linalg.generic":
            return self._generic(op)
        if name in _RESHAPES:
            return self._reshape(op)
        if name in SLICE_OPS:
            return self._slice(op)
        if name == "memref.copy":
            src, dst = (self._buffer(v, op) for v in op.operands)
            block = self._unique("copy", self.block_names)
            if not dst.name:
                dst.name = self._unique(block, self.buffer_names)
            self.steps.append(Copy(src, dst, block, None, self.src.location(op)))
            return
        what = "linalg op" if name.startswith("linalg.") else "op"
        raise self.src.error(
            f"unsupported {what} '{name}' (linalg import takes linalg "
            f"structured ops, tensor.empty/expand_shape/collapse_shape/pad/"
            f"extract_slice/insert_slice/concat, arith.constant and "
            f"memref.alloc/copy)",
            op,
        )

    def _buffer(self, v: ir.Value, op) -> Buffer:
        b = self.buffers.get(v)
        if b is None:
            self._shape(v, op)
            owner = v.owner
            what = owner.name if not isinstance(owner, ir.Block) else "a block argument"
            raise self.src.error(f"cannot import a tensor made by '{what}'", op)
        return b

    def _reshape(self, op):
        src = op.operands[0]
        if op.name == "tensor.pad":
            body = op.regions[0].blocks[0]
            if len(op.operands) != 1:
                raise self.src.error("tensor.pad with dynamic padding is not supported", op)
            yielded = list(body.operations)[-1].operands[0]
            if (
                len(list(body.operations)) != 1
                or isinstance(yielded.owner, ir.Block)
                or yielded.owner.name != "arith.constant"
            ):
                raise self.src.error("tensor.pad must yield a constant", op)
        kind = op.name.removeprefix("tensor.")
        self.shapes[op.results[0]] = self._reshaped(op)
        if self._constant_reshape(op, kind):
            return
        name = self._unique(kind, self.block_names)
        dst = self._new(op.results[0], name, self.src.location(op))
        self.steps.append(Copy(self._buffer(src, op), dst, name, op, self.src.location(op)))
        self.buffers[op.results[0]] = dst

    def _constant_reshape(self, op, kind: str) -> bool:
        """An expand/collapse_shape of a constant is a constant: no block."""
        src = self.buffers.get(op.operands[0])
        shape = self.shapes[op.results[0]]
        if (
            op.name == "tensor.pad"
            or src is None
            or src.kind not in ("const", "splat")
            or any(is_dynamic(n) for n in shape)
        ):
            return False
        b = Buffer(kind, shape, src.element_type, src.kind, splat=src.splat, loc=src.loc)
        if src.kind == "const":
            b.name = self._unique(f"{src.name}_{kind}", self.buffer_names)
            b.data = _reshaped_data(src.data, shape)
            self.allocs.append(b)
        self.buffers[op.results[0]] = b
        return True

    def _reshaped(self, op) -> tuple:
        """The Sizes of a reshape's or a pad's result. A dynamic dimension of a reshape must
        be the outermost of its group (`?x4x8 -> ?x32`): the copy's indices are then affine
        (`A[i // 4, i % 4, j]`); an inner one would index by a product of sizes."""
        src, _ = self._shape(op.operands[0], op)
        if op.name == "tensor.pad":
            low, high = (
                list(ir.DenseI64ArrayAttr(op.attributes[a])) for a in ("static_low", "static_high")
            )
            if any(is_dynamic(n) and (lo or hi) for n, lo, hi in zip(src, low, high)):
                raise self.src.error("tensor.pad of a dynamic dimension is not supported", op)
            return tuple(n + lo + hi for n, lo, hi in zip(src, low, high))
        groups = [
            [ir.IntegerAttr(x).value for x in ir.ArrayAttr(g)]
            for g in ir.ArrayAttr(op.attributes["reassociation"])
        ]
        if op.name == "tensor.expand_shape":
            out = list(ir.DenseI64ArrayAttr(op.attributes["static_output_shape"]))
            dynamic = iter(list(op.operands)[1:])
            out = [
                self.sizes.of_value(next(dynamic), self._dims)
                if ir.ShapedType.is_dynamic_size(n)
                else n
                for n in out
            ]
            grouped = out
        else:
            out = []
            for g in groups:
                size = 1
                for j in g:
                    size = src[j] * size if is_dynamic(src[j]) else size * src[j]
                out.append(size)
            grouped = src
        if any(is_dynamic(grouped[j]) for g in groups for j in g[1:]):
            raise self.src.error(
                f"'{op.name}' with a dynamic dimension that is not the "
                f"outermost of its group is not supported",
                op,
            )
        return tuple(out)

    def _cast(self, op):
        """`tensor.cast`: the same tensor, its type refined or relaxed; its sizes are the
        source's (a static size the cast states is not checked)."""
        src = op.operands[0]
        self.shapes[op.results[0]] = self._shape(src, op)[0]
        if src in self.buffers:
            self.buffers[op.results[0]] = self.buffers[src]
        # one buffer, two values: neither is written in place (the other may be read later)
        self.shared |= {src, op.results[0]}

    def _assert(self, op):
        """torch-mlir's `cf.assert` of two sizes being equal (`arith.cmpi eq`) makes them one
        size var; other asserts are left out."""
        cond = op.operands[0].owner
        if (
            isinstance(cond, ir.Block)
            or cond.name != "arith.cmpi"
            or ir.IntegerAttr(cond.attributes["predicate"]).value != 0
        ):
            return
        try:
            a, b = (self.sizes.of_value(x, self._dims) for x in cond.operands)
        except SizeError:
            return  # not sizes
        self.sizes.unify(a, b)

    def _slice(self, op):
        if not is_static(op):
            raise self.src.error(
                f"'{op.name}' with dynamic offsets, sizes or strides is not supported", op
            )
        result = op.results[0]
        if op.name == "tensor.concat":
            shapes = [self._shape(v, op)[0] for v in op.operands]
            dim = ir.IntegerAttr(op.attributes["dim"]).value
            if any(is_dynamic(s[dim]) for s in shapes[:-1]):
                raise self.src.error(
                    "tensor.concat after an input of dynamic size along the "
                    "concatenated dimension is not supported",
                    op,
                )
            total = sum(s[dim] for s in shapes[:-1]) + shapes[-1][dim]
            self.shapes[result] = tuple(total if k == dim else n for k, n in enumerate(shapes[0]))
        elif op.name == "tensor.insert_slice":
            self.shapes[result] = self._shape(op.operands[1], op)[0]
        kind = op.name.removeprefix("tensor.")
        name = self._unique(kind, self.block_names)
        if op.name == "tensor.insert_slice":  # the destination's contents, then the slice
            dst, copies = self._destination(op.operands[1], result, name, self.src.location(op))
            self.steps += copies
            parts = [op.operands[0]]
        else:
            dst = self._new(result, name, self.src.location(op))
            parts = [op.operands[0]] if op.name == "tensor.extract_slice" else list(op.operands)
        for k, v in enumerate(parts):
            self.steps.append(
                Copy(
                    self._buffer(v, op),
                    dst,
                    name if k == 0 else self._unique(kind, self.block_names),
                    op,
                    self.src.location(op),
                    k,
                )
            )
        self.buffers[result] = dst

    def _destination(self, v: ir.Value, result: ir.Value, name: str, loc) -> tuple:
        """(buffer, copies) for `result`, which starts as `v`'s contents and is updated: `v`'s
        own buffer when nothing else uses `v` (the output if `result` is returned), else a new
        buffer and a copy of `v` first."""
        if self._exclusive(v, None):
            out = self.buffers.get(v) or self._new(result, name, loc)
            for k in self.returned.get(result, []):
                if out.kind == "alloc" and k not in self.outputs:
                    out.kind, out.index = "output", k  # written in place: the output
                    self.allocs.remove(out)
                    self.buffer_names.discard(out.name)
                    out.name = self._unique(
                        f"out{k}" if self.n_results > 1 else "out", self.buffer_names
                    )
                    self.outputs[k] = out
            return out, []
        out = self._new(result, name, loc)
        if v not in self.buffers:  # an empty tensor: nothing to copy
            return out, []
        return out, [Copy(self.buffers[v], out, self._unique("copy", self.block_names), None, loc)]

    # --- linalg.generic ---------------------------------------------------------------------
    def _generic(self, op):
        n_in = n_inputs(op)
        operands = list(op.operands)
        kind = self.kinds.get(op, "generic")
        self._unify_loops(op)
        for v, result in zip(operands[n_in:], op.results):
            self.shapes[result] = self._shape(v, op)[0]
        if op in self.folded_ops:
            return  # it is the T.init of the reduction using it
        if self._constant_transpose(op, kind) or self._constant_elementwise(op, kind):
            return
        dead = dead_outputs(op, self.returned)
        name = self._unique(block_name(op, kind, dead), self.block_names)
        body = op.regions[0].blocks[0]
        # an input the body never reads (a pooling window: only its shape counts) needs none
        bufs = [
            self._buffer(v, op)
            if isinstance(v.type, (ir.RankedTensorType, ir.MemRefType))
            and has_uses(body.arguments[j])
            else None
            for j, v in enumerate(operands[:n_in])
        ]
        step = Compute(op, kind, name, bufs)
        copies = []
        for i, v in enumerate(operands[n_in:]):
            # the init's contents are needed when the body reads them, or where it writes
            # no element (they are the result's there)
            reads = has_uses(body.arguments[n_in + i]) or not writes_all(op, n_in + i)
            if not op.results:  # memrefs: written in place
                buf = self._buffer(v, op)
                bufs.append(buf)
                if not buf.name:
                    buf.name = self._unique(name, self.buffer_names)
                producer = self.folded.get((op, v))
                if producer is not None:
                    step.inits[i] = (producer, [None])  # a fill: its scalar
                continue
            result = op.results[i]
            if i in dead:
                bufs.append(None)  # not computed
                continue
            if v in self.folded:
                producer = self.folded[v]
                pbody = producer.regions[0].blocks[0]
                step.inits[i] = (
                    producer,
                    [
                        self._buffer(x, producer)
                        if isinstance(x.type, ir.RankedTensorType) and has_uses(pbody.arguments[j])
                        else None
                        for j, x in enumerate(producer.operands[:-1])
                    ],
                )
                out = self._new(result, name, self.src.location(op))
            elif reads:
                out, first = self._destination(v, result, name, self.src.location(op))
                copies += first
            else:
                out = self._new(result, name, self.src.location(op))
            bufs.append(out)
            self.buffers[result] = out
        self.steps += copies + [step]

    def _constant_transpose(self, op, kind: str) -> bool:
        """A transpose of a constant is a constant (consts.py): no block."""
        src = self.buffers.get(op.operands[0]) if len(op.operands) == 2 else None
        if src is None or src.kind not in ("const", "splat") or not op.results:
            return False
        axes = transpose_axes(op)
        if axes is None:
            return False
        shape, et = self._shape(op.results[0], op)
        if src.kind == "splat":
            self.buffers[op.results[0]] = Buffer(
                "splat", shape, et, "splat", splat=src.splat, loc=src.loc
            )
            return True
        data = transposed(src.data, axes)
        if data is None:
            return False
        b = Buffer(
            self._unique(f"{src.name}_t", self.buffer_names),
            shape,
            et,
            "const",
            data=data,
            loc=self.src.location(op),
        )
        self.allocs.append(b)
        self.buffers[op.results[0]] = b
        return True

    def _constant_elementwise(self, op, kind: str) -> bool:
        """An elementwise op on constants is a constant (const_eval.py): no block."""
        body = op.regions[0].blocks[0]
        inputs, tensors = [], 0
        for j, v in enumerate(list(op.operands)[: n_inputs(op)]):
            if not has_uses(body.arguments[j]):
                inputs.append(None)
            elif not isinstance(v.type, ir.ShapedType):
                inputs.append(const_value(v))
            else:
                tensors += 1
                b = self.buffers.get(v)
                if b is None or b.kind not in ("const", "splat"):
                    return False
                dtype = float_dtype(b.element_type)
                if dtype is None:
                    return False
                inputs.append(
                    dtype.type(ir.FloatAttr(b.splat).value)
                    if b.kind == "splat"
                    else np.array(b.data)  # pyright: ignore[reportArgumentType]
                )
        # a broadcast stays a block: its constant would be larger than its inputs
        largest = max((np.size(x) for x in inputs if x is not None), default=0)
        size = math.prod(ir.ShapedType(op.results[0].type).shape)
        if not tensors or size > largest:
            return False
        values = evaluate(op, inputs)
        if values is None:
            return False
        shape, et = self._shape(op.results[0], op)
        b = Buffer(
            self._unique(block_name(op, kind), self.buffer_names),
            shape,
            et,
            "const",
            data=ir.DenseElementsAttr.get(  # pyright: ignore[reportCallIssue]
                values,  # pyright: ignore[reportArgumentType]
                type=et,
            ),
            loc=self.src.location(op),
        )
        self.allocs.append(b)
        self.buffers[op.results[0]] = b
        return True

    def _drop_unread_constants(self):
        """Constants only a folded transpose read are not emitted."""
        used = set(self.outputs.values())
        for step in self.steps:
            if isinstance(step, Copy):
                used |= {step.src, step.dst}
            else:
                used |= set(step.operands)
                for _, inputs in step.inits.values():
                    used |= set(inputs)
        self.allocs = [b for b in self.allocs if b.kind != "const" or b in used]

    def _unify_loops(self, op):
        """The sizes one loop of `op` iterates are one size (linalg requires them equal)."""
        per_dim: dict = {}
        for v, m in zip(op.operands, indexing_maps(op)):
            if not isinstance(v.type, (ir.RankedTensorType, ir.MemRefType)):
                continue
            shape, _ = self._shape(v, op)
            for size, e in zip(shape, m.results):
                e = e.maybe_downcast()
                if isinstance(e, ir.AffineDimExpr):
                    per_dim.setdefault(e.position, []).append(size)
        for sizes in per_dim.values():
            for size in sizes[1:]:
                self.sizes.unify(sizes[0], size)

    def _exclusive(self, v: ir.Value, op) -> bool:
        """v is used once (by the op at hand) and is not an input or a constant (which are
        never written)."""
        b = self.buffers.get(v)
        return (
            len(list(v.uses)) == 1
            and v not in self.shared
            and (b is None or b.kind in ("alloc", "output"))
        )

    # --- an elementwise producer + a reduction -> T.init -----------------------------------


def _identity_layout(t: ir.MemRefType) -> bool:
    layout = t.layout
    if not isinstance(layout, ir.AffineMapAttr):
        return False
    m = layout.value
    return m.n_dims == t.rank and [str(e) for e in m.results] == [f"d{i}" for i in range(t.rank)]


def _reshaped_data(data: ir.DenseElementsAttr, shape: tuple) -> ir.DenseElementsAttr:
    """The constant `data` with the same elements in row-major order, in `shape`."""
    t = ir.ShapedType(data.type)
    return ir.DenseElementsAttr.get(  # pyright: ignore[reportCallIssue]
        np.ascontiguousarray(np.array(data).reshape(shape)),  # pyright: ignore[reportArgumentType]
        type=t.element_type,
    )
