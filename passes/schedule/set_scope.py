"""set_scope: change the storage scope of a buffer a block writes.

    Y = alloc((128, 128))                 ->   Y_shared = alloc((128, 128), scope="shared")

The buffer is renamed `{name}_{scope}` as TVM does.

Legality: the index is in range of the block's T.writes; the buffer is an allocation (a
function parameter's scope is fixed by the caller). The scope lives in the alloc's `tir.scope`.
"""
from mlir import ir

from tir_mlir.dialect.ops import Block
from tir_mlir.errors import ScheduleError
from tir_mlir.passes.schedule.buffer_util import block_writes, buffer_name, buffer_scope
from tir_mlir.passes.schedule.cache_read_write import cache_name, pick_buffer


# Storage scopes TVM knows (runtime::StorageScope): a rank, optionally with a tag after ".".
SCOPE_RANKS = ("global", "shared", "local", "warp", "wmma", "texture", "metal", "m")
SCOPES = ("global", "shared", "shared.dyn", "local", "warp")


def check_scope(scope):
    if not isinstance(scope, str) or not (scope in SCOPES
                                          or scope.split(".")[0] in SCOPE_RANKS and "." in scope):
        raise ScheduleError(f"unknown storage scope {scope!r}; expected one of "
                            f"{', '.join(SCOPES)} or a tagged scope like 'local.fragment'")


def set_scope(block: Block, buffer_index: int, storage_scope: str):
    check_scope(storage_scope)
    buf = pick_buffer(block, block_writes(block), buffer_index, "set_scope", "write")
    if buffer_scope(buf) == storage_scope:
        return                       # nothing to change (TVM accepts this for parameters too)
    if isinstance(buf.owner, ir.Block):
        raise ScheduleError(f"set_scope: buffer {buffer_name(buf)!r} written by block "
                            f"{block.name!r} is a function parameter, not an allocation")
    buf.owner.attributes["tir.scope"] = ir.StringAttr.get(storage_scope)
    buf.owner.attributes["tir.name"] = ir.StringAttr.get(cache_name(buf, storage_scope))
