"""What the primitive groups (Loops, Caches, Layout, ...) use of the Schedule they are mixed
into, declared for the type checker. Declarations only: Schedule (schedule.py) and Queries
define each of them, and come before this class in the Schedule's method order."""

import random
from typing import Any, Callable, List, Optional

from mlir import ir

from tir_mlir.module import IRModule
from tir_mlir.schedule.handles import BlockRV, HandleTable
from tir_mlir.schedule.rewriter import Rewriter
from tir_mlir.schedule.trace import Trace


class ScheduleHost:
    mod: IRModule
    _mod: IRModule
    trace: Trace
    _rw: Rewriter
    _rvs: HandleTable
    _rng: random.Random
    _block: Callable[..., ir.Operation]
    _resolve: Callable[..., ir.Operation]
    _resolve_many: Callable[..., List[ir.Operation]]
    _handle: Callable[..., Any]  # a BlockRV or LoopRV, as the op is
    _note: Callable[..., None]
    _consume: Callable[..., None]
    _consume_gone: Callable[..., None]
    _func: Callable[[Optional[str]], str]
    _int: Callable[[Any], int]
    _buffer_index: Callable[..., int]
    get: Callable[..., Any]
    get_block: Callable[..., BlockRV]
