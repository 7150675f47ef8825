"""One kernel over dynamic memrefs for every size of a symbolic function, as TVM builds one kernel
that reads `n` from its arguments.

tir-mlir's TensorIR has no symbolic extents, so the function (its schedule replayed) is
specialized at probe values (PROBE_FAMILIES) and lowered to the `scf` stage, after every pass
that needs static sizes (unrolling, vectorization, buffer compaction, the stack budget). The
probe modules must be the same op for op except for integer constants, float constants equal
to a parameter (a float one, or an int one cast), the sizes of the function's memref
parameters and of heap buffers. Each integer that changes is fitted over the probes as

    a1 * n1 + ... + b                     (affine in the vars), or
    a * ((n + c) floordiv d) + b          (one var, d = 2..256, c < d; c = d - 1: ceildiv)

(a form must be the only one of its kind that fits, as a function)
and the base probe's module is rewritten to hold no probe value:

    func.func @add(%arg0: memref<1009x16xf32>, ...)   ->  func.func @add(%arg0: memref<?x16xf32>, ...)
                                                          %n = memref.dim %arg0, %c0
    %c253 = arith.constant 253 : index                ->  affine.apply affine_map<()[s0] ->
    scf.parallel (%i) = (%c0) to (%c253) ...                (s0 ceildiv 4)>()[%n]
    %b = memref.alloc() : memref<17011x16xf32>        ->  %b = memref.alloc(%n) : memref<?x16xf32>

The vars come from the memref dims (a var that is a whole dimension of some buffer) and from
the scalar parameters, passed as 0-d buffers appended to the parameters and loaded on entry.
The rest of the pipeline lowers it as any program (the dims and strides come from the
descriptors). A vectorized loop whose extent changes with the probes is marked so that
vectorize-loops leaves it to LLVM's loop vectorizer (which adds the remainder loop). Anything
else (an unrolled loop over `n`, a subview, a constant of another form: `ceildiv(n, chunk)`
with `chunk` a parameter, `n * m`) makes `make` return None and the caller tries
generic_kernel.py, then one specialization per size.

A function whose source takes min/max/if_then_else/Select/truncdiv/truncmod, an `if` or a
comparison outside T.where may change behaviour where a var crosses one of its constants
(`T.min(n, 16)` is 16 at every probe): its kernel serves only values above every integer
constant in the source (`covers`); the caller specializes below that. Every plan is checked
once more at small sizes (SMALL), where such a form the source does not show would appear.
"""
import dataclasses
from typing import Dict, List, Optional

import numpy as np
from mlir import ir

from tir_mlir.errors import BuildError, ScheduleError, TIRError
from tir_mlir.script.generic_kernel import (FLOAT_PROBES, PROBES, SCALAR_DTYPES, GenericKernel,
                                            _is_float, _long_unrolled_loop,
                                            _with_scalar_buffers, scalar_params)


def _primes(start, count=4):
    out, n = [], start
    while len(out) < count:
        if n > 1 and all(n % d for d in range(2, int(n ** 0.5) + 1)):
            out.append(n)
        n += 1
    return tuple(out)


