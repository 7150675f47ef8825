"""How a program spelled what the IR holds in canonical form: the printer's hints, kept beside
the IR, not in it.

The IR holds a block's T.where as an integer set and its bindings as affine maps, so `i >= 2`
and `2 <= i`, or `8 + i` and `i + 8`, are one value each. TVM prints an expression the way it
was written (or the way its own schedule primitive built it), and so do we while that
expression is unchanged:

    where        str(constraint expr) -> the comparison the program wrote ("<", ">=")
    const_first  str(binding expr) of the bindings written constant first (`8 + i`)
    start_first  str(binding expr) of compute_at's `start + new loop` bindings
    bindings     str(binding expr) -> the binding as TVM's split/fuse wrote it, an expression
                 tree (tir_mlir/analysis/iter_map.py): `(f0 * 1024 + f1) // 512` where the
                 affine map holds `f0 * 2 + f1 floordiv 512`
    where_trees  str(constraint expr) -> the sum a T.where bounds as TVM's split/fuse wrote it
                 (`i_0 * 100 + (i_1_0 * 10 + i_1_1) < 512`)

`bindings` and `where_trees` cannot be derived at print time from what the IR holds (each
binding's value and the loops' domains): TVM's text is a function of the schedule's history.
On 32 x 32 loops, `fuse(i, j)` then `split(f, [None, 4, 8])`, and `split(j, [4, 8])`, give
the same loops (32, 4, 8) and the same values; TVM prints `(f0 * 32 + f1 * 8 + f2) // 32`
for the first and `i` for the second. Its T.where is the substituted bound, not simplified:
`i_0 * 100 + (i_1_0 * 10 + i_1_1) < 512` after splitting i by 100 then i_1 by 10,
`(i_0 * 10 + i_1) * 10 + i_2 < 512` after one split by [6, 10, 10].

MLIR tools neither read nor keep such hints, so they are not attributes: each `ir.Module`
has a table (`attach`), keyed by (function name, block name) -- names are what a module's
copy shares with it, so a copy takes the table with `copy_to`, and the schedule's snapshots
(copies) restore it with the module. A hint keyed by an expression the IR no longer holds is
simply not used. A module without a table (MLIR read from text) prints the canonical forms.
"""

import ctypes
import weakref
from dataclasses import dataclass, field
from typing import Dict, FrozenSet, Tuple, Union

from mlir import ir


@dataclass
class BlockSpelling:
    where: Dict[str, str] = field(default_factory=dict)
    const_first: FrozenSet[str] = frozenset()
    start_first: FrozenSet[str] = frozenset()
    bindings: Dict[str, Union[int, tuple]] = field(default_factory=dict)
    where_trees: Dict[str, Union[int, tuple]] = field(default_factory=dict)


_EMPTY = BlockSpelling()


class Spelling:
    """The hints of one module: (function name, block name) -> BlockSpelling."""

    def __init__(self):
        self.blocks: Dict[Tuple[str, str], BlockSpelling] = {}

    def copy(self) -> "Spelling":
        new = Spelling()
        new.blocks = {
            k: BlockSpelling(
                dict(v.where),
                v.const_first,
                v.start_first,
                dict(v.bindings),
                dict(v.where_trees),
            )
            for k, v in self.blocks.items()
        }
        return new


# address of a module's operation -> its table, while the ir.Module lives: the entry goes
# when the module is freed, so a later module at the same address starts clean.
_TABLES: Dict[int, Spelling] = {}

_get_name = ctypes.pythonapi.PyCapsule_GetName
_get_name.restype, _get_name.argtypes = ctypes.c_char_p, [ctypes.py_object]
_get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_get_pointer.restype, _get_pointer.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]


def _address(op) -> int:
    """The address of an operation (`hash(op)` is not it in these bindings: every
    Operation hashes alike; `==` compares addresses but gives no key)."""
    capsule = op._CAPIPtr
    return _get_pointer(capsule, _get_name(capsule))


def attach(module: ir.Module) -> Spelling:
    """The table of `module`, made empty the first time."""
    key = _address(module.operation)
    table = _TABLES.get(key)
    if table is None:
        table = _TABLES[key] = Spelling()
        weakref.finalize(module, _TABLES.pop, key, None)
    return table


def copy_to(src: ir.Module, dst: ir.Module):
    """Give `dst` (a copy of `src`) the hints of `src`."""
    table = _TABLES.get(_address(src.operation))
    if table is not None:
        attach(dst).blocks = table.copy().blocks


def hints(module: ir.Module) -> dict:
    """The hints of `module` as plain data (picklable), for `restore`."""
    table = _TABLES.get(_address(module.operation))
    return table.copy().blocks if table is not None else {}


def restore(module: ir.Module, blocks: dict):
    """Give `module` (parsed from the text of another) the hints `hints` read from that one."""
    attach(module).blocks = dict(blocks)


def copy_function(func_op, dst: ir.Module, name: str):
    """Give `dst` the hints of function `func_op` (of another module), as function `name`."""
    key, func = _func_key(func_op)
    table = _TABLES.get(key)
    if table is None:
        return
    mine = attach(dst)
    for (f, block_name), hints in table.blocks.items():
        if f == func:
            mine.blocks[(name, block_name)] = hints


def _func_key(op) -> Tuple[int, str]:
    """(the module's table key, the name of the function holding `op` ("" outside one))."""
    op = op.operation if hasattr(op, "operation") else op
    func = ""
    while True:
        if op.name == "func.func":
            func = ir.StringAttr(op.attributes["sym_name"]).value
        if op.parent is None:
            return _address(op), func
        op = op.parent


def _key(block_op) -> Tuple[int, Tuple[str, str]]:
    """(the module's table key, (function name, block name)) of a tir.block."""
    op = block_op.operation if hasattr(block_op, "operation") else block_op
    key, func = _func_key(op)
    return key, (func, ir.StringAttr(op.attributes["name"]).value)


def block(block_op) -> BlockSpelling:
    """The hints of a tir.block (empty when it or its module has none)."""
    key, names = _key(block_op)
    table = _TABLES.get(key)
    return table.blocks.get(names, _EMPTY) if table is not None else _EMPTY


def update(block_op, **hints):
    """Set some hints of a tir.block (where=..., const_first=..., start_first=...,
    bindings=..., where_trees=...); nothing when its module has no table."""
    key, names = _key(block_op)
    table = _TABLES.get(key)
    if table is None:
        return
    now = table.blocks.get(names, _EMPTY)
    table.blocks[names] = BlockSpelling(
        dict(hints.get("where", now.where)),
        frozenset(hints.get("const_first", now.const_first)),
        frozenset(hints.get("start_first", now.start_first)),
        dict(hints.get("bindings", now.bindings)),
        dict(hints.get("where_trees", now.where_trees)),
    )
