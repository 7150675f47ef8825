"""Printing the calls to C functions and buffer pointers of frontend/extern_calls.py as TVM
prints them: `T.call_extern("int32", "f", ...)`, `T.call_llvm_pure_intrin("int32x4", "llvm.f",
T.uint32(2), a, b)`, `T.call_packed("name", A, n)`, `C.data`, `C.elem_offset` (the offset of a
region, `i * 512 + j * 16`, after tensorize), `T.tvm_access_ptr(T.type_annotation("float32"),
...)`, `T.address_of(B[i, j])`, `B.strides[0]`."""

from mlir import ir

from tir_mlir.dialect.ops import extern_args, extern_callee
from tir_mlir.printer.affine_text import affine_text
from tir_mlir.printer.precedence import ADD, ATOM, MUL, wrap


def is_extern_call(v: ir.Value) -> bool:
    """A call TVM prints as a bare statement (no T.evaluate around it)."""
    return not isinstance(v.owner, ir.Block) and extern_callee(v.owner) in (
        "call_extern",
        "call_packed",
        "builtin",
        "tvm_access_ptr",
    )


def _is_zero(v: ir.Value) -> bool:
    o = v.owner
    return (
        not isinstance(o, ir.Block)
        and o.name == "arith.constant"
        and ir.IntegerAttr(o.attributes["value"]).value == 0
    )


def row_major_strides(mtype: ir.MemRefType):
    strides, s = [], 1
    for d in reversed(mtype.shape):
        strides.append(s)
        s *= d
    return strides[::-1]


def _offset_text(p, buf, idx) -> tuple:
    """(text, precedence): `B.elem_offset` at B[0, ...], else the linear offset of B[idx]
    (static strides), simplified like TVM's (`v_i_o * 512 + v_j_o * 16`)."""
    from tir_mlir.analysis.buffer_util import NotAffine, simplify, to_affine

    strides = row_major_strides(ir.MemRefType(buf.type))
    if all(_is_zero(i) for i in idx):
        return f"{p.namer[buf]}.elem_offset", ATOM
    leaves = []
    try:
        total = ir.AffineConstantExpr.get(0)
        for i, s in zip(idx, strides):
            total = total + to_affine(i, leaves) * s
    except NotAffine:
        terms = [f"{wrap(p.expr(i), MUL, right=False)} * {s}" for i, s in zip(idx, strides)]
        return " + ".join(terms), ADD
    return affine_text(simplify(total, max(len(leaves), 1)), [p.text(v) for v in leaves])


def extern_text(p, op, v) -> tuple:
    """(text, precedence) of a `tir.extern` (`p`: the ExprPrinter)."""
    from tir_mlir.printer.expr import value_dtype

    callee, args = extern_callee(op), extern_args(op)
    if callee == "elem_offset":
        return _offset_text(p, args[0], args[1:])
    if callee == "call_extern":
        symbol = ir.StringAttr(op.attributes["symbol"]).value
        fn = "call_pure_extern" if "pure" in op.attributes else "call_extern"
        rest = "".join(", " + p.text(a) for a in args)
        dtype = "void" if "void" in op.attributes else value_dtype(v, p.buffers)
        return f'T.{fn}("{dtype}", "{symbol}"{rest})', ATOM
    if callee == "call_llvm_intrin":
        symbol = ir.StringAttr(op.attributes["symbol"]).value
        fn = "call_llvm_pure_intrin" if "pure" in op.attributes else "call_llvm_intrin"
        count = ir.IntegerAttr(op.attributes["num_args"]).value
        rest = "".join(", " + p.text(a) for a in args)
        dtype = value_dtype(v, p.buffers)
        return f'T.{fn}("{dtype}", "{symbol}", T.uint32({count}){rest})', ATOM
    if callee == "call_packed":
        symbol = ir.StringAttr(op.attributes["symbol"]).value
        rest = "".join(
            ", " + (p.namer[a] if isinstance(a.type, ir.MemRefType) else p.text(a)) for a in args
        )
        return f'T.call_packed("{symbol}"{rest})', ATOM
    if callee == "builtin":
        symbol = ir.StringAttr(op.attributes["symbol"]).value
        dtype = value_dtype(v, p.buffers)
        rest = [p.text(a) for a in args]
        if "strings" in op.attributes:  # string arguments back at their positions
            strings = {n.name: n.attr for n in ir.DictAttr(op.attributes["strings"])}
            for pos in sorted(strings, key=int):
                rest.insert(int(pos), f'"{ir.StringAttr(strings[pos]).value}"')
        rest += [f'dtype="{dtype}"'] if dtype != "handle" else []
        return f"T.{symbol}({', '.join(rest)})", ATOM
    if callee == "buffer_data":
        return f"{p.namer[args[0]]}.data", ATOM
    if callee == "address_of":
        return f"T.address_of({p.load(args[0], args[1:])})", ATOM
    if callee == "buffer_stride":
        return f"{p.namer[args[0]]}.strides[{ir.IntegerAttr(op.attributes['dim']).value}]", ATOM
    dtype = ir.StringAttr(op.attributes["tir.ptr_dtype"]).value
    return (
        f'T.tvm_access_ptr(T.type_annotation("{dtype}"), '
        + ", ".join(p.text(a) for a in args)
        + ")"
    ), ATOM
