"""`linalg` programs (torch-mlir's linalg-on-tensors, IREE input, StableHLO lowered to linalg,
or linalg on memrefs) -> a TensorIR `IRModule`: `tir_mlir.from_linalg`, `tir-mlir import`.

    mod = tir_mlir.from_linalg(open("model.mlir").read())   # or an mlir.ir.Module
    lib = tir_mlir.build(mod)
    lib["main"](*inputs, *outputs)

Each `func.func` becomes a prim_func of the same name taking its arguments followed by one
output buffer per result (TVM's destination-passing style); each linalg op becomes one block
in its own loop nest: iterator types -> spatial/reduce iter vars, indexing maps -> buffer
indices, the scalar body -> the block's expression, a `linalg.fill` (or a bias broadcast)
into a reduction's init -> its `T.init()`, `tensor.empty` -> `T.alloc_buffer`, constants
(`dense_resource` blobs too) -> `T.allocate_const`, expand/collapse_shape, `tensor.pad`,
slices and concat -> copy blocks. What cannot be taken (an unsupported op, a dynamic shape)
is a `TIRParseError` at the op's location.

How: the module is parsed into tir_mlir's context (`source.py`), named ops are generalized
to `linalg.generic` by upstream's own pass with their names kept for the blocks
(`named_ops.py`), each function's tensors are given buffers (`plan.py`; reduction inits in
`folds.py`), and the `tir` ops are built directly with the dialect's builders,
`Loop.build`/`Block.build`, memref buffers with `tir.*` attributes (`emit.py`, `loops.py`;
`body.py` for the scalar bodies, `slices.py` for slices and concat, `naming.py` for names).
Building the IR, rather than writing TVMScript text and parsing it, keeps the producer's
locations on every op (a later error, or `--emit mlir --debug-info`, points into the linalg
input or the torch model), needs no printer round trip for constants, and the result is
exactly what the parser would build from the printed TVMScript, which the tests check by
parsing the printout back.
"""

from mlir import ir

from tir_mlir.ir.mlir_error import MLIRError
from tir_mlir.ir import wellformed
from tir_mlir.context import get_context, serialized
from tir_mlir.errors import SourceLoc, TIRParseError
from tir_mlir.frontend.linalg_import.emit import emit_function
from tir_mlir.frontend.linalg_import.named_ops import generalize
from tir_mlir.frontend.linalg_import.plan import Planner
from tir_mlir.frontend.linalg_import.source import LinalgSource
from tir_mlir.module import IRModule

__all__ = ["from_linalg"]


@serialized
def from_linalg(module, filename: str | None = None) -> IRModule:
    """Import a program of linalg ops as a TensorIR module.

    Each `func.func` becomes a prim_func of the same name that takes its arguments followed
    by one output buffer per result; each linalg op becomes one block (docs/bridge.md).

    Parameters
    ----------
    module : mlir.ir.Module or str
        The linalg program: a module of any MLIR Python bindings (torch-mlir's own included;
        it is read through its text, with its debug locations, and left unchanged), or MLIR
        text (torch-mlir's linalg-on-tensors, IREE input, StableHLO lowered to linalg, or
        linalg on memrefs).
    filename : str, optional
        The name errors and the imported ops' locations give the text.

    Returns
    -------
    IRModule
        The TensorIR module, to print, schedule, tune or build like a parsed one.

    Raises
    ------
    TIRParseError
        At the op or type it cannot take (an unsupported op, a dynamic shape), or for
        invalid MLIR.

    Examples
    --------
    >>> mod = tir_mlir.from_linalg(torch_mlir.fx.export_and_import(
    ...     model, x, output_type="linalg-on-tensors"))
    >>> tir_mlir.build(mod)["main"](x.numpy(), out)
    """
    src = LinalgSource(module, filename)
    with get_context():
        funcs = []
        for op in src.module.body.operations:
            op = op.operation
            if op.name != "func.func":
                raise src.error(f"unsupported top-level op '{op.name}' (expected func.func)", op)
            if not len(op.regions[0].blocks):
                raise src.error("a function declaration has no body to import", op)
            funcs.append(op)
        try:
            kinds = generalize(src.module)
        except MLIRError as e:
            diags = getattr(e, "error_diagnostics", None) or []
            if not diags:
                raise TIRParseError(
                    f"generalizing the named linalg ops failed: {e}", SourceLoc(src.filename, 1, 1)
                ) from None
            raise TIRParseError(diags[0].message, src.loc(diags[0].location)) from None
        plans = [
            (Planner(src, f, kinds).plan(), ir.StringAttr(f.attributes["sym_name"]).value)
            for f in funcs
        ]
        out = ir.Module.create(loc=ir.Location.unknown())
        with ir.InsertionPoint(out.body), ir.Location.unknown():
            for plan, name in plans:
                emit_function(plan, name)
        out.operation.verify()
        wellformed.check(out, src.filename)
        return IRModule(out)