# Probe sets, per var: a base and a changed value (primes), then checks: primes, and three used
# only where the program has the same structure there: one less than a highly composite number
# (a floordiv or ceildiv by a small d sees remainders 1 and d - 1), the highly composite numbers
# (remainder 0) and twice a prime (even, no multiple of 4). A size a split factor divides (or a
# derived extent: `ceildiv(n, 4)` split by 7 at n = 2519) has no `T.where` (nor its `scf.if`),
# so it has another structure: the set's alternates are tried (_candidates), else a fit is
# checked without it. The first family is generic_kernel.py's; the second, tried where the
# first's structures differ, makes every buffer sized by a var larger than a stack buffer may
# be (64 KiB: tir_to_affine.py), so all go to the heap at every probe.
PROBE_FAMILIES = (
    (PROBES[0], PROBES[1], PROBES[2], (2519, 2639, 2879, 3359), PROBES[3],
     (2018, 2026, 2038, 2042)),
    (_primes(17011), _primes(19001), _primes(20011), (17639, 20159, 22679, 25199),
     (17640, 20160, 22680, 25200), tuple(2 * p for p in _primes(8513))),
)
FLOAT_SETS = FLOAT_PROBES + ((6.125, 6.375, 6.625, 6.875), (7.125, 7.375, 7.625, 7.875))
ALTERNATES = 4
# Small sizes (above the source's constants where it has min/max: lowest_covered) where the
# plan's predictions are checked once more: a size-dependent form every large probe sees as
# one constant shows here.
SMALL = (11, 13, 17, 19)
SMALL_FLOATS = (9.125, 9.375, 9.625, 9.875)
MAX_DIVISOR = 256
SETTLE_TRIES = 10
MAX_FORMS = 256         # floordiv forms that fit one constant: more is no evidence of any
SETTLE_SIZES = 1 << 15  # the sizes _settle chooses from
# Calls whose result changes form where a var crosses a constant (truncdiv: at 0, where a
# floordiv fit would differ for a negative scalar parameter).
GUARDED_CALLS = ("min", "max", "if_then_else", "Select", "truncdiv", "truncmod")


def _ast(func):
    from tir_mlir.frontend import ast as A
    node = func.func
    return node if isinstance(node, A.FuncDef) else node.func


def _children(node):
    from tir_mlir.frontend import ast as A
    if isinstance(node, (list, tuple)):
        yield from node
    elif isinstance(node, A.Node):
        for f in dataclasses.fields(node):
            yield getattr(node, f.name)


def lowest_covered(func) -> int:
    """The smallest var value the kernel serves (see the module comment): 0, or one more than
    the source's largest integer constant where it takes min/max/a comparison."""
    from tir_mlir.frontend import ast as A
    from tir_mlir.frontend.intrinsics import callee
    constants, guarded = [0], False

    def visit(node, in_where):
        nonlocal guarded
        if isinstance(node, A.Const) and type(node.value) is int:
            constants.append(abs(node.value))
        if isinstance(node, A.Call) and callee(node) in GUARDED_CALLS or \
                isinstance(node, A.If) or isinstance(node, A.Compare) and not in_where:
            guarded = True
        in_where = in_where or isinstance(node, A.Call) and callee(node) == "where"
        for child in _children(node):
            visit(child, in_where)
    visit(_ast(func).body, False)
    return max(constants) + 1 if guarded else 0


def _ops(module) -> List[ir.Operation]:
    from tir_mlir.ir_walk import walk_all
    return walk_all(module.operation)


def _attrs(op) -> Dict[str, str]:
    return {a: str(op.attributes[a]) for a in op.attributes}


def _constant_value(op):
    attr = op.attributes["value"]
    if isinstance(attr, ir.IntegerAttr):
        return ir.IntegerAttr(attr).value
    if isinstance(attr, ir.FloatAttr):
        return ir.FloatAttr(attr).value
    return None


def _only_dims_differ(types) -> bool:
    """Memref types of one element type, rank and memory space, with the identity layout."""
    if not all(isinstance(t, ir.MemRefType) for t in types):
        return False
    memrefs = [ir.MemRefType(t) for t in types]
    t = memrefs[0]
    return len({(str(m.element_type), m.rank, str(m.layout), str(m.memory_space))
                for m in memrefs}) == 1 and \
        str(t) == str(ir.MemRefType.get(t.shape, t.element_type, memory_space=t.memory_space))


