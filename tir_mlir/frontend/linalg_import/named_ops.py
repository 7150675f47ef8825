"""Named linalg ops -> `linalg.generic`, keeping what the name said.

Upstream's `linalg-generalize-named-ops` rewrites every structured op (matmul, batch_matmul,
conv_2d_*, pooling_*, fill, transpose, broadcast, add/mul/..., reduce, map, ...) into the
`linalg.generic` it stands for: its indexing maps, iterator types and scalar body. The
importer then has one op to translate, and every named op upstream knows is supported by
construction (strides and dilations included). The pass replaces each op by one generic in
place, so the ops' names are recorded before it and paired with the generics after it by
position. Ops it leaves alone (`linalg.softmax`, `linalg.pack`, ...) stay, and the importer
refuses them by name.
"""

from mlir import ir
from mlir.passmanager import PassManager

# Iterator names of the named ops whose dimensions have conventional names (linalg's OpDSL
# names, TVM's i/j/k for matrix products); other ops get ax0, ax1, ... and k0, k1, ...
DIM_NAMES = {
    "matmul": ("i", "j", "k"),
    "batch_matmul": ("b", "i", "j", "k"),
    "conv_2d_nchw_fchw": ("n", "f", "oh", "ow", "c", "kh", "kw"),
    "conv_2d_nhwc_hwcf": ("n", "oh", "ow", "f", "kh", "kw", "c"),
    "pooling_nchw_max": ("n", "c", "oh", "ow", "kh", "kw"),
    "pooling_nchw_sum": ("n", "c", "oh", "ow", "kh", "kw"),
    "pooling_nhwc_max": ("n", "oh", "ow", "c", "kh", "kw"),
    "pooling_nhwc_sum": ("n", "oh", "ow", "c", "kh", "kw"),
}


def _linalg_ops(func_op) -> list:
    return [
        op.operation
        for op in func_op.regions[0].blocks[0].operations
        if op.operation.name.startswith("linalg.")
    ]


def generalize(module: ir.Module) -> dict:
    """Generalize the named ops of every function in place; returns {generic op: the short
    name of the op it was ("matmul", "fill", "generic")}, keyed by the op (ir.Operation)."""
    funcs = [op for op in module.body.operations if op.operation.name == "func.func"]
    before = [[op.name.removeprefix("linalg.") for op in _linalg_ops(f)] for f in funcs]
    PassManager.parse("builtin.module(func.func(linalg-generalize-named-ops))").run(
        module.operation
    )
    names = {}
    for f, names_before in zip(funcs, before):
        after = _linalg_ops(f)
        assert len(after) == len(names_before), "generalization replaces ops one by one"
        names.update(zip(after, names_before))
    return names
