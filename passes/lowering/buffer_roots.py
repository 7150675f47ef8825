"""The buffer a memref value is a view of: traced back through view ops to a function argument
or an allocation. Scalar replacement asks it which accesses may alias; the alias scopes of the
LLVM code are named after it."""

from mlir import ir

VIEW_OPS = (
    "memref.subview",
    "memref.cast",
    "memref.reinterpret_cast",
    "memref.expand_shape",
    "memref.collapse_shape",
    "memref.view",
)


def declared_noalias(f) -> bool:
    """Whether func.func `f` has `T.func_attr({"tir.noalias": True})` (before affine-to-scf
    turns it into `llvm.noalias` on the memref arguments)."""
    if "tir.func_attrs" not in f.attributes:
        return False
    d = ir.DictAttr(f.attributes["tir.func_attrs"])
    value = d["tir.noalias"] if "tir.noalias" in d else None
    return isinstance(value, (ir.BoolAttr, ir.IntegerAttr)) and bool(value.value)


def noalias_args(f):
    """The memref arguments of func.func `f` that alias no other: all of a tir.noalias function
    (marked `llvm.noalias` from affine-to-scf on)."""
    args = f.regions[0].blocks[0].arguments
    if declared_noalias(f):
        return [a for a in args if isinstance(a.type, ir.MemRefType)]
    if "arg_attrs" not in f.attributes:
        return []
    return [
        args[i]
        for i, d in enumerate(ir.ArrayAttr(f.attributes["arg_attrs"]))
        if "llvm.noalias" in ir.DictAttr(d)
    ]


def root(buffer, noalias):
    """((root, shared), whether `buffer` is the root itself). A root is an alloc, a function
    argument or a constant global (`T.allocate_const`: nothing writes it, so it aliases no
    written buffer) (None: not found); `shared` arguments (not in `noalias`) may alias each
    other."""
    value, direct = buffer, True
    while not isinstance(value.owner, ir.Block) and value.owner.operation.name in VIEW_OPS:
        value, direct = value.owner.operation.operands[0], False
    owner = value.owner
    if isinstance(owner, ir.Block):
        if owner.owner.operation.name != "func.func":
            return (None, True), False
        return (value, value not in noalias), direct
    if owner.operation.name in ("memref.alloc", "memref.alloca") or _constant_global(
        owner.operation
    ):
        return (value, False), direct
    return (None, True), False


def _constant_global(op) -> bool:
    """Whether `op` is a `memref.get_global` of a `constant` global."""
    if op.name != "memref.get_global":
        return False
    module = op.parent
    while module is not None and module.name != "builtin.module":
        module = module.parent
    if module is None:
        return False
    name = ir.FlatSymbolRefAttr(op.attributes["name"]).value
    try:
        glob = ir.SymbolTable(module)[name]
    except KeyError:
        return False
    return "constant" in glob.attributes