def _differences(mods, name):
    """Where the probe modules differ: (changing constants: [(op index, values per probe)],
    memref parameters: {argument: [shape per probe]}, heap buffers: [(op index, shapes)]);
    None where they differ anywhere else."""
    walks = [_ops(m) for m in mods]
    if len({len(w) for w in walks}) != 1:
        return None
    constants, args, allocs = [], {}, []
    for k, ops in enumerate(zip(*walks)):
        first = ops[0]
        if len({o.name for o in ops}) != 1 or \
                len({(len(o.operands), len(o.results), len(o.regions)) for o in ops}) != 1:
            return None
        is_kernel = first.name == "func.func" and \
            ir.StringAttr(first.attributes["sym_name"]).value == name
        attrs = [_attrs(o) for o in ops]
        changed = {a for a in attrs[0] if len({str(d.get(a)) for d in attrs}) != 1} | \
            {a for d in attrs for a in d if a not in attrs[0]}
        if first.name == "arith.constant" and changed == {"value"}:
            values = [_constant_value(o) for o in ops]
            if values[0] is None:
                return None
            constants.append((k, values))
        elif changed - ({"function_type"} if is_kernel else set()):
            return None
        if len({tuple(str(r.type) for r in o.results) for o in ops}) != 1 and \
                first.name != "arith.constant":
            types = [o.results[0].type for o in ops]
            if first.name != "memref.alloc" or len(first.operands) or \
                    not _only_dims_differ(types):
                return None
            allocs.append((k, [list(ir.MemRefType(t).shape) for t in types]))
        for r, regions in enumerate(zip(*[o.regions for o in ops])):
            blocks = [list(reg.blocks) for reg in regions]
            if len({len(b) for b in blocks}) != 1:
                return None
            for b, bs in enumerate(zip(*blocks)):
                types = [[a.type for a in blk.arguments] for blk in bs]
                if len({len(t) for t in types}) != 1:
                    return None
                for i, ts in enumerate(zip(*types)):
                    if len({str(t) for t in ts}) == 1:
                        continue
                    if not (is_kernel and r == 0 and b == 0 and _only_dims_differ(ts)):
                        return None
                    args[i] = [list(ir.MemRefType(t).shape) for t in ts]
    return constants, args, allocs


def _affine(values, probes, names, dtypes):
    """{var: coefficient, "": offset} when `values` are affine in the integer vars."""
    base = probes[0]
    coeff = {}
    for k, name in enumerate(names):
        delta, step = values[1 + k] - values[0], probes[1 + k][name] - base[name]
        if delta and (_is_float(dtypes[name]) or delta % step):
            return None
        if delta:
            coeff[name] = delta // step
    offset = values[0] - sum(a * base[n] for n, a in coeff.items())
    if any(v != offset + sum(a * p[n] for n, a in coeff.items()) for v, p in zip(values, probes)):
        return None
    return {**coeff, "": offset}


def _division(values, probes, names, dtypes):
    """("div", var, c, d, a, b) for a * ((var + c) floordiv d) + b (c < d: c = d - 1 is a
    ceildiv), one var changing; None where no such form or two that differ somewhere fit
    (probes of one structure may all share a remainder: `(n + 2) // 4` and `n // 4 + 1` agree
    on every n of remainder 2 or 3 by 4)."""
    moving = [n for k, n in enumerate(names) if values[1 + k] != values[0]]
    if len(moving) != 1 or _is_float(dtypes[moving[0]]):
        return None
    var, k = moving[0], 1 + names.index(moving[0])
    xs, vs = np.array([p[var] for p in probes]), np.array(values)
    found = []
    for d in range(2, MAX_DIVISOR + 1):
        cs = np.arange(d)[:, None]
        qs = (xs[None, :] + cs) // d                    # per c, per probe
        dq = qs[:, k] - qs[:, 0]
        for c in np.nonzero((dq != 0) & ((vs[k] - vs[0]) % np.where(dq == 0, 1, dq) == 0))[0]:
            a = (vs[k] - vs[0]) // dq[c]
            b = vs[0] - a * qs[c, 0]
            if a and (a * qs[c] + b == vs).all():
                found.append(("div", var, int(c), d, int(a), int(b)))
            if len(found) > MAX_FORMS:
                return None
    found = _distinct(found)
    return None if not found or len(found) > MAX_FORMS // 4 else \
        found[0] if len(found) == 1 else found


# Two forms are one function where they agree on SPAN: their difference is periodic (period
# lcm(d1, d2) <= MAX_DIVISOR ** 2) once their slopes agree.
SPAN = np.arange(min(PROBES[0]), min(PROBES[0]) + 2 * MAX_DIVISOR ** 2)


