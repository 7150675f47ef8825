"""Stage `vectorize-loops` (affine level, after `unroll-loops`): a `T.vectorized` innermost loop
becomes one straight-line copy of its body on `vector<W x T>` values (W = the extent).

    for v in T.vectorized(16):                      %a = vector.load %A[%i, %j0] : vector<16xf32>
        C[i, j0 + v] = C[i, j0 + v] + A[i, j0 + v] * s[0]
                                              =>    %s = vector.broadcast (memref.load %s[0])
                                                    ... arith.mulf/addf on vectors
                                                    vector.store %r, %C[%i, %j0]

Each value is uniform (the same on every lane) or varying. An access whose indices are uniform
except the last, which is `v + uniform` (stride 1), is a vector load/store at lane 0's address
(the IV is replaced by the loop's lower bound); a load at a uniform address stays scalar and is
broadcast where a vector is needed. Elementwise arith/math ops take vector types. Anything else
(strided or gathered accesses, a store to a uniform address, nested regions, an index value used
as data) leaves the loop to LLVM's loop vectorizer (the hint added by `affine-to-scf`), so this
stage never changes what a program computes. In-bounds vector loads/stores and values kept in
vector registers are what fast CPU code needs (docs: MLIR_NOTES, "What fast CPU code needs").
"""
from mlir import ir
from mlir.dialects import vector

from tir_mlir.dialect.ops import Loop
from tir_mlir.passes.lowering.common import functions, index_const, walk

MAX_LANES = 64
# Ops applied lane-wise: the same op name on vector types.
ELEMENTWISE = {
    "arith.addf", "arith.subf", "arith.mulf", "arith.divf", "arith.negf", "arith.maximumf",
    "arith.minimumf", "arith.maxnumf", "arith.minnumf", "arith.remf",
    "arith.addi", "arith.subi", "arith.muli", "arith.andi", "arith.ori", "arith.xori",
    "arith.maxsi", "arith.minsi", "arith.maxui", "arith.minui", "arith.divsi", "arith.divui",
    "arith.remsi", "arith.remui", "arith.shli", "arith.shrsi", "arith.shrui",
    "arith.cmpf", "arith.cmpi", "arith.select",
    "arith.extf", "arith.truncf", "arith.sitofp", "arith.uitofp", "arith.fptosi", "arith.fptoui",
    "arith.extsi", "arith.extui", "arith.trunci",
}
UNIFORM, STRIDE1, VARYING = "uniform", "stride1", "varying"


class VectorizeLoops:
    name = "vectorize-loops"

    def __call__(self, module: ir.Module):
        for f in functions(module):
            for op in [o for o in walk(f) if o.name == "affine.for"]:
                loop = Loop(op)
                if loop.kind == "vectorized" and loop.step == 1 and \
                        1 < loop.extent <= MAX_LANES and _plan(loop) is not None:
                    _vectorize(loop, _plan(loop))


def _plan(loop: Loop):
    """{value: UNIFORM | STRIDE1 | VARYING} for the body's results, or None when the loop
    cannot be vectorized here."""
    iv, shape = loop.iv, {}

    def kind(v):
        if v == iv:
            return STRIDE1
        for k, s in shape.items():
            if k == v:
                return s
        return UNIFORM          # defined outside the loop

    for o in list(loop.body.operations)[:-1]:
        o = o.operation
        if len(o.regions):
            return None
        name, args = o.name, [kind(v) for v in o.operands]
        if name in ("memref.load", "memref.store") and str(ir.MemRefType(
                o.operands[0 if name == "memref.load" else 1].type).element_type) == "i1":
            return None         # bool buffers become bytes later (bool-buffers-to-i8)
        if name == "arith.constant":
            res = UNIFORM
        elif name == "affine.apply":
            res = _apply_shape(o, args)
        elif all(a == UNIFORM for a in args) and name not in ("memref.store", "memref.load"):
            res = UNIFORM if name in ELEMENTWISE or name.startswith("math.") or \
                name == "arith.index_cast" else None
            if res is None:
                return None
        elif name in ("arith.addi", "arith.subi") and str(o.results[0].type) == "index":
            if VARYING in args or (name == "arith.subi" and args[1] != UNIFORM) or \
                    args == [STRIDE1, STRIDE1]:
                return None
            res = STRIDE1
        elif name == "memref.load":
            res = _access_shape(args[1:])
            if res is None:
                return None
            res = UNIFORM if res == UNIFORM else VARYING
        elif name == "memref.store":
            if args[0] == STRIDE1 or _access_shape(args[2:]) != STRIDE1:
                return None
            res = None
        elif name in ELEMENTWISE or name.startswith("math."):
            if STRIDE1 in args or any(isinstance(r.type, (ir.IndexType, ir.VectorType))
                                      for r in o.results) or \
                    any(isinstance(v.type, ir.IndexType) for v in o.operands):
                return None
            res = VARYING
        else:
            return None
        for r in o.results:
            shape[r] = res
    return shape


