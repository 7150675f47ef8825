"""Stage `bool-buffers-to-i8`: bool buffers are stored as one byte per element (numpy's layout;
the LLVM lowering of memref<..xi1> asserts). Loads become `load i8 + trunci`, stores `extui + store`.
"""

from typing import TypeGuard

from mlir import ir
from mlir.dialects import arith, memref

from tir_mlir.passes.lowering.common import functions, walk


def _is_bool_memref(t) -> TypeGuard[ir.MemRefType]:
    return isinstance(t, ir.MemRefType) and str(t.element_type) == "i1"


def _byte_type(t: ir.MemRefType) -> ir.MemRefType:
    return ir.MemRefType.get(t.shape, ir.IntegerType.get_signless(8), layout=t.layout)


class BoolBuffersToI8:
    name = "bool-buffers-to-i8"

    def __call__(self, module: ir.Module):
        i1, i8 = ir.IntegerType.get_signless(1), ir.IntegerType.get_signless(8)
        for f in functions(module):
            entry = f.regions[0].blocks[0]
            for arg in entry.arguments:
                if _is_bool_memref(arg.type):
                    arg.set_type(_byte_type(arg.type))
            ftype = ir.FunctionType(ir.TypeAttr(f.attributes["function_type"]).value)
            f.attributes["function_type"] = ir.TypeAttr.get(
                ir.FunctionType.get([a.type for a in entry.arguments], ftype.results)
            )
            for op in list(walk(f)):
                if op.name in (
                    "memref.alloc",
                    "memref.alloca",
                    "memref.reinterpret_cast",
                ) and _is_bool_memref(op.results[0].type):
                    op.results[0].set_type(_byte_type(op.results[0].type))
                elif op.name == "memref.extract_strided_metadata" and _is_bool_memref(
                    op.results[0].type
                ):  # `B.data` of a bool buffer
                    op.results[0].set_type(_byte_type(op.results[0].type))
            for op in list(walk(f)):
                if op.name == "memref.load" and str(op.results[0].type) == "i1":
                    with ir.InsertionPoint(op), op.location:
                        new = memref.LoadOp(op.operands[0], list(op.operands)[1:])
                        v = arith.trunci(i1, new.result)
                    op.results[0].replace_all_uses_with(v)
                    op.erase()
                elif op.name == "memref.store" and str(op.operands[0].type) == "i1":
                    with ir.InsertionPoint(op), op.location:
                        op.operands[0] = arith.extui(i8, op.operands[0])