def _distinct(forms) -> list:
    """One form per function among `forms` of one var, the first of each."""
    out, seen = [], set()
    for f in forms:
        key = _predict(f, {f[1]: SPAN}).tobytes()
        if key not in seen:
            out.append(f)
            seen.add(key)
    return out


LOOPS = ("scf.for", "scf.parallel")


def _loop_bound(ops, k) -> Optional[int]:
    """The index among `ops` of the loop (of one IV) whose upper bound is constant op `k`."""
    return next((i for i, o in enumerate(ops) if o.name in LOOPS and len(o.operands) == 3 and
                 o.operands[1].owner == ops[k]), None)


def _bound_value(out, index):
    """The constant upper bound of the loop op at `index` of a lowering, or None."""
    owner = _ops(out)[index].operands[1].owner
    return _constant_value(owner) if getattr(owner, "name", None) == "arith.constant" else None


def _telling(sizes, predictions):
    """Sizes where the forms' predictions (per form, per size) differ, those that split the
    forms most evenly first (the fewest forms left whatever the lowering says)."""
    sample = max(16, 2_000_000 // len(predictions) ** 2)
    cols = np.nonzero((predictions != predictions[0]).any(axis=0))[0][:sample]
    p = predictions[:, cols]
    left = (p[:, None, :] == p[None, :, :]).sum(axis=1).max(axis=0)
    return sizes[cols[np.argsort(left, kind="stable")]]


def _settle(forms, k, probes, base, structure, base_ops):
    """The one of `forms` (functions fitting constant `k` at the probes so far) the lowering
    at sizes where they differ agrees with, and those probes. A size of another structure (a
    split factor divides it: `n // 4 + 1` and `n ceildiv 4` differ only at multiples of 4)
    still tells where `k` is a loop's extent (the same loop's there: the ops before it are the
    same, pre-order); None where SETTLE_TRIES lowerings do not settle it (a `T.where` bound
    exists only in one structure: no guess)."""
    var, extra = forms[0][1], []
    sizes = SPAN[:SETTLE_SIZES] - SPAN[0] + base[var]      # sizes of the base's family
    position = _loop_bound(base_ops, k)
    tries = 0
    while len(forms) > 1:
        predictions = np.array([_predict(f, {var: sizes}) for f in forms])
        for n in _telling(sizes, predictions):
            tries += 1
            if tries > SETTLE_TRIES:
                return None, extra
            probe = {**base, var: int(n)}
            mod, out, names = probes.lowered(probe)
            if names == structure:
                value = _constant_value(_ops(out)[k])
                extra.append((probe, mod, out))
            elif position is not None and names[:position + 1] == structure[:position + 1]:
                value = _bound_value(out, position)     # the same ops up to the loop
            else:
                continue
            forms = [f for f in forms if _predict(f, probe) == value]
            break
        else:
            return None, extra
    return (forms[0] if forms else None), extra


def fit(values, probes, dtypes):
    """How one changing constant follows the vars (see the module comment); None where no
    form does, a list of forms where several that differ elsewhere do (_settle)."""
    names = list(dtypes)
    if any(type(v) is float for v in values):
        var = next((n for n in names if all(v == p[n] for v, p in zip(values, probes))), None)
        if var is None:
            return None
        return ("float", var) if _is_float(dtypes[var]) else ("cast", var)   # T.Cast of an int
    return _affine(values, probes, names, dtypes) or _division(values, probes, names, dtypes)


def _affine_map(f, symbols: List[str]) -> ir.AffineMap:
    def sym(var):
        return ir.AffineSymbolExpr.get(symbols.index(var))
    const = ir.AffineConstantExpr.get
    if isinstance(f, dict):
        expr = const(f[""])
        for var, a in f.items():
            if var:
                expr = ir.AffineAddExpr.get(ir.AffineMulExpr.get(sym(var), const(a)), expr)
    else:
        _, var, c, d, a, b = f
        if c == d - 1:
            div = ir.AffineCeilDivExpr.get(sym(var), const(d))
        else:
            div = ir.AffineFloorDivExpr.get(ir.AffineAddExpr.get(sym(var), const(c)), const(d))
        expr = ir.AffineAddExpr.get(ir.AffineMulExpr.get(div, const(a)), const(b))
    return ir.AffineMap.get(0, len(symbols), [expr])


def _create(name, result, operands=(), **attributes):
    return ir.Operation.create(name, results=[result] if result else [], operands=list(operands),
                               attributes=attributes).result if result else None


def _set_dynamic_dims(kernel, args):
    """`?` for each parameter dimension that changes across the probes."""
    entry = kernel.regions[0].blocks[0]
    for i, shapes in args.items():
        t = ir.MemRefType(entry.arguments[i].type)
        dims = [d if len({s[axis] for s in shapes}) == 1 else ir.ShapedType.get_dynamic_size()
                for axis, d in enumerate(shapes[0])]
        entry.arguments[i].set_type(ir.MemRefType.get(dims, t.element_type,
                                                      memory_space=t.memory_space))
    ftype = ir.FunctionType(ir.TypeAttr(kernel.attributes["function_type"]).value)
    kernel.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(
        [a.type for a in entry.arguments], ftype.results))


