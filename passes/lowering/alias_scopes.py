"""Alias scopes (CPU): every `llvm.load`/`llvm.store` gets the alias scope of the buffer it reads
or writes and `noalias` scopes for every other buffer of its function.

Why: `convert-scf-to-openmp` puts a parallel loop's body in an `omp.parallel` region that LLVM
outlines into a function receiving the memref descriptors through a struct, so the `noalias` on
the entry function's pointer arguments never reaches the loops: every store then forces reloads
of the other buffers, and LICM cannot keep an accumulator in a register. Scoped-noalias metadata
sits on the instructions themselves and moves with them into the outlined function.

Two stages, because the buffer is plain at the memref level and the llvm dialect's values are
costly to inspect from Python (wrapping one imports that dialect's Python module, ~30 ms of a
fresh process's first build):
- `buffer-tags` (scf level, just before the LLVM conversion, which gives each op's location to
  the ops it becomes) names in its location the buffer each memref access reads or writes
  (buffer_roots.py): an argument marked `llvm.noalias` or an allocation is a buffer of its own;
  the other arguments share one name (they may alias each other);
- `alias-scopes` (llvm dialect) turns the names found on loads and stores into scopes.
An access whose buffer is not found (a global, a memref loaded from memory) gets no metadata,
so LLVM keeps treating it as possibly aliasing everything.
"""

from mlir import ir

from tir_mlir.ir.ir_walk import walk_all
from tir_mlir.passes.lowering.buffer_roots import noalias_args, root
from tir_mlir.passes.lowering.common import functions

PREFIX = "tir.buffer="
SHARED = "external"
# The memref operand of each access op (not memref.copy: it has two).
BUFFER_OPERAND = {
    "memref.load": 0,
    "memref.store": 1,
    "vector.load": 0,
    "vector.store": 1,
    "vector.maskedload": 0,
    "vector.maskedstore": 0,
    "vector.transfer_read": 0,
    "vector.transfer_write": 1,
    "vector.gather": 0,
    "vector.scatter": 0,
}
ACCESS_OPS = ("llvm.load", "llvm.store")


class BufferTags:
    name = "buffer-tags"

    def __call__(self, module: ir.Module):
        for f in functions(module):
            noalias = noalias_args(f)
            args = list(f.regions[0].blocks[0].arguments)
            allocs = []
            for op in walk_all(f):
                operand = BUFFER_OPERAND.get(op.name)
                if operand is None:
                    continue
                (buffer, shared), _ = root(op.operands[operand], noalias)
                if buffer is None:
                    continue
                op.location = ir.Location.name(
                    PREFIX + _name(buffer, shared, args, allocs), childLoc=op.location
                )


def _name(buffer, shared, args, allocs) -> str:
    if shared:
        return SHARED
    if isinstance(buffer.owner, ir.Block):
        return f"arg{next(i for i, a in enumerate(args) if a == buffer)}"
    if not any(a == buffer for a in allocs):
        allocs.append(buffer)
    return f"alloc{next(i for i, a in enumerate(allocs) if a == buffer)}"


class AliasScopes:
    name = "alias-scopes"

    def __call__(self, module: ir.Module):
        # MLIR's native walk: iterating the body in Python would wrap the ops (see above).
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
    accesses = []  # [(op, buffer name)]
    for op in walk_all(func):
        if op.name in ACCESS_OPS:
            names = set(_names(op.location))
            if len(names) == 1:
                accesses.append((op, names.pop()))
    keys = list(dict.fromkeys(k for _, k in accesses))
    if len(keys) < 2:
        return
    domain = f'#llvm.alias_scope_domain<id = "{fname}", description = "{fname}">'
    scopes = {
        k: f'#llvm.alias_scope<id = "{fname}.buf{n}", domain = {domain}, description = "{k}">'
        for n, k in enumerate(keys)
    }
    # (Parsed as whole arrays: a parsed llvm attribute on its own is wrapped, see above.)
    own = {k: ir.Attribute.parse(f"[{scopes[k]}]") for k in keys}
    others = {
        k: ir.Attribute.parse(f"[{', '.join(s for o, s in scopes.items() if o != k)}]")
        for k in keys
    }
    for op, key in accesses:
        op.attributes["alias_scopes"] = own[key]
        op.attributes["noalias_scopes"] = others[key]


def _names(loc):
    """The buffer names `buffer-tags` put in a location (several when ops were merged)."""
    if loc.is_a_name():
        if loc.name_str.startswith(PREFIX):
            yield loc.name_str[len(PREFIX) :]
        else:
            yield from _names(loc.child_loc)
    elif loc.is_a_fused():
        for inner in loc.locations:
            yield from _names(inner)
    elif loc.is_a_callsite():
        yield from _names(loc.callee)
