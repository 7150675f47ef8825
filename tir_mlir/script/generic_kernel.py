"""One compiled kernel for every size of a symbolic function, where that is provably the same
code: the common case of `n = T.int32()` used as it is (buffer dimensions, loop extents, block
domains), as TVM builds one kernel that reads `n` from its arguments.

tir-mlir's TensorIR has no symbolic extents, so the function is specialized twice, at two probe
values per var (primes), and both are lowered to the llvm dialect. If the two texts are
equal once each probe is replaced by the var's name, the lowered code depends on each var only
through constants equal to its value (nothing folded `n - 1`, `16 * n`, `ceildiv(n, 4)`, no
loop split by a remainder, no allocation sized by `n`): then the first lowering, with each such
constant replaced by the size its buffer's memref descriptor carries at run time, is the
function for every value. Otherwise (and for scalar parameters, which no descriptor carries)
`GenericKernel.make` returns None and the caller compiles one specialization per size.

    %19 = llvm.mlir.constant(1009 : index) : i64          ->   uses of %19 read %arg3, the
    llvm.icmp "slt" %21, %19 : i64                              size of A's dimension 0
"""
import re
from typing import Dict, Optional

from mlir import ir

from tir_mlir.errors import BuildError, ScheduleError, TIRError

# Primes: no factor divides them, so nothing folds; small enough that a buffer of four probe
# dimensions passes the size checks. A program constant equal to one makes the texts differ.
PROBES = ((1009, 1013, 1019, 1021), (2003, 2011, 2017, 2027))
MAX_LANE_EXTENT = 1000      # unroll/vectorize a loop longer: maybe the probe's, not the program's


def _probe_values(func, k) -> Optional[Dict[str, int]]:
    names = list(func.vars)
    if len(names) > len(PROBES[k]):
        return None
    return dict(zip(names, PROBES[k]))


def _size_arguments(func) -> Optional[Dict[str, int]]:
    """var -> position, among the lowered function's arguments (each memref parameter of rank r
    is 3 + 2r of them: two pointers, the offset, the sizes, the strides), of a size that
    carries it; None when a var is a scalar parameter."""
    from tir_mlir.frontend import ast as A
    out, position = {}, 0
    for name, dims in func._shapes():
        for axis, node in enumerate(dims):
            if isinstance(node, A.Name) and node.id in func.vars:
                out.setdefault(node.id, position + 3 + axis)
        position += 3 + 2 * len(dims)
    return out if set(out) == set(func.vars) else None


def _long_unrolled_loop(module) -> bool:
    from tir_mlir.dialect.ops import Loop
    from tir_mlir.ir_walk import walk_all
    for f in [o.operation for o in module.body.operations]:
        for op in walk_all(f):
            if Loop.is_loop(op):
                loop = Loop(op)
                if (loop.kind in ("unroll", "vectorized") or loop.annotations) and \
                        loop.constant_bounds and loop.extent > MAX_LANE_EXTENT:
                    return True
    return False


def _lowered_text(mod, target) -> Optional[str]:
    from tir_mlir.context import get_context
    from tir_mlir.passes.lowering.pipeline import lower
    with get_context():
        return lower(mod.module, target, "llvm-dialect").operation.get_asm(
            enable_debug_info=False)


def _named(text, values):
    for name, v in values.items():
        text = re.sub(rf"\b{v}\b", f"@{name}", text)
    return text


class GenericKernel:
    """The compiled kernel and how to call it (see the module comment)."""

    def __init__(self, func, lib, probe_values):
        self.func, self.lib, self.probe_values = func, lib, probe_values

    @classmethod
    def make(cls, func, target, kwargs) -> Optional["GenericKernel"]:
        if kwargs.get("debug") or str(target).split()[0] not in ("llvm", "cpu", "c"):
            return None
        sizes = _size_arguments(func)
        first, second = _probe_values(func, 0), _probe_values(func, 1)
        if sizes is None or first is None:
            return None
        try:
            mods = [func.specialize(first), func.specialize(second)]
            if _long_unrolled_loop(mods[0].module):
                return None
            texts = [_named(_lowered_text(m, target), v) for m, v in zip(mods, (first, second))]
        except (TIRError, ScheduleError, BuildError):
            return None
        if texts[0] != texts[1]:
            return None
        from tir_mlir.runtime.build import build
        lib = build(mods[0], target, rewrite_lowered=lambda m: _read_sizes(
            m, func.name, first, sizes), **kwargs)
        return cls(func, lib, first)

    def function(self, values):
        """The compiled function checking arrays of the shapes `values` give."""
        from tir_mlir.runtime.build import Function
        from tir_mlir.runtime.signature import Param
        by_probe = {p: values[name] for name, p in self.probe_values.items()}
        params = [Param(q.name, tuple(by_probe.get(d, d) for d in q.shape), q.dtype)
                  for q in self.lib.sigs[self.func.name]]
        return Function(self.lib, self.func.name, params)


def _read_sizes(module, name, probes, sizes):
    """In llvm.func `name`, each constant equal to a var's probe -> that var's size argument."""
    kernel = next(o.operation for o in module.body.operations
                  if o.operation.name == "llvm.func" and
                  ir.StringAttr(o.operation.attributes["sym_name"]).value == name)
    args = kernel.regions[0].blocks[0].arguments
    by_value = {v: args[sizes[n]] for n, v in probes.items()}
    found = []

    def visit(op):
        if op.name == "llvm.mlir.constant" and isinstance(op.attributes["value"], ir.IntegerAttr):
            arg = by_value.get(ir.IntegerAttr(op.attributes["value"]).value)
            if arg is not None:
                found.append((op, arg))
        return ir.WalkResult.ADVANCE
    for f in module.body.operations:
        if f.operation != kernel:
            f.operation.walk(visit)
    if found:           # a probe in another function: no size argument reaches it
        raise BuildError("a probe value outside the kernel")
    kernel.walk(visit)
    from mlir.dialects import llvm
    for op, arg in found:
        value = arg
        if op.results[0].type != arg.type:        # an i32 constant: the size truncated
            with ir.InsertionPoint(op), op.location:
                value = llvm.trunc(op.results[0].type, arg)
        op.results[0].replace_all_uses_with(value)
        op.erase()