@dataclasses.dataclass
class _Plan:
    """What changes with the vars, and how (see the module comment)."""
    name: str
    constants: list        # [(op index, values per probe)]
    fits: list             # per constant: its fit
    args: dict             # memref argument -> shapes per probe
    allocs: list           # [(op index, shapes per probe)]
    alloc_fits: list       # per heap buffer, per dimension: its fit, None where it is fixed
    sources: dict          # var -> where the kernel reads it (_sources)
    dtypes: dict


def _rewrite(module, plan: _Plan, shown):
    """The base probe's module (in place): dynamic dims, the vars read on entry, each
    changing constant and buffer size computed from them; its text before `lower-affine` goes
    to `shown`."""
    from tir_mlir.dtypes import mlir_type
    from tir_mlir.passes.lowering.common import run_pipeline
    ops = _ops(module)
    kernel = next(o for o in ops if o.name == "func.func" and
                  ir.StringAttr(o.attributes["sym_name"]).value == plan.name)
    entry = kernel.regions[0].blocks[0]
    index = ir.IndexType.get()
    with kernel.location:
        _set_dynamic_dims(kernel, plan.args)
    symbols, loaded = list(plan.dtypes), {}
    with ir.InsertionPoint.at_block_begin(entry), kernel.location:
        for var in symbols:
            kind, position, axis = plan.sources[var]
            arg = entry.arguments[position]
            if kind == "dim":
                c = _create("arith.constant", index, value=ir.IntegerAttr.get(index, axis))
                loaded[var] = _create("memref.dim", index, [arg, c])
            else:
                value = _create("memref.load", mlir_type(plan.dtypes[var]), [arg])
                loaded[var] = value if _is_float(plan.dtypes[var]) else \
                    _create("arith.index_cast", index, [value])

    def size(f):
        if isinstance(f, dict) and f[""] == 0 and list(f.values()).count(1) == 1 and len(f) == 2:
            return loaded[next(v for v in f if v)]          # the var itself
        used = [v for v in symbols if v in (f if isinstance(f, dict) else f[1:2])]
        return _create("affine.apply", index, [loaded[v] for v in used],
                       map=ir.AffineMapAttr.get(_affine_map(f, used)))

    for (k, values), f in zip(plan.constants, plan.fits):
        op = ops[k]
        if op.name != "arith.constant" or _constant_value(op) != values[0]:
            raise BuildError("the lowering changed between two runs")
        t = op.results[0].type
        with ir.InsertionPoint(op), op.location:
            if isinstance(f, tuple) and f[0] == "float":
                value = loaded[f[1]]
                if value.type != t:
                    raise BuildError("a float parameter used at another width")
            elif isinstance(f, tuple) and f[0] == "cast":
                i64 = ir.IntegerType.get_signless(64)
                value = _create("arith.sitofp", t, [_create("arith.index_cast", i64,
                                                            [loaded[f[1]]])])
            else:
                value = size(f)
                if t != index:
                    value = _create("arith.index_cast", t, [value])
        op.results[0].replace_all_uses_with(value)
        op.erase()
    for (k, shapes), dims in zip(plan.allocs, plan.alloc_fits):
        op = ops[k]
        t = ir.MemRefType(op.results[0].type)
        if op.name != "memref.alloc" or list(t.shape) != shapes[0]:
            raise BuildError("the lowering changed between two runs")
        new_type = ir.MemRefType.get(
            [d if f is None else ir.ShapedType.get_dynamic_size() for d, f in zip(t.shape, dims)],
            t.element_type, memory_space=t.memory_space)
        with ir.InsertionPoint(op), op.location:
            sizes = [size(f) for f in dims if f is not None]
            attrs = {"operandSegmentSizes": ir.DenseI32ArrayAttr.get([len(sizes), 0])}
            if "alignment" in op.attributes:
                attrs["alignment"] = op.attributes["alignment"]
            new = ir.Operation.create("memref.alloc", results=[new_type], operands=sizes,
                                      attributes=attrs)
        op.results[0].replace_all_uses_with(new.result)
        op.erase()
    shown.append(module.operation.get_asm(enable_debug_info=False))
    run_pipeline(module, "lower-affine", "symbolic sizes")


