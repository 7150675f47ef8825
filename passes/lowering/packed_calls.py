"""`T.call_packed("name", A, n, x)`: a call into the function registered as `name`
(`tir_mlir.register_func`, runtime/packed.py), as TVM's packed calls reach its global registry.

Two steps. `extern-calls` (tir level) makes each call a call of a private declaration, one per
call site, whose attribute describes the site (`name|B:float32|int32|float32`: a buffer's dtype,
a scalar's); the intermediate stages skip declarations, so nothing else sees it:

    T.call_packed("f", A, n)      ->  %p = A's first element; %s0, %s1, %t0, %t1 = its sizes, strides
                                      %r = func.call @tir_mlir_packed_0(%p, %s0, %s1, %t0, %t1, %n)
                                      func.func private @tir_mlir_packed_0(!llvm.ptr, index, ...)
                                          attributes {tir.packed_site = "f|B:float32:2|int32"}

`packed-calls` (scf level, before the llvm conversion) gives each declaration its body:

    slots = alloca i64[...]        // per buffer: the address of its first element, then its
                                   //   shape and strides in elements; per scalar: its bits
    return tir_mlir_packed_callback(description, slots)    // a function pointer global

The runtime stores its dispatcher in `tir_mlir_packed_callback` when it loads the code (through
the `..._address` function, as for alloc-check's status), and the dispatcher reads the site's
description (a constant string) to view the slots as numpy arrays and Python numbers.
"""

from mlir import ir
from mlir.dialects import arith, func, memref

from tir_mlir.dtypes import dtype_of

CALLBACK = "tir_mlir_packed_callback"
ADDRESS = "_address"  # `CALLBACK + ADDRESS`: the function returning its address
SITE_ATTR = "tir.packed_site"
PREFIX = "tir_mlir_packed_"


def declare_call(op, args, module) -> ir.Value:
    """The call of a new site declaration replacing the `call_packed` op (extern-calls).
    A buffer is passed as the address of its first element, its sizes and its strides, values
    no later stage retypes (bool buffers become bytes, intermediate ones get compacted)."""
    from tir_mlir.passes.lowering.extern_calls import _data, _gep, _metadata

    symbol = ir.StringAttr(op.attributes["symbol"]).value
    parts, operands = [symbol], []
    for a in args:
        if isinstance(a.type, ir.MemRefType):
            mtype = ir.MemRefType(a.type)
            meta = list(_metadata(a).results)
            operands.append(_gep(_data(a), meta[1], mtype.element_type))
            operands += meta[2 : 2 + 2 * len(mtype.shape)]
            parts.append(f"B:{dtype_of(mtype.element_type)}:{len(mtype.shape)}")
        else:
            operands.append(a)
            parts.append(dtype_of(a.type))
    taken = {
        ir.StringAttr(o.operation.attributes["sym_name"]).value
        for o in module.body.operations
        if "sym_name" in o.operation.attributes
    }
    k = 0
    while f"{PREFIX}{k}" in taken:
        k += 1
    name = f"{PREFIX}{k}"
    i32 = ir.IntegerType.get_signless(32)
    with ir.InsertionPoint.at_block_begin(module.body), op.location:
        decl = func.FuncOp(
            name, ir.FunctionType.get([v.type for v in operands], [i32]), visibility="private"
        )
        decl.operation.attributes[SITE_ATTR] = ir.StringAttr.get("|".join(parts))
    return func.CallOp([i32], ir.FlatSymbolRefAttr.get(name), operands).result


class PackedCalls:
    name = "packed-calls"

    def __call__(self, module: ir.Module):
        sites = [
            o.operation
            for o in module.body.operations
            if o.operation.name == "func.func" and SITE_ATTR in o.operation.attributes
        ]
        if not sites:
            return
        with ir.InsertionPoint.at_block_begin(module.body), module.operation.location:
            _callback_global()
        for decl in sites:
            _define(decl, module)


