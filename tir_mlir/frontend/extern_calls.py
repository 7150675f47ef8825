"""Calls to C functions and the buffer pointers they take, as TVM writes them:

    T.call_extern("int32", "gemv_update", C.access_ptr("w"), A.data, T.address_of(B[i, 0]), 16)
    T.tvm_access_ptr(T.type_annotation("float32"), C.data, C.elem_offset, 16, 2)

Each is a `tir.extern` op (its arguments are of mixed types) whose callee names it (the printer writes them back the same way, the
lowering turns them into a declared function and pointer arithmetic: passes/lowering/
extern_calls.py):

- `call_extern` {symbol}: the C function `symbol`, its result typed by the first argument
  ("void": a unit `void` attribute, a placeholder int32 result, no result when lowered);
- `buffer_data`(B): `B.data`, the buffer's base pointer (dtype "handle", `!llvm.ptr`);
- `elem_offset`(B, i, j...): the linear element offset of `B[i, j]` from `B.data` (`B.elem_offset`
  is the offset of `B[0, ..., 0]`); an op over the buffer and indices rather than arithmetic on
  strides, so tensorize rebinds it like a load (the offset of a region of the target buffer);
- `address_of`(B, i, j...): `T.address_of(B[i, j])`;
- `tvm_access_ptr`(data, offset, extent, rw_mask) {tir.ptr_dtype}: `data + offset` elements;
- `buffer_stride`(B) {dim}: `B.strides[dim]` (int32);
- `call_llvm_intrin` {symbol, num_args, pure?}: `T.call_llvm_(pure_)intrin(dtype, "llvm.x", n,
  ...)`, the LLVM intrinsic `symbol` (an `llvm.call_intrinsic` when lowered);
- `call_packed` {symbol}: `T.call_packed("name", A, n, ...)`, the function registered as `name`
  (`tir_mlir.register_func`), called with buffers (the memrefs themselves: regions read and
  write them whole) and scalars; int32 result.
- `builtin` {symbol}: one of TVM's GPU builtins (`T.tvm_mma_sync(...)`), never lowered here.
"""

from typing import Dict

from mlir import ir

from tir_mlir.dialect.ops import extern_op
from tir_mlir.frontend.expr_host import ExprHost
from tir_mlir.frontend import ast as A
from tir_mlir.frontend.values import Buffer, Lit, Val

POINTER = "handle"
# B.access_ptr(mask) / T.tvm_access_ptr's rw_mask: TVM's read (1) and write (2) bits.
ACCESS_MASK = {"r": 1, "w": 2, "rw": 3}


class BufferStrides:
    """`B.strides` before it is indexed."""

    def __init__(self, buf: Buffer):
        self.buf = buf


class StackShape:
    """`T.tvm_stack_make_shape(4, 3)` before `T.tvm_stack_make_array` takes it."""

    def __init__(self, dims):
        self.dims = dims


class WholeBuffer:
    """`T.tvm_stack_make_array(B.data, <B's shape>, 0, <B's rank>, <B's dtype>, 0)`, TVM's
    printing of a buffer handed to `T.call_packed`: the buffer itself (its memref)."""

    def __init__(self, value: ir.Value):
        self.value = value


