"""set_scope: change the storage scope of a buffer a block writes.

    Y = alloc((128, 128))                 ->   Y_shared = alloc((128, 128), scope="shared")

The buffer is renamed `{name}_{scope}` as TVM does. A buffer the block writes through a
`T.match_buffer` view is the view's source; its views (in every block) take the scope and the
`_{scope}` suffix too.

Legality: the index is in range of the block's T.writes; the buffer is an allocation (a
function parameter's scope is fixed by the caller). The scope lives in the alloc's `tir.scope`.
"""

from mlir import ir

from tir_mlir.dialect.ops import Block
from tir_mlir.dialect.buffers import SCOPE, scope_attr
from tir_mlir.errors import ScheduleError
from tir_mlir.analysis.buffer_util import block_writes, buffer_name, buffer_scope
from tir_mlir.passes.schedule.cache_read_write import cache_name, pick_buffer


# Storage scopes TVM knows (runtime::StorageScope::Create): a rank's name followed by any tag
# ("shared.dyn", "global.texture", "local.fragment").
SCOPE_RANKS = (
    "global",
    "shared",
    "warp",
    "local",
    "wmma.matrix_a",
    "wmma.matrix_b",
    "wmma.accumulator",
    "metal.simdgroup",
    "texture",
    "m16n8k8.matrixA",
    "m16n8k8.matrixB",
    "m16n8k8.matrixC",
    "amx.tmm",
)


def check_scope(scope):
    if not isinstance(scope, str) or not scope.startswith(SCOPE_RANKS):
        raise ScheduleError(
            f"The input storage scope {scope!r} is invalid: a storage scope "
            f"starts with one of {', '.join(SCOPE_RANKS)}"
        )


def set_scope(block: Block, buffer_index, storage_scope: str):
    check_scope(storage_scope)
    buf = pick_buffer(block, block_writes(block), buffer_index, "set_scope", "write")
    while not isinstance(buf.owner, ir.Block) and buf.owner.name == "memref.subview":
        buf = buf.owner.operands[0]  # a T.match_buffer view: its source buffer
    if buffer_scope(buf) == storage_scope:
        return  # nothing to change (TVM accepts this for parameters too)
    if isinstance(buf.owner, ir.Block):
        raise ScheduleError(
            f"set_scope: buffer {buffer_name(buf)!r} written by block "
            f"{block.name!r} is a function parameter, not an allocation"
        )
    for b in [buf] + _views(buf):  # TVM gives the match_buffer views the scope too
        b.owner.attributes[SCOPE] = scope_attr(storage_scope)
        b.owner.attributes["tir.name"] = ir.StringAttr.get(cache_name(b, storage_scope))


def _views(buf) -> list:
    """The T.match_buffer views of `buf`, and theirs."""
    out = []
    for use in buf.uses:
        op = use.owner
        if op.name == "memref.subview" and op.operands[0] == buf:
            out.append(op.results[0])
            out += _views(op.results[0])
    return out