def _sources(func, count) -> Optional[Dict[str, tuple]]:
    """var -> ("dim", argument, axis) for a var some buffer dimension is, ("load", argument,
    None) for a scalar parameter (its 0-d buffer); None where a var has neither."""
    from tir_mlir.frontend import ast as A
    out, shapes = {}, func._shapes()
    for position, (_, dims) in enumerate(shapes):
        for axis, node in enumerate(dims):
            if isinstance(node, A.Name) and node.id in func.vars and node.id not in func.params:
                out.setdefault(node.id, ("dim", position, axis))
    scalars = scalar_params(func)
    for k, p in enumerate(scalars):
        if func.vars[p] not in SCALAR_DTYPES:
            return None
        out[p] = ("load", len(shapes) + k, None)
    if set(out) != set(func.vars) or len(shapes) + len(scalars) != count:
        return None
    return out


class DynamicKernel(GenericKernel):
    """The compiled kernel, called as a GenericKernel is (see the module comment); `mlir`: its
    scf-stage module (dynamic memrefs, sizes from affine.apply)."""

    def __init__(self, func, lib, probe_values, low, mlir):
        super().__init__(func, lib, probe_values)
        self.low, self.mlir = low, mlir

    def covers(self, values) -> bool:
        return not self.low or all(v >= self.low for n, v in values.items()
                                   if not _is_float(self.func.vars[n]))

    @classmethod
    def make(cls, func, target, kwargs):
        """The kernel; None where these lowerings cannot give it; False where the code at
        small sizes is not what the probes predict (no one kernel is right: specialize)."""
        names = list(func.vars)
        if kwargs.get("debug") or str(target).split()[0] not in ("llvm", "cpu", "c") or \
                not names or len(names) > len(PROBES[0]):
            return None
        low = lowest_covered(func)
        for family in PROBE_FAMILIES:
            if low > min(family[0]):
                continue        # the probes would not be above the source's constants
            found = _plan(func, target, family, low)
            if found is None:
                continue            # the structure changes with the sizes
            if found is False:
                return False        # wrong at small sizes: no one kernel
            if not found:
                return None         # it does not, but something else is not handled
            plan, mod0, base = found
            from tir_mlir.runtime.build import build
            shown = []
            try:
                lib = build(mod0, target, static_bounds=False,
                            rewrite_after=("scf", lambda m: _rewrite(m, plan, shown)), **kwargs)
            except BuildError:
                return None
            return cls(func, lib, base, low, shown[0])
        return None


def _vector_loops(mod) -> list:
    from tir_mlir.dialect.ops import Loop
    from tir_mlir.ir_walk import walk_all
    return [o for f in mod.module.body.operations for o in walk_all(f.operation)
            if Loop.is_loop(o) and Loop(o).kind == "vectorized" and Loop(o).constant_bounds]