class ExternCalls(ExprHost):
    """Mixin of ExprBuilder: the T. functions and buffer attributes above."""

    def extern(self, callee, args, dtype, pos, attrs=None) -> Val:
        from tir_mlir.frontend.exprs import mtype

        if dtype.startswith("uint"):  # signless in MLIR: the op says its dtype (as arith ops do)
            attrs = {**(attrs or {}), "tir.dtype": ir.StringAttr.get(dtype)}
        return Val(extern_op(callee, args, mtype(dtype), attrs, self.loc(pos)), dtype)

    def _ptr_op(self, callee, operands, pos, attrs=None) -> Val:
        return self.extern(callee, operands, POINTER, pos, attrs)

    def _zero_indices(self, buf, pos):
        return [self.constant(0, "index", pos) for _ in buf.shape]

    def buffer_attr(self, buf: Buffer, attr: str, pos):
        """`B.data`, `B.elem_offset`, `B.strides` (indexed next)."""
        if attr == "data":
            return self._ptr_op("buffer_data", [buf.value], pos)
        if attr == "elem_offset":
            return self.extern(
                "elem_offset", [buf.value] + self._zero_indices(buf, pos), "index", pos
            )
        if attr == "strides":
            return BufferStrides(buf)
        self.fail(
            f"buffer {buf.name!r} has no attribute {attr!r} here (expected data, "
            f"elem_offset, strides or access_ptr(...))",
            pos,
        )

    def stride(self, strides: BufferStrides, indices, pos) -> Val:
        buf = strides.buf
        if (
            len(indices) != 1
            or not isinstance(indices[0], Lit)
            or not isinstance(indices[0].value, int)
            or not 0 <= indices[0].value < len(buf.shape)
        ):
            self.fail(f"{buf.name}.strides takes one constant index below {len(buf.shape)}", pos)
        dim = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), indices[0].value)
        return self.extern("buffer_stride", [buf.value], "int32", pos, {"dim": dim})

    def _extern_args(self, name, args, pos):
        out = []
        for a in args:
            if isinstance(a, (Val, Lit)):
                out.append(self.materialize(a, pos).value)
            else:
                from tir_mlir.frontend.exprs import describe

                self.fail(
                    f"T.{name}: an argument must be a value or a pointer, found {describe(a)}", pos
                )
        return out

    def _call_extern(self, name, args, kwargs, pos):
        from tir_mlir.frontend.exprs import check_dtype

        for k, (_, kpos) in kwargs.items():
            self.fail(f"T.{name} got an unexpected keyword argument {k!r}", kpos)
        if len(args) < 2 or not isinstance(args[1], str):
            self.fail(
                f"T.{name} takes a dtype, the function's name and its arguments: "
                f'T.{name}("int32", "f", ...)',
                pos,
            )
        void = args[0] in ("void", "")  # TVM's T.call_extern("void", ...): a statement
        if void:
            dtype = "int32"
        elif args[0] == POINTER:  # a C function returning a pointer (TVM writes "handle")
            dtype = POINTER
        else:
            dtype = check_dtype(args[0], pos, self.fail)
        operands = self._extern_args(name, args[2:], pos)
        attrs: Dict[str, ir.Attribute] = {"symbol": ir.StringAttr.get(args[1])}
        if void:  # its placeholder int32 result is never used
            attrs["void"] = ir.UnitAttr.get()
        if name == "call_pure_extern":
            attrs["pure"] = ir.UnitAttr.get()
        return self.extern("call_extern", operands, dtype, pos, attrs)

    def _call_llvm_intrin(self, name, args, kwargs, pos):
        """`T.call_llvm_pure_intrin("int32x16", "llvm.x86.avx512.vpdpbusd.512", T.uint32(3),
        c, a, b)`: the LLVM intrinsic of that name. TVM's third argument is the count of the
        arguments that follow (kept as `num_args`, printed back as written)."""
        for k, (_, kpos) in kwargs.items():
            self.fail(f"T.{name} got an unexpected keyword argument {k!r}", kpos)
        count = args[2] if len(args) > 2 else None
        if (
            len(args) < 3
            or not isinstance(args[1], str)
            or not isinstance(count, Lit)
            or type(count.value) is not int
        ):
            self.fail(
                f"T.{name} takes a dtype, the intrinsic's name, the number of its arguments and "
                f'the arguments: T.{name}("int32x4", "llvm.name", T.uint32(2), a, b)',
                pos,
            )
        if not args[1].startswith("llvm."):
            self.fail(f"T.{name}: {args[1]!r} is not an LLVM intrinsic name (llvm.*)", pos)
        dtype = self.dtype_arg(args[0], pos)
        operands = self._extern_args(name, args[3:], pos)
        i64 = ir.IntegerType.get_signless(64)
        attrs = {
            "symbol": ir.StringAttr.get(args[1]),
            "num_args": ir.IntegerAttr.get(i64, count.value),
        }
        if name == "call_llvm_pure_intrin":
            attrs["pure"] = ir.UnitAttr.get()
        return self.extern("call_llvm_intrin", operands, dtype, pos, attrs)

    def _call_packed(self, name, args, kwargs, pos):
        for k, (_, kpos) in kwargs.items():
            self.fail(f"T.{name} got an unexpected keyword argument {k!r}", kpos)
        if not args or not isinstance(args[0], str):
            self.fail(
                "T.call_packed takes the registered function's name and its arguments: "
                'T.call_packed("my.func", A, n)',
                pos,
            )
        operands = [
            a.value
            if isinstance(a, (Buffer, WholeBuffer))
            else self._extern_args(name, [a], pos)[0]
            for a in args[1:]
        ]
        return self.extern(
            "call_packed", operands, "int32", pos, {"symbol": ir.StringAttr.get(args[0])}
        )

    def _call_stack_make_shape(self, name, args, kwargs, pos):
        self._arity(name, args, len(args), pos, kwargs)
        return StackShape(args)

    def _call_stack_make_array(self, name, args, kwargs, pos):
        """Only the form TVM prints for a whole buffer (see WholeBuffer)."""
        from tir_mlir.dialect.ops import extern_args, extern_callee
        from tir_mlir.dtypes import dtype_of

        self._arity(name, args, 6, pos, kwargs)
        data, shape, strides, ndim, dtype, offset = args
        owner = data.value.owner if isinstance(data, Val) else None
        buf = (
            extern_args(owner)[0]
            if owner is not None and extern_callee(owner) == "buffer_data"
            else None
        )
        mtype = ir.MemRefType(buf.type) if buf is not None else None

        def lit(x, value):
            return isinstance(x, Lit) and x.value == value

        if (
            owner is None
            or buf is None
            or mtype is None
            or not isinstance(shape, StackShape)
            or not all(lit(d, n) for d, n in zip(shape.dims, mtype.shape))
            or len(shape.dims) != len(mtype.shape)
            or not lit(strides, 0)
            or not lit(ndim, len(mtype.shape))
            or not lit(offset, 0)
            or not isinstance(dtype, Lit)
            or dtype.dtype != dtype_of(mtype.element_type)
        ):
            self.fail(
                "T.tvm_stack_make_array is supported as TVM prints a whole buffer: "
                "(B.data, T.tvm_stack_make_shape(<B's shape>), 0, <B's rank>, "
                "<a value of B's dtype>, 0)",
                pos,
            )
        owner.erase()  # the B.data op: the packed call takes the buffer itself
        return WholeBuffer(buf)

    def _call_builtin(self, name, args, kwargs, pos):
        """`T.tvm_fill_fragment(C.data, ..., dtype="handle")`: a `builtin` {symbol} call. A
        string argument (`"row_major"` of T.tvm_load_matrix_sync) is no operand: the
        `strings` attribute keeps it with its position."""
        from tir_mlir.frontend.exprs import check_dtype

        dtype = POINTER
        for k, (v, kpos) in kwargs.items():
            if k != "dtype":
                self.fail(f"T.{name} got an unexpected keyword argument {k!r}", kpos)
            dtype = check_dtype(v, kpos, self.fail)
        strings = {str(n): ir.StringAttr.get(a) for n, a in enumerate(args) if isinstance(a, str)}
        operands = self._extern_args(name, [a for a in args if not isinstance(a, str)], pos)
        attrs: Dict[str, ir.Attribute] = {"symbol": ir.StringAttr.get(name)}
        if strings:
            attrs["strings"] = ir.DictAttr.get(strings)
        return self.extern("builtin", operands, dtype, pos, attrs)

    def _call_type_annotation(self, name, args, kwargs, pos):
        from tir_mlir.frontend.exprs import check_dtype

        if not args and "dtype" in kwargs:  # T.type_annotation(dtype="float16")
            args, kwargs = [kwargs["dtype"][0]], {}
        self._arity(name, args, 1, pos, kwargs)
        return ("dtype", check_dtype(args[0], pos, self.fail))

    def _call_access_ptr(self, name, args, kwargs, pos):
        from tir_mlir.frontend.exprs import check_dtype

        if kwargs.get("dtype", (POINTER,))[0] == POINTER:  # the call's own dtype: a pointer
            kwargs = {k: v for k, v in kwargs.items() if k != "dtype"}
        self._arity(name, args, 5, pos, kwargs)
        dtype = check_dtype(args[0], pos, self.fail)
        data = args[1]
        if not isinstance(data, Val) or data.dtype != POINTER:
            self.fail("T.tvm_access_ptr's second argument must be a pointer (B.data)", pos)
        offset, extent, mask = (self.index(a, pos) for a in args[2:])
        return self._ptr_op(
            "tvm_access_ptr",
            [data.value, offset, extent, mask],
            pos,
            {"tir.ptr_dtype": ir.StringAttr.get(dtype)},
        )

    def buffer_access_ptr(self, buf: Buffer, args, kwargs, pos) -> Val:
        """`B.access_ptr("rw", offset=0, extent=None)`: TVM's Buffer.access_ptr."""
        for k, (_, kpos) in kwargs.items():
            if k not in ("access_mask", "offset", "extent", "ptr_type", "content_lanes"):
                self.fail(f"access_ptr got an unexpected keyword argument {k!r}", kpos)
        mask = args[0] if args else kwargs.get("access_mask", (None,))[0]
        if isinstance(mask, str) and mask in ACCESS_MASK:
            mask = Lit(ACCESS_MASK[mask])
        if not isinstance(mask, Lit) or not isinstance(mask.value, int):
            self.fail('access_ptr takes an access mask: "r", "w", "rw" or 1, 2, 3', pos)
        offset = self.extern(
            "elem_offset", [buf.value] + self._zero_indices(buf, pos), "index", pos
        ).value
        if "offset" in kwargs:
            extra = self.index(kwargs["offset"][0], pos)
            offset = self.op("arith.addi", [offset, extra], "index", pos)
        numel = 1
        for d in buf.shape:
            numel *= d
        extent = (
            self.index(kwargs["extent"][0], pos)
            if "extent" in kwargs
            else self.constant(numel, "index", pos)
        )
        data = self._ptr_op("buffer_data", [buf.value], pos)
        return self._ptr_op(
            "tvm_access_ptr",
            [data.value, offset, extent, self.constant(mask.value, "index", pos)],
            pos,
            {"tir.ptr_dtype": ir.StringAttr.get(buf.dtype)},
        )

    def _lazy_address_of(self, node):
        pos = node.pos
        self._arity("address_of", node.args, 1, pos, {k: (v, p) for k, v, p in node.kwargs})
        target = node.args[0]
        buf = self.eval(target.value) if isinstance(target, A.Subscript) else None
        if not isinstance(buf, Buffer):
            self.fail("T.address_of takes a buffer element: T.address_of(B[i, j])", pos)
        idx = self.indices(buf, [self.eval(i) for i in target.indices], target)
        return self._ptr_op("address_of", [buf.value, *idx], pos)
