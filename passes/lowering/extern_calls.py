"""Stage `extern-calls` (CPU): `tir.extern` ops (frontend/extern_calls.py) -> upstream ops.

    T.call_extern("int32", "f", p, 16)   ->  func.func private @f(!llvm.ptr, i32) -> i32
                                              %r = func.call @f(%p, %c16)
    B.data                                ->  memref.extract_aligned_pointer_as_index + inttoptr
    elem_offset(B, i, j)                  ->  offset + i * stride0 + j * stride1
                                              (memref.extract_strided_metadata: any layout)
    T.address_of(B[i, j])                 ->  getelementptr B.data[elem_offset(B, i, j)]
    T.tvm_access_ptr(t, data, off, ...)   ->  getelementptr data[off] (elements of t)
    B.strides[k]                          ->  the stride from the metadata, as i32
    T.call_llvm_pure_intrin(t, "llvm.x", n, ...) -> llvm.call_intrinsic "llvm.x", where the
                                              target has it (architecture, CPU feature)

The C function is resolved when the library is linked (`build(..., extern_libs=[...])`). One
symbol called with two different signatures is an error.
"""

from mlir import ir
from mlir.dialects import arith, func, memref, vector

from tir_mlir.dialect.ops import EXTERN, extern_args, extern_callee
from tir_mlir.dtypes import mlir_type
from tir_mlir.passes.lowering.common import build_error, functions, walk
from tir_mlir.passes.lowering.cpu_target import CpuTarget, cpu_target

# The architecture (target triple's first part) of each family of LLVM intrinsics
# (`llvm.<family>.*`); a family not listed is taken to be the target's.
LLVM_INTRINSIC_ARCHS = {
    "x86": ("x86_64", "i386", "i686"),
    "aarch64": ("aarch64",),
    "arm": ("arm", "armv7", "thumbv7"),
    "hexagon": ("hexagon",),
    "amdgcn": ("amdgcn",),
    "nvvm": ("nvptx64", "nvptx"),
}
# The CPU feature each x86 intrinsic of TVM's tensor intrinsics needs (intrinsics/dot_product.py).
LLVM_INTRINSIC_FEATURES = {
    "llvm.x86.avx512.vpdpbusd.512": "avx512vnni",
    "llvm.x86.avx512.pmaddubs.w.512": "avx512bw",
    "llvm.x86.avx512.pmaddw.d.512": "avx512bw",
}
# Operand types of an intrinsic whose LLVM (22) signature differs from the one TVM's impls were
# written for: an operand of the same width is bitcast (vpdpbusd took <16 x i32> before LLVM 19).
LLVM_INTRINSIC_OPERANDS = {
    "llvm.x86.avx512.vpdpbusd.512": ("vector<16xi32>", "vector<64xi8>", "vector<64xi8>"),
}
# GEP's marker for "this index is an operand".
DYNAMIC_INDEX = -2147483648


class ExternCalls:
    name = "extern-calls"

    def __init__(self, target="llvm"):
        self.target = cpu_target(target)

    @classmethod
    def for_target(cls, target):
        return cls(target)

    def __call__(self, module: ir.Module):
        declared = {}
        for op in module.body.operations:
            op = op.operation
            if op.name == "func.func" and not len(op.regions[0].blocks):
                declared[ir.StringAttr(op.attributes["sym_name"]).value] = op
        for f in functions(module):
            for op in [o for o in walk(f) if o.name == EXTERN]:
                with ir.InsertionPoint(op), op.location:
                    result = _expand(op, module, declared, self.target)
                op.results[0].replace_all_uses_with(result)
                op.erase()


def _llvm_intrinsic(op, args, target: CpuTarget) -> ir.Value:
    """`llvm.call_intrinsic`, where the build's target has the intrinsic (LLVM's code
    generator would otherwise stop at it)."""
    name = ir.StringAttr(op.attributes["symbol"]).value
    arch = target.triple.split("-")[0]
    family = name.split(".")[1]
    if arch not in LLVM_INTRINSIC_ARCHS.get(family, (arch,)):
        raise build_error(op, f"{name} is an intrinsic of {family}; this build targets {arch}")
    need = LLVM_INTRINSIC_FEATURES.get(name)
    if need is not None and f"+{need}" not in target.features:
        raise build_error(
            op, f"{name} needs the CPU feature {need}, which target CPU {target.cpu!r} lacks"
        )
    want = LLVM_INTRINSIC_OPERANDS.get(name)
    if want is not None and len(want) == len(args):
        args = [
            a if str(a.type) == w else vector.bitcast(ir.Type.parse(w), a)
            for a, w in zip(args, want)
        ]
    return ir.Operation.create(
        "llvm.call_intrinsic",
        results=[op.results[0].type],
        operands=list(args),
        attributes={
            "intrin": ir.StringAttr.get(name),
            "op_bundle_sizes": ir.DenseI32ArrayAttr.get([]),
            "operandSegmentSizes": ir.DenseI32ArrayAttr.get([len(args), 0]),
        },
    ).result