def _dynamic_vector_loops(a, b) -> list:
    """Positions among the vectorized loops of those whose extent differs between two probe
    modules (vectorize.py leaves them to LLVM's loop vectorizer: a scalar loop at every size)."""
    from tir_mlir.dialect.ops import Loop
    la, lb = _vector_loops(a), _vector_loops(b)
    if len(la) != len(lb):
        return []
    return [k for k, (x, y) in enumerate(zip(la, lb)) if Loop(x).extent != Loop(y).extent]


class _Probes:
    """Probe modules, specialized, marked (_dynamic_vector_loops) and lowered to `scf` once."""

    def __init__(self, func, target):
        self.func, self.target, self.dynamic, self.done = func, target, [], {}

    def module(self, probe):
        from tir_mlir.passes.lowering.vectorize import DYNAMIC_EXTENT
        mod = _with_scalar_buffers(self.func.specialize(probe), self.func.name,
                                   scalar_params(self.func), dict(self.func.vars))
        loops = _vector_loops(mod)
        for k in self.dynamic:
            if k < len(loops):
                loops[k].attributes[DYNAMIC_EXTENT] = ir.UnitAttr.get()
        return mod

    def lowered(self, probe):
        """(the probe module, its scf-stage lowering, its op names)."""
        from tir_mlir.passes.lowering.pipeline import lower
        key = tuple(sorted(probe.items()))
        if key not in self.done:
            mod = self.module(probe)
            out = lower(mod.module, self.target, "scf", static_bounds=False)
            self.done[key] = (mod, out, [o.name for o in _ops(out)])
        return self.done[key]

    def matching(self, candidates, structure):
        """The first candidate probe lowered to `structure`, with its lowering; None if none."""
        for probe in candidates:
            mod, out, names = self.lowered(probe)
            if names == structure:
                return probe, mod, out
        return None


def _conditions(names) -> tuple:
    """How general a lowered structure is: its scf.if count (a split's `T.where`, gone where
    the factor divides the extent), then its size."""
    return names.count("scf.if"), len(names)


def _candidates(family, k, dtypes, low=0, base=None, var=None) -> List[Dict]:
    """The probes to try for set `k` of `family`, the set's own first, then alternates (the
    next primes; the next numbers of the same remainders for the one-less set): a size a split
    factor divides, even a derived extent (`ceildiv(n, 4)`), has another structure. The
    per-var set (`var`) changes only `var` from `base`; the optional sets have no alternates."""
    names = list(dtypes)

    def value(name, j):
        i = names.index(name)
        if k == len(family):                                    # the small sizes
            return SMALL_FLOATS[i] if _is_float(dtypes[name]) else \
                _primes(SMALL[i] + low, j + 1)[-1]
        if _is_float(dtypes[name]):
            return FLOAT_SETS[k][i]
        v = family[k][i]
        return v if not j else v + 2520 * j if k == 3 else _primes(v + 1, j)[-1]
    count = 1 if 3 < k < len(family) else ALTERNATES
    if var is not None:
        return [{**base, var: value(var, j)} for j in range(count)]
    return [{n: value(n, j) for n in names} for j in range(count)]


