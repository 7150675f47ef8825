"""set_store_predicate: TE's `s[B].set_store_predicate(cond)` in TensorIR form.

The condition, a function of the block's iter vars, becomes (part of) the block predicate
(T.where), so the block's store only happens where it holds::

    block "B": vi = S(i)                   block "B": vi = S(i)
        B[vi] = ...                   ->       T.where(i == 0)
                                               B[vi] = ...

Legality: the predicate is affine comparisons (`<, <=, >, >=, ==`, joined with `&`) of the
block's iter vars; it is and-ed with an existing predicate.
"""

from typing import Callable

from mlir import ir

from tir_mlir.dialect.ops import Block
from tir_mlir.errors import ScheduleError
from tir_mlir.schedule import lambda_exprs as symbolic
from tir_mlir.analysis.buffer_util import substitute


def set_store_predicate(block: Block, predicate: Callable):
    n = len(block.iter_names)
    try:
        cons = symbolic.constraints(predicate, n)
    except ScheduleError as e:
        raise ScheduleError(f"set_store_predicate: block {block.name!r}: {e.message}")
    ndims = len(block.dims)
    binds = list(block.bindings.results)
    exprs, eqs = [], []
    if block.predicate is not None:
        for c in block.predicate.constraints:
            exprs.append(c.expr)
            eqs.append(c.is_eq)
    for c in cons:
        exprs.append(substitute(c.expr, binds) if binds else c.expr)
        eqs.append(c.is_eq)
    block.set_attr(
        "predicate", ir.IntegerSetAttr.get(ir.IntegerSet.get(max(ndims, 0), 0, exprs, eqs))
    )
