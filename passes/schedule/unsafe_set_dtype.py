"""unsafe_set_dtype: change the dtype of an intermediate buffer a block writes, casting what is
stored into it and what is loaded from it (TVM 0.21's output; "unsafe": values may round):

    B = T.alloc_buffer((8, 8))                  B = T.alloc_buffer((8, 8), "float16")
    B[vi, vj] = A[vi, vj] * T.float32(2)  ==>   B[vi, vj] = T.Cast("float16", A[vi, vj] * T.float32(2))
    C[vi, vj] = B[vi, vj] + T.float32(1)        C[vi, vj] = T.Cast("float32", B[vi, vj]) + T.float32(1)

Legality: `buffer_index` is in range of the block's writes; the buffer is allocated in the
function (not a parameter); old and new dtypes are signed ints or floats, not the pair
float16/bfloat16 (the casts this pass writes). The same dtype changes nothing, on any buffer
(a parameter too, as in TVM).
"""

from mlir import ir
from mlir.dialects import memref

from tir_mlir.dialect.ops import Block
from tir_mlir.dtypes import DTYPES, dtype_of, is_float, mlir_type
from tir_mlir.errors import ScheduleError
from tir_mlir.analysis.structure import erase
from tir_mlir.analysis.buffer_util import accesses, block_writes, buffer_name, func_of, is_func_arg
from tir_mlir.passes.schedule.cache_read_write import pick_buffer

WHO = "unsafe_set_dtype"
_OK = ("int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64")


def unsafe_set_dtype(block: Block, buffer_index: int, dtype: str):
    buf = pick_buffer(block, block_writes(block), buffer_index, WHO, "write")
    while not isinstance(buf.owner, ir.Block) and buf.owner.name == "memref.subview":
        buf = buf.owner.operands[0]  # a T.match_buffer view: its source buffer
    if dtype not in DTYPES:
        raise ScheduleError(f"{WHO}: unknown dtype {dtype!r}")
    old = _dtype(buf)
    if old == dtype:  # checked before the parameter test, as TVM: a no-op on any buffer
        return
    if is_func_arg(buf):
        raise ScheduleError(
            f"{WHO}: buffer {buffer_name(buf)!r} is a function parameter; only "
            f"an intermediate buffer can change its dtype"
        )
    if old not in _OK or dtype not in _OK or {old, dtype} == {"float16", "bfloat16"}:
        raise ScheduleError(f"{WHO}: casting {old} to {dtype} is not supported")

    # --- rewrite: a new allocation, casts around every access ---------------------------------
    alloc = buf.owner
    with ir.InsertionPoint(alloc), alloc.location:
        new = memref.AllocOp(
            ir.MemRefType.get(ir.MemRefType(buf.type).shape, mlir_type(dtype)), [], []
        ).result
    for name in alloc.attributes:
        new.owner.attributes[name] = alloc.attributes[name]
    func = func_of(alloc)
    _retype(func, buf, new, old, dtype)
    erase(alloc)


def _retype(func, buf: ir.Value, new: ir.Value, old: str, dtype: str):
    """Accesses of `buf` go to `new` (of `dtype`) with casts; its T.match_buffer views are
    made again over `new`, and theirs (TVM gives the views the dtype too)."""
    for use in list(buf.uses):
        view = use.owner
        if view.name != "memref.subview" or view.operands[0] != buf:
            continue
        vtype = ir.MemRefType(view.results[0].type)
        ntype = ir.MemRefType.get(
            vtype.shape, mlir_type(dtype), layout=vtype.layout, memory_space=vtype.memory_space
        )
        clone = view.clone(ir.InsertionPoint(view))
        clone.operands[0] = new
        clone.results[0].set_type(ntype)
        _retype(func, view.results[0], clone.results[0], old, dtype)
        erase(view)
    for op, kind, v in accesses(func):
        if v != buf:
            continue
        with ir.InsertionPoint(op), op.location:
            if kind == "store":
                op.operands[0] = _cast(op.operands[0], old, dtype)
                op.operands[1] = new
            else:
                load = memref.LoadOp(new, list(op.operands)[1:]).result
                op.results[0].replace_all_uses_with(_cast(load, dtype, old))
                erase(op)


def _dtype(buf: ir.Value) -> str:
    """The buffer's TensorIR dtype (unsigned ones carry it in `tir.dtype`)."""
    if is_func_arg(buf):
        func = ir.BlockArgument(buf).owner.owner
        attrs = ir.DictAttr(
            ir.ArrayAttr(func.attributes["arg_attrs"])[ir.BlockArgument(buf).arg_number]
        )
    else:
        attrs = buf.owner.attributes
    if "tir.dtype" in attrs:
        return ir.StringAttr(attrs["tir.dtype"]).value
    return dtype_of(ir.MemRefType(buf.type).element_type)


def _cast(v: ir.Value, src: str, dst: str) -> ir.Value:
    """T.Cast(dst, v) for signed ints and floats, as the front end builds it."""
    from mlir.dialects import arith

    t = mlir_type(dst)
    if is_float(src) and is_float(dst):
        wider = int(dst.lstrip("bfloat")) > int(src.lstrip("bfloat"))
        return (arith.ExtFOp if wider else arith.TruncFOp)(t, v).result
    if is_float(dst):
        return arith.SIToFPOp(t, v).result
    if is_float(src):
        return arith.FPToSIOp(t, v).result
    wider = int(dst[3:]) > int(src[3:])
    return (arith.ExtSIOp if wider else arith.TruncIOp)(t, v).result