def _plan(func, target, family, low):
    """(the _Plan, the base probe's module, the base probe) for this probe family; None where
    the lowered structure changes with the sizes, False where the plan is wrong at small
    sizes, () where something else is not handled."""
    from tir_mlir.context import get_context
    from tir_mlir.script.pyfile import _constant
    dtypes = dict(func.vars)
    bases = _candidates(family, 0, dtypes)
    first, second = bases[:2]
    if any(type(_constant(d, first)) is not int for _, dims in func._shapes() for d in dims):
        return ()           # a shape the call check could not compute (`T.int64(8)`)
    probes = _Probes(func, target)
    try:
        with get_context(), ir.Location.unknown():
            a, b = probes.module(first), probes.module(second)
            probes.dynamic = _dynamic_vector_loops(a, b)
            if _long_unrolled_loop(probes.module(first).module):
                return ()
            # the structure with the most conditions: where no split factor divides (a
            # `T.where` is an scf.if)
            structure = max((probes.lowered(p)[2] for p in bases), key=_conditions)
            chosen = [probes.matching(bases, structure)]
            base = chosen[0][0]
            for var in dtypes:
                chosen.append(probes.matching(_candidates(family, 1, dtypes, base=base,
                                                          var=var), structure))
            for k in range(2, len(family)):
                found = probes.matching(_candidates(family, k, dtypes), structure)
                if found is not None or k == 2:         # the later sets: where they match
                    chosen.append(found)
            if None in chosen:
                return None
            found = _differences([out for _, _, out in chosen], func.name)
            if found is None:
                return None
            entry = next(o for o in _ops(chosen[0][2]) if o.name == "func.func" and
                         ir.StringAttr(o.attributes["sym_name"]).value == func.name)
            sources = _sources(func, len(entry.regions[0].blocks[0].arguments))
            values = [p for p, _, _ in chosen]
            constants, args, allocs = found
            fits = [fit(v, values, dtypes) for _, v in constants]
            extra = []          # probes that chose between forms that fit alike
            for i, ((k, _), f) in enumerate(zip(constants, fits)):
                if isinstance(f, list):
                    fits[i], more = _settle(f, k, probes, base, structure,
                                            _ops(chosen[0][2]))
                    extra += more
            alloc_fits = [[None if len({s[axis] for s in shapes}) == 1 else
                           fit([s[axis] for s in shapes], values, dtypes)
                           for axis in range(len(shapes[0]))] for _, shapes in allocs]
            if sources is None or any(f is None for f in fits) or \
                    any(f is None or isinstance(f, list) or
                        isinstance(f, tuple) and f[0] in ("float", "cast")
                        for dims, (_, shapes) in zip(alloc_fits, allocs)
                        for axis, f in enumerate(dims) if len({s[axis] for s in shapes}) != 1):
                return ()
            plan = _Plan(func.name, constants, fits, args, allocs, alloc_fits, sources, dtypes)
            smalls = _candidates(family, len(family), dtypes, low)
            for p in smalls:
                probes.lowered(p)
            if any(_conditions(names)[0] > _conditions(structure)[0]
                   for _, _, names in probes.done.values()):
                return None     # a probe has more: the chosen one lacks some `T.where`
            if not all(_agrees_at(plan, chosen[0][2], e) for e in extra):
                return ()
            small = probes.matching(smalls, structure)
            if small is not None and not _agrees_at(plan, chosen[0][2], small):
                return False
            return plan, chosen[0][1], base
    except (TIRError, ScheduleError, BuildError):
        return ()


def _predict(f, probe):
    """The value fit `f` gives at `probe`."""
    if isinstance(f, dict):
        return f[""] + sum(a * probe[v] for v, a in f.items() if v)
    if f[0] in ("float", "cast"):
        return float(probe[f[1]])
    _, var, c, d, a, b = f
    return a * ((probe[var] + c) // d) + b


def _agrees_at(plan, base_lowered, small) -> bool:
    """Whether the lowering at small sizes (`small`: the probe, its module and lowering, of the
    plan's structure) is what the plan predicts: a form the large probes all see as one
    constant (a `min(n, 16)` a schedule made) shows there."""
    probe, _, lowered = small
    found = _differences([base_lowered, lowered], plan.name)
    if found is None:
        return False
    ops = _ops(lowered)
    predicted = {k: _predict(f, probe) for (k, _), f in zip(plan.constants, plan.fits)}
    if any(k not in predicted for k, _ in found[0]) or \
            any(_constant_value(ops[k]) != v for k, v in predicted.items()):
        return False
    sizes = {k: [None if f is None else _predict(f, probe) for f in dims]
             for (k, _), dims in zip(plan.allocs, plan.alloc_fits)}
    return all(k in sizes and all(p is None and s == s0 or p == s for p, s, s0 in
                                  zip(sizes[k], shapes[1], shapes[0]))
               for k, shapes in found[2])