def _apply_shape(o, args):
    """An affine.apply whose result is `iv + (uniform terms)`: STRIDE1; one that does not
    use the IV: UNIFORM."""
    if STRIDE1 not in args:
        return UNIFORM if VARYING not in args else None
    m = ir.AffineMapAttr(o.attributes["map"]).value
    if VARYING in args or m.n_symbols:
        return None
    # d_p -> d_p + 1 for every stride-1 operand: the result must grow by exactly 1.
    shift = ir.AffineMap.get(m.n_dims, 0, [ir.AffineExpr.get_dim(p) + (1 if a == STRIDE1 else 0)
                                           for p, a in enumerate(args)])
    expr = m.results[0]
    diff = ir.AffineExpr.simplify_affine_expr(expr.compose(shift) - expr, m.n_dims, 0)
    d = diff.maybe_downcast()
    if not isinstance(d, ir.AffineConstantExpr) or d.value not in (0, 1):
        return None
    return STRIDE1 if d.value == 1 else UNIFORM


def _access_shape(index_kinds):
    """UNIFORM (scalar access), STRIDE1 (contiguous vector access) or None."""
    if all(k == UNIFORM for k in index_kinds):
        return UNIFORM
    if index_kinds and index_kinds[-1] == STRIDE1 and all(k == UNIFORM for k in index_kinds[:-1]):
        return STRIDE1
    return None


def _vectorize(loop: Loop, shape):
    """Emit the body once before the loop on vectors of `loop.extent` lanes; erase the loop."""
    op, lanes = loop.op, loop.extent
    loc = op.location
    with ir.InsertionPoint(op):
        lb = index_const(loop.min, loc)
    loop.iv.replace_all_uses_with(lb)
    vec = []                        # (varying scalar result, its vector value)
    dead = []                       # the scalar ops replaced, erased users first at the end

    def as_vector(v):
        for k, x in vec:
            if k == v:
                return x
        return vector.BroadcastOp(ir.VectorType.get([lanes], v.type), v, loc=loc).result

    for o in list(loop.body.operations)[:-1]:
        o = o.operation
        o.move_before(op)
        varying = len(o.results) and shape.get(o.results[0]) == VARYING
        with ir.InsertionPoint(op):
            if o.name == "memref.load" and varying:
                new = [vector.LoadOp(ir.VectorType.get([lanes], o.results[0].type),
                                     o.operands[0], list(o.operands)[1:], loc=loc).result]
            elif o.name == "memref.store":
                vector.StoreOp(as_vector(o.operands[0]), o.operands[1], list(o.operands)[2:],
                               loc=loc)
                new = []
            elif varying:
                new = ir.Operation.create(
                    o.name, results=[ir.VectorType.get([lanes], r.type) for r in o.results],
                    operands=[as_vector(v) for v in o.operands],
                    attributes={n: o.attributes[n] for n in o.attributes}, loc=loc).results
            else:
                continue
        vec.extend(zip(o.results, new))
        dead.append(o)
    for o in reversed(dead):
        o.erase()
    op.erase()
