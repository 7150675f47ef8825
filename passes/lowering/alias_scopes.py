"""Stage `alias-scopes` (CPU, llvm dialect): every `llvm.load`/`llvm.store` gets the alias scope of
the buffer it reads or writes and `noalias` scopes for every other buffer of its function.

Why: `convert-scf-to-openmp` puts a parallel loop's body in an `omp.parallel` region that LLVM
outlines into a function receiving the memref descriptors through a struct, so the `noalias` on
the entry function's pointer arguments never reaches the loops: every store then forces reloads
of the other buffers, and LICM cannot keep an accumulator in a register. Scoped-noalias metadata
sits on the instructions themselves and moves with them into the outlined function.

A buffer is the root of a pointer, found by tracing the address back through GEPs, casts,
pointer arithmetic and the descriptor's `insertvalue`/`extractvalue` chain:
- an argument marked `llvm.noalias` (a memref of a `tir.noalias` function): its own scope;
- the other pointer arguments and globals: one shared scope (they may alias each other);
- an `llvm.alloca` or a `malloc`/`aligned_alloc` result: its own scope.
An access whose root is not found (a pointer loaded from memory, a block argument) gets no
metadata, so LLVM keeps treating it as possibly aliasing everything.
"""
from mlir import ir

from tir_mlir.ir_walk import walk_all

ACCESS_OPS = ("llvm.load", "llvm.store")
ALLOC_CALLEES = ("malloc", "aligned_alloc", "calloc")
# Ops whose pointer/integer result is derived from the one pointer among their (non-constant)
# operands; an operand of unknown origin there is an offset (tir has no pointer arithmetic that
# turns one buffer's address into another's). `sub` and GEP derive from their first operand only.
DERIVING_OPS = ("llvm.getelementptr", "llvm.bitcast", "llvm.addrspacecast", "llvm.inttoptr",
                "llvm.ptrtoint", "llvm.add", "llvm.sub", "llvm.and", "llvm.or", "llvm.select")
EXTERNAL = "external"


class AliasScopes:
    name = "alias-scopes"

    def __call__(self, module: ir.Module):
        # MLIR's native walk: iterating the body in Python would import the llvm dialect's
        # Python module (~0.1 s of a cold start) just to wrap the ops.
        funcs = []

        def visit(op):
            if op.name == "llvm.func":
                if len(op.regions[0].blocks):
                    funcs.append(op)
                return ir.WalkResult.SKIP
            return ir.WalkResult.ADVANCE
        module.operation.walk(visit, ir.WalkOrder.PRE_ORDER)
        for op in funcs:
            _annotate(op)


def _annotate(func):
    fname = ir.StringAttr(func.attributes["sym_name"]).value
    roots = _Roots(func)
    accesses = []                     # [(op, buffer key)]
    for op in walk_all(func):
        if op.name in ACCESS_OPS:
            key = roots.key(_address(op))
            if key is not None:
                accesses.append((op, key))
    keys = list(dict.fromkeys(k for _, k in accesses))
    if len(keys) < 2:
        return
    domain = f'#llvm.alias_scope_domain<id = "{fname}", description = "{fname}">'
    scopes = {k: ir.Attribute.parse(
        f'#llvm.alias_scope<id = "{fname}.buf{n}", domain = {domain}, '
        f'description = "{"".join(map(str, k))}">')
        for n, k in enumerate(keys)}
    for op, key in accesses:
        op.attributes["alias_scopes"] = ir.ArrayAttr.get([scopes[key]])
        op.attributes["noalias_scopes"] = ir.ArrayAttr.get(
            [s for k, s in scopes.items() if k != key])


def _address(op) -> ir.Value:
    return op.operands[0] if op.name == "llvm.load" else op.operands[1]


class _Roots:
    """Buffer keys of pointers in one function: ("arg", index), ("alloc", n) or EXTERNAL."""

    def __init__(self, func):
        self.args = list(func.regions[0].blocks[0].arguments)
        arg_attrs = (list(ir.ArrayAttr(func.attributes["arg_attrs"]))
                     if "arg_attrs" in func.attributes else [])
        self.noalias = {i for i, d in enumerate(arg_attrs) if "llvm.noalias" in ir.DictAttr(d)}
        self.memo = {}
        self.allocs = []

    def key(self, value):
        if value not in self.memo:
            self.memo[value] = None   # cut cycles through block arguments
            self.memo[value] = self._key(value)
        return self.memo[value]

    def _key(self, value):
        owner = value.owner
        if isinstance(owner, ir.Block):
            for i, a in enumerate(self.args):
                if a == value and str(a.type).startswith("!llvm.ptr"):
                    return ("arg", i) if i in self.noalias else (EXTERNAL,)
            return None
        op = owner.operation
        name = op.name
        if name == "llvm.alloca" or (name == "llvm.call" and "callee" in op.attributes and
                                     ir.FlatSymbolRefAttr(op.attributes["callee"]).value
                                     in ALLOC_CALLEES):
            self.allocs.append(value)
            return ("alloc", len(self.allocs) - 1)
        if name == "llvm.mlir.addressof":
            return (EXTERNAL,)
        if name == "llvm.extractvalue":
            position = list(ir.DenseI64ArrayAttr(op.attributes["position"]))
            inserted = _inserted(op.operands[0], position)
            return None if inserted is None else self.key(inserted)
        if name in DERIVING_OPS:
            operands = list(op.operands)[1:] if name == "llvm.select" else list(op.operands)
            if name in ("llvm.getelementptr", "llvm.sub"):
                operands = operands[:1]
            keys = {self.key(v) for v in operands if not _is_constant(v)}
            if name == "llvm.select":
                return keys.pop() if len(keys) == 1 else None
            keys.discard(None)
            return keys.pop() if len(keys) == 1 else None
        return None


def _inserted(struct, position):
    """The value stored at `position` of an aggregate built by an `insertvalue` chain."""
    while True:
        owner = struct.owner
        if isinstance(owner, ir.Block) or owner.operation.name != "llvm.insertvalue":
            return None
        op = owner.operation
        at = list(ir.DenseI64ArrayAttr(op.attributes["position"]))
        if at == position:
            return op.operands[1]
        n = min(len(at), len(position))
        if at[:n] == position[:n]:   # a whole sub-aggregate or a part of the one asked for
            return None
        struct = op.operands[0]


def _is_constant(value) -> bool:
    owner = value.owner
    return not isinstance(owner, ir.Block) and owner.operation.name == "llvm.mlir.constant"