def _callback_global():
    i64 = ir.IntegerType.get_signless(64)
    t = ir.MemRefType.get([], i64)
    memref.GlobalOp(
        CALLBACK,
        t,
        sym_visibility="private",
        initial_value=ir.DenseElementsAttr.get_splat(
            ir.RankedTensorType.get([], i64), ir.IntegerAttr.get(i64, 0)
        ),
    )
    getter = func.FuncOp(CALLBACK + ADDRESS, ir.FunctionType.get([], [i64]))
    with ir.InsertionPoint(getter.add_entry_block()):
        ptr = memref.ExtractAlignedPointerAsIndexOp(memref.GetGlobalOp(t, CALLBACK).result)
        func.ReturnOp([arith.index_cast(i64, ptr.result)])


def _define(decl, module):
    from mlir.dialects import llvm  # (~30 ms to import: only builds with packed calls pay it)

    name = ir.StringAttr(decl.attributes["sym_name"]).value
    types = list(ir.FunctionType(ir.TypeAttr(decl.attributes["function_type"]).value).inputs)
    i64 = ir.IntegerType.get_signless(64)
    ptr = ir.Type.parse("!llvm.ptr")
    with decl.location:
        text_type, text_name = _description_global(
            name, ir.StringAttr(decl.attributes[SITE_ATTR]).value, module
        )
        entry = decl.regions[0].blocks.append(*types)
        with ir.InsertionPoint(entry):
            buf = memref.AllocaOp(ir.MemRefType.get([max(len(types), 1)], i64), [], []).result
            for k, arg in enumerate(entry.arguments):
                v = llvm.ptrtoint(i64, arg) if arg.type == ptr else _bits(arg, i64)
                memref.StoreOp(v, buf, [arith.ConstantOp(ir.IndexType.get(), k).result])
            slot_ptr = llvm.inttoptr(
                ptr, arith.index_cast(i64, memref.ExtractAlignedPointerAsIndexOp(buf).result)
            )
            text = llvm.inttoptr(
                ptr,
                arith.index_cast(
                    i64,
                    memref.ExtractAlignedPointerAsIndexOp(
                        memref.GetGlobalOp(text_type, text_name).result
                    ).result,
                ),
            )
            cell = memref.GetGlobalOp(ir.MemRefType.get([], i64), CALLBACK).result
            callee = llvm.inttoptr(ptr, memref.LoadOp(cell, []).result)
            result = llvm.CallOp(
                ir.IntegerType.get_signless(32), [callee, text, slot_ptr], [], []
            ).result
            func.ReturnOp([result])


def _bits(v: ir.Value, i64) -> ir.Value:
    """A scalar's slot: ints sign-extended (bools zero-extended), floats as a double's bits."""
    t = v.type
    if isinstance(t, ir.IndexType):
        return arith.index_cast(i64, v)
    if isinstance(t, ir.IntegerType):
        if t.width == 64:
            return v
        return arith.extui(i64, v) if t.width == 1 else arith.extsi(i64, v)
    f64 = ir.F64Type.get()
    if not isinstance(t, ir.F64Type):
        v = arith.extf(f64, v)
    return arith.bitcast(i64, v)


def _description_global(name, description, module):
    """The site's description, a NUL-terminated constant global: (its type, its name)."""
    import numpy as np

    i8 = ir.IntegerType.get_signless(8)
    data = description.encode() + b"\0"
    t = ir.MemRefType.get([len(data)], i8)
    with ir.InsertionPoint.at_block_begin(module.body):
        memref.GlobalOp(
            name + "_site",
            t,
            constant=True,
            sym_visibility="private",
            initial_value=ir.DenseElementsAttr.get(  # pyright: ignore[reportCallIssue]
                np.frombuffer(data, "int8"),  # pyright: ignore[reportArgumentType]  (an ndarray has the buffer protocol)
                type=ir.RankedTensorType.get([len(data)], i8),
            ),
        )
    return t, name + "_site"