def _expand(op, module, declared, target: CpuTarget) -> ir.Value:
    callee, args = extern_callee(op), extern_args(op)
    if callee == "call_extern":
        return _call(op, args, module, declared)
    if callee == "call_packed":
        from tir_mlir.passes.lowering.packed_calls import declare_call

        return declare_call(op, args, module)
    if callee == "buffer_data":
        return _data(args[0])
    if callee == "elem_offset":
        return _offset(args[0], args[1:])
    if callee == "address_of":
        return _gep(
            _data(args[0]), _offset(args[0], args[1:]), ir.MemRefType(args[0].type).element_type
        )
    if callee == "tvm_access_ptr":
        dtype = ir.StringAttr(op.attributes["tir.ptr_dtype"]).value
        return _gep(args[0], args[1], mlir_type(dtype))
    if callee == "buffer_stride":
        dim = ir.IntegerAttr(op.attributes["dim"]).value
        stride = _strides(args[0])[dim]
        return arith.index_cast(ir.IntegerType.get_signless(32), stride)
    if callee == "call_llvm_intrin":
        return _llvm_intrinsic(op, args, target)
    if callee == "builtin":
        symbol = ir.StringAttr(op.attributes["symbol"]).value
        raise build_error(op, f"cannot lower T.{symbol}: a TVM builtin for GPUs")
    raise build_error(op, f"cannot lower T.{callee}")


def _metadata(buf):
    mtype = ir.MemRefType(buf.type)
    rank = len(mtype.shape)
    index = ir.IndexType.get()
    base = ir.MemRefType.get([], mtype.element_type, memory_space=mtype.memory_space)
    return memref.ExtractStridedMetadataOp(buf, results=[base] + [index] * (1 + 2 * rank))


def _strides(buf):
    rank = len(ir.MemRefType(buf.type).shape)
    return list(_metadata(buf).results)[2 + rank :]


def _offset(buf, indices) -> ir.Value:
    meta = list(_metadata(buf).results)
    rank = len(indices)
    total = meta[1]
    for i, s in zip(indices, meta[2 + rank :]):
        total = arith.addi(total, arith.muli(i, s))
    return total


def _data(buf) -> ir.Value:
    from mlir.dialects import llvm  # (~30 ms to import: only builds that call C pay it)

    address = memref.extract_aligned_pointer_as_index(buf)
    i64 = ir.IntegerType.get_signless(64)
    return llvm.inttoptr(ir.Type.parse("!llvm.ptr"), arith.index_cast(i64, address))


def _gep(base, offset, elem_type) -> ir.Value:
    from mlir.dialects import llvm

    if isinstance(elem_type, ir.IntegerType) and elem_type.width == 1:
        elem_type = ir.IntegerType.get_signless(8)  # bool buffers are stored as bytes
    i64 = ir.IntegerType.get_signless(64)
    off = arith.index_cast(i64, offset) if isinstance(offset.type, ir.IndexType) else offset
    return llvm.GEPOp(
        ir.Type.parse("!llvm.ptr"), base, [off], [DYNAMIC_INDEX], ir.TypeAttr.get(elem_type), None
    ).result


def _call(op, args, module, declared) -> ir.Value:
    symbol = ir.StringAttr(op.attributes["symbol"]).value
    args = [
        arith.index_cast(ir.IntegerType.get_signless(32), a)
        if isinstance(a.type, ir.IndexType)
        else a
        for a in args
    ]
    results = [] if "void" in op.attributes else [op.results[0].type]
    ftype = ir.FunctionType.get([a.type for a in args], results)
    decl = declared.get(symbol)
    if decl is None:
        if symbol in {ir.StringAttr(f.attributes["sym_name"]).value for f in functions(module)}:
            raise build_error(op, f"T.call_extern: {symbol!r} is a function of this module")
        with ir.InsertionPoint.at_block_begin(module.body), op.location:
            decl = func.FuncOp(symbol, ftype, visibility="private").operation
        declared[symbol] = decl
    elif str(ir.TypeAttr(decl.attributes["function_type"]).value) != str(ftype):
        raise build_error(
            op,
            f"T.call_extern: {symbol!r} is called with arguments "
            f"{ftype} here and {ir.TypeAttr(decl.attributes['function_type']).value} "
            f"elsewhere",
        )
    call = func.CallOp(results, ir.FlatSymbolRefAttr.get(symbol), args)
    if not results:  # the placeholder result of a void call is never used
        return arith.constant(op.results[0].type, 0)
    return call.result
