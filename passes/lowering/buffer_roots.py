"""The buffer a memref value is a view of: traced back through view ops to a function argument
or an allocation. Scalar replacement asks it which accesses may alias; the alias scopes of the
LLVM code are named after it."""
from mlir import ir

VIEW_OPS = ("memref.subview", "memref.cast", "memref.reinterpret_cast", "memref.expand_shape",
            "memref.collapse_shape", "memref.view")


def noalias_args(f):
    """The arguments of func.func `f` marked `llvm.noalias` (the memrefs of a tir.noalias
    function)."""
    if "arg_attrs" not in f.attributes:
        return []
    args = f.regions[0].blocks[0].arguments
    return [args[i] for i, d in enumerate(ir.ArrayAttr(f.attributes["arg_attrs"]))
            if "llvm.noalias" in ir.DictAttr(d)]


def root(buffer, noalias):
    """((root, shared), whether `buffer` is the root itself). A root is an alloc or a function
    argument (None: not found); `shared` arguments (not in `noalias`) may alias each other."""
    value, direct = buffer, True
    while not isinstance(value.owner, ir.Block) and value.owner.operation.name in VIEW_OPS:
        value, direct = value.owner.operation.operands[0], False
    owner = value.owner
    if isinstance(owner, ir.Block):
        if owner.owner.operation.name != "func.func":
            return (None, True), False
        return (value, value not in noalias), direct
    if owner.operation.name in ("memref.alloc", "memref.alloca"):
        return (value, False), direct
    return (None, True), False
