"""compute_inline / reverse_compute_inline: fold an elementwise block into its neighbour.

compute_inline(B): the producer's expression replaces every load of its buffer, with the
producer's iter vars replaced by the load's indices; the block, its emptied loops and (when
nothing else uses it) its `T.alloc_buffer` disappear:

    B[vi, vj] = A[vi, vj] * 2           ->
    C[vi, vj] = B[vj, vi] + 1                   C[vi, vj] = A[vj, vi] * 2 + 1

reverse_compute_inline(C): the consumer's expression is folded into its producer's store; the
producer (keeping its name) then writes the consumer's buffer directly:

    B[vi, vj] = A[vi, vj] * 2           ->
    C[vi, vj] = T.max(B[vi, vj], 0)             C[vi, vj] = T.max(A[vi, vj] * 2, 0)    # block "B"

Legality (TVM's): the inlined block is complete and spatial (no reduction iter var, no init),
has one store whose indices are distinct iter vars (injective), is the only writer of its
buffer, and does not read it. compute_inline: the buffer is not a function parameter (an
output cannot be inlined) and the producer's expression uses only iter vars that index the
store. reverse_compute_inline: every load of the buffer in the consumer has the same
indices, a bijective affine map of its iter vars (fusions, splits, offsets, one reversed iter
var: read_inverse.py) inverted to write each consumer iter var from the producer's store
indices; the buffer has exactly one producer, complete and spatial with a single store that
writes a box bijectively, which covers what the consumer reads; when the producer computes
more, its T.where keeps only the consumer's iterations (TVM 0.21's form); no other reader.
Differs from TVM 0.21 on purpose: TVM accepts a buffer with another reader and returns a
broken program (the buffer's allocation is dropped while the other block still reads it, the
value never written); we reject it.
"""

from typing import List

from mlir import ir
from mlir.dialects import arith, memref

from tir_mlir.analysis.shapes import buffer_shape
from tir_mlir.analysis.symbolic import prove_le, prove_lt, show, smax, smin
from tir_mlir.dialect.ops import Block, index_dtype_attr
from tir_mlir.errors import ScheduleError
from tir_mlir.analysis.structure import (
    block_reads_writes,
    blocks_under,
    func_of,
    is_ancestor,
    op_of,
    value_range,
    walk,
)
from tir_mlir.analysis.buffer_util import buffer_name, is_func_arg
from tir_mlir.passes.schedule.compute_at import _remove_empty_loops
from tir_mlir.dialect.ops import INDEX_DTYPE
from tir_mlir.ir.index_dtypes import mark_constants
from tir_mlir.analysis import index
from tir_mlir.analysis.buffer_util import NotAffine, substitute, to_affine
from tir_mlir.analysis.linear import linear
from tir_mlir.analysis.expr_tree import Subst, clone_tree, erase_with_operands
from tir_mlir.analysis.read_inverse import Group, NotInvertible, digit_of, read_groups
from tir_mlir.analysis.region_cover import access, iter_var_of
from tir_mlir.analysis.structure import erase


def _single_store(blk: Block, who: str, distinct_iters: bool = True) -> ir.Operation:
    """The one store of a complete spatial block, whose indices are distinct iter vars
    (`distinct_iters`; else checked by the caller)."""
    if blk.init is not None or any(t != "S" for t in blk.iter_types):
        raise ScheduleError(
            f"{who}: the block is not a complete spatial block (it has "
            f"{'an init' if blk.init is not None else 'non-spatial iter vars'})"
        )
    ops = list(walk(blk.op))
    bad = [
        o.name for o in ops if o.name in ("tir.block", "affine.for", "tir.evaluate", "memref.alloc")
    ]
    if bad:
        raise ScheduleError(f"{who}: the block body is not a single store (it holds {bad[0]})")
    stores = [o for o in ops if o.name == "memref.store"]
    if len(stores) != 1:
        raise ScheduleError(f"{who}: the block must have exactly one store, it has {len(stores)}")
    store = stores[0]
    ks = [iter_var_of(blk, v) for v in access(store)[1]]
    if distinct_iters and (None in ks or len(set(ks)) != len(ks)):
        raise ScheduleError(
            f"{who}: the store indices of buffer "
            f"{buffer_name(access(store)[0])!r} are not distinct iter vars "
            f"(the block is not injective)"
        )
    if any(access(o)[0] == access(store)[0] for o in ops if o.name == "memref.load"):
        raise ScheduleError(f"{who}: the block reads the buffer it writes")
    return store


def _writers_readers(func, buf, skip):
    writers, readers = [], []
    for b in blocks_under(func):
        if b == skip:
            continue
        reads, writes = block_reads_writes(b)
        if any(w == buf for w in writes):
            writers.append(b)
        if any(r == buf for r in reads):
            readers.append(b)
    return writers, readers


def _check_uses(buf, allowed, who):
    """Every use of the buffer is a load/store inside one of the `allowed` blocks."""
    for use in buf.uses:
        user = op_of(use.owner)
        if user.name not in ("memref.load", "memref.store") or not any(
            is_ancestor(b, user) for b in allowed
        ):
            raise ScheduleError(
                f"{who}: buffer {buffer_name(buf)!r} is used outside blocks (by {user.name})"
            )


def _drop_block(block_op: ir.Operation, buf: ir.Value):
    parent = block_op.parent
    erase(block_op)
    _remove_empty_loops(parent)
    if not is_func_arg(buf) and not any(True for _ in buf.uses):
        erase(op_of(buf.owner))


def _plan(block):
    """compute_inline's checks, nothing changed: (the block, its store, the buffer, iter var
    -> position in the store's index)."""
    blk = Block(op_of(block))
    who = f"compute_inline: block {blk.name!r}"
    store = _single_store(blk, who)
    buf, idx = access(store)
    if is_func_arg(buf):
        raise ScheduleError(
            f"{who}: cannot inline a block writing the output buffer {buffer_name(buf)!r}"
        )
    func = func_of(blk.op)
    writers, readers = _writers_readers(func, buf, blk.op)
    if writers:
        raise ScheduleError(
            f"{who}: buffer {buffer_name(buf)!r} is also written by block "
            f"{Block(writers[0]).name!r}"
        )
    _check_uses(buf, readers + [blk.op], who)
    _check_consumers_covered(blk, idx, buf, readers, who)
    stored = {iter_var_of(blk, v): d for d, v in enumerate(idx)}
    used = [iter_var_of(blk, v) for o in walk(blk.op) for v in o.operands]
    free = sorted({k for k in used if k is not None and k not in stored})
    if free:
        raise ScheduleError(
            f"{who}: iter var {blk.iter_names[free[0]]} is used by the "
            f"expression but does not index the store"
        )
    return blk, store, buf, stored


def can_compute_inline(block) -> bool:
    """Whether compute_inline accepts the block (TVM's CanComputeInline)."""
    try:
        _plan(block)
    except ScheduleError:
        return False
    return True


def compute_inline(block) -> None:
    blk, store, buf, stored = _plan(block)
    value = store.operands[0]
    loads: List[ir.Operation] = [
        op_of(u.owner) for u in buf.uses if op_of(u.owner).name == "memref.load"
    ]
    for load in loads:
        indices = access(load)[1]
        subst = {}
        for arg in blk.body.arguments:
            k = ir.BlockArgument(arg).arg_number
            if k in stored:
                subst[arg] = _materializer(indices[stored[k]])
        new = clone_tree(value, load, subst, within=blk.op)
        load.results[0].replace_all_uses_with(new)
        erase_with_operands(load)
    _drop_block(blk.op, buf)


def _written_box(blk: Block, idx) -> list:
    """Per store dimension, the inclusive range of indices the producer writes: its iter
    var's domain, narrowed by the T.where bounds on the loop it is bound to."""
    box = []
    binds = blk.bindings.results
    for v in idx:
        k = iter_var_of(blk, v)
        assert k is not None  # _single_store checked: the store indices are iter vars
        lo, ext = blk.domains[k]
        lo_k, hi_k = lo, lo + ext - 1
        d = linear(binds[k])
        if (
            blk.predicate is not None
            and d is not None
            and d.const == 0
            and list(d.terms.values()) == [1]
        ):
            dim = next(iter(d.terms))
            for c in blk.predicate.constraints:
                lin = linear(c.expr)
                if c.is_eq or lin is None or list(lin.terms) != [dim]:
                    continue
                terms, const = lin.terms, lin.const
                if terms[dim] == 1 and isinstance(lo_k, int):  # dim + const >= 0
                    lo_k = max(lo_k, -const)
                elif terms[dim] == -1 and isinstance(hi_k, int):  # const - dim >= 0
                    hi_k = min(hi_k, const)
        box.append((lo_k, hi_k))
    return box


def _check_consumers_covered(blk: Block, idx, buf, readers, who):
    """TVM's stage pipeline: what each consumer reads, the producer writes (its T.where
    may leave part of the buffer unwritten)."""
    box = _written_box(blk, idx)
    for r in readers:
        rb = Block(r)
        ranges = {k: (lo, lo + ext - 1) for k, (lo, ext) in enumerate(rb.domains)}
        for o in walk(r):
            if o.name != "memref.load" or access(o)[0] != buf:
                continue
            leaves = list(rb.body.arguments)
            try:
                lins = [
                    index.from_affine(
                        to_affine(v, leaves), [index.var(k) for k in range(len(leaves))], ranges
                    )
                    for v in access(o)[1]
                ]
            except (NotAffine, ValueError):
                continue
            if len(leaves) > len(rb.body.arguments):
                continue
            shape = buffer_shape(buf)
            for d, (lin, (wlo, whi)) in enumerate(zip(lins, box)):
                lo, hi = index.bounds(lin, ranges)
                # clipped to the buffer (TVM); symbolic bounds (`n - 1`) compare as proved
                clipped_lo, clipped_hi = smax(lo, 0), smin(hi, shape[d] - 1)
                lo = lo if clipped_lo is None else clipped_lo
                hi = hi if clipped_hi is None else clipped_hi
                if not prove_le(wlo, lo) or not prove_le(hi, whi):
                    raise ScheduleError(
                        f"{who}: the scope is not a stage pipeline: block {rb.name!r} reads "
                        f"[{lo}, {hi + 1}) of dimension {d} of buffer {buffer_name(buf)!r}, "
                        f"which the block writes only in [{wlo}, {whi + 1})"
                    )


def _materializer(v: ir.Value):
    """A fresh copy of index value `v` for each use (block arguments are shared as they are)."""
    return lambda user: clone_tree(v, user, {})


def reverse_compute_inline(block) -> None:
    cons = Block(op_of(block))
    who = f"reverse_compute_inline: block {cons.name!r}"
    if cons.init is not None or any(t != "S" for t in cons.iter_types):
        raise ScheduleError(f"{who}: the block is not a complete spatial block")
    if cons.predicate is not None:
        raise ScheduleError(
            f"{who}: the block has a T.where: the block should be covered by "
            f"the producer block, which computes every element it writes"
        )
    func = func_of(cons.op)
    cstores = [o for o in walk(cons.op) if o.name == "memref.store"]
    if len(cstores) != 1 or any(
        o.name in ("tir.block", "affine.for", "tir.evaluate") for o in walk(cons.op)
    ):
        raise ScheduleError(f"{who}: the block body must be a single store")
    cstore = cstores[0]
    out_buf = access(cstore)[0]
    # The buffer to fold away: the one this block reads that another block produces.
    candidates = []
    reads = block_reads_writes(cons.op)[0]
    for r in reads:
        if r == out_buf:
            raise ScheduleError(f"{who}: the block reads the buffer it writes")
        if _writers_readers(func, r, cons.op)[0]:
            candidates.append(r)
    if len(candidates) != 1:
        raise ScheduleError(  # TVM's words, then what it means here
            f"{who}: The block is only allowed to read a single buffer region, but it reads "
            f"{len(reads)} region(s): it must read exactly one buffer produced by another "
            f"block, it reads {len(candidates)}"
        )
    buf = candidates[0]
    writers, readers = _writers_readers(func, buf, cons.op)
    if len(writers) != 1:
        raise ScheduleError(
            f"{who}: buffer {buffer_name(buf)!r} has {len(writers)} producers "
            f"(exactly one is required)"
        )
    readers = [r for r in readers if r != writers[0]]
    if readers:
        raise ScheduleError(
            f"{who}: buffer {buffer_name(buf)!r} is also read by block {Block(readers[0]).name!r}"
        )
    if is_func_arg(buf):
        raise ScheduleError(f"{who}: cannot fold away the function parameter {buffer_name(buf)!r}")
    prod = Block(writers[0])
    pwho = f"{who}: producer block {prod.name!r}"
    if prod.init is not None and all(t == "S" for t in prod.iter_types):
        return _reverse_into_accumulator(cons, prod, buf, cstore, who, pwho)
    pstore = _single_store(prod, pwho, distinct_iters=False)
    _check_uses(buf, [cons.op, prod.op], who)
    loads = [o for o in walk(cons.op) if o.name == "memref.load" and access(o)[0] == buf]
    groups = _invert_read(cons, loads, buf, who)
    pvalue, pidx = pstore.operands[0], access(pstore)[1]
    ps = _store_lins(prod, pstore, pwho)
    ranges = {k: (lo, lo + ext - 1) for k, (lo, ext) in enumerate(prod.domains)}
    _check_cover(prod, ps, ranges, groups, buf, who)
    iters = _inverse_iters(cons, groups, prod, pidx, _unit_reads(cons, loads[0], buf))
    conds = _in_domain(cons, ps, ranges, groups)

    subst: Subst = {arg: iters[k] for k, arg in enumerate(cons.body.arguments)}
    for load in loads:
        subst[load.results[0]] = lambda user: clone_tree(pvalue, user, {}, within=prod.op)
    new_value = clone_tree(cstore.operands[0], pstore, subst, within=cons.op)
    new_idx = [clone_tree(v, pstore, subst, within=cons.op) for v in access(cstore)[1]]
    new_store = cstore.clone(ip=ir.InsertionPoint(pstore))
    new_store.operands[0] = new_value
    for k, v in enumerate(new_idx):
        new_store.operands[2 + k] = v
    erase_with_operands(pstore)
    if conds:  # the producer computes more than the consumer read: TVM's T.where
        _add_predicate(prod, conds)
    _drop_block(cons.op, buf)


def _reverse_into_accumulator(cons: Block, prod: Block, buf, cstore, who, pwho) -> None:
    """reverse_compute_inline of a copy (`C[g(v)] = B[f(v)]`) into a producer that
    accumulates into B with a T.init and only spatial iters (TVM's test_inline_with_reduction):
    every access of B in the producer, init and update, becomes the access of C at the copy's
    index, so the producer accumulates into C directly."""
    loads = [o for o in walk(cons.op) if o.name == "memref.load" and access(o)[0] == buf]
    if len(loads) != 1 or cstore.operands[0] != loads[0].result:
        raise ScheduleError(
            f"{pwho}: the block has an init; only a copy of its buffer "
            f"(`C[...] = {buffer_name(buf)}[...]`) can be inlined into it"
        )
    stores = [o for o in walk(prod.op) if o.name == "memref.store" and access(o)[0] == buf]
    body_stores = [s for s in stores if not _in_init(prod, s)]
    if len(body_stores) != 1 or len(stores) != 2:
        raise ScheduleError(
            f"{pwho}: the block must store its buffer once in its init and once in its update"
        )
    groups = _invert_read(cons, loads, buf, who)
    ps = _store_lins(prod, body_stores[0], pwho)
    ranges = {k: (lo, lo + ext - 1) for k, (lo, ext) in enumerate(prod.domains)}
    _check_cover(prod, ps, ranges, groups, buf, who)
    if _in_domain(cons, ps, ranges, groups):
        raise ScheduleError(
            f"{pwho}: the block computes more than the copy reads (a T.where would skip its init)"
        )
    out_buf = access(cstore)[0]
    unit_reads = _unit_reads(cons, loads[0], buf)
    accesses_of_buf = [
        o
        for o in walk(prod.op)
        if o.name in ("memref.store", "memref.load") and access(o)[0] == buf
    ]
    for acc in accesses_of_buf:
        iters = _inverse_iters(cons, groups, prod, access(acc)[1], unit_reads)
        subst: Subst = {arg: iters[k] for k, arg in enumerate(cons.body.arguments)}
        idx = [clone_tree(v, acc, subst, within=cons.op) for v in access(cstore)[1]]
        with ir.InsertionPoint(acc), acc.location:
            if acc.name == "memref.store":
                memref.StoreOp(acc.operands[0], out_buf, idx)
            else:
                acc.results[0].replace_all_uses_with(memref.LoadOp(out_buf, idx).result)
        erase_with_operands(acc)
    _drop_block(cons.op, buf)


def _in_init(blk: Block, op: ir.Operation) -> bool:
    """Whether `op` is a statement of the block's T.init."""
    return blk.init is not None and any(o == op for o in blk.init.operations)


def _invert_read(cons: Block, loads, buf, who) -> List[Group]:
    """The consumer's (single) read of `buf` as groups of fused iter vars (read_inverse.py)."""
    args = list(cons.body.arguments)
    reads = set()
    for load in loads:
        leaves = list(args)
        try:
            exprs = [to_affine(v, leaves) for v in access(load)[1]]
        except NotAffine as e:
            raise ScheduleError(
                f"{who}: the read of buffer {buffer_name(buf)!r} is not an "
                f"affine function of the block's iter vars ({e})"
            ) from None
        if len(leaves) > len(args):
            raise ScheduleError(
                f"{who}: the read of buffer {buffer_name(buf)!r} depends on "
                f"a value other than the block's iter vars"
            )
        reads.add(tuple(exprs))
    if len({tuple(str(e) for e in r) for r in reads}) != 1:
        raise ScheduleError(
            f"{who}: the block reads buffer {buffer_name(buf)!r} at "
            f"different indices; all its loads must be the same"
        )
    mins, extents = zip(*cons.domains)
    try:
        return read_groups(
            next(iter(reads)), mins, extents, cons.iter_names, unit_dims=_unit_dims(buf)
        )
    except NotInvertible as e:
        raise ScheduleError(
            f"{who}: the read of buffer {buffer_name(buf)!r} is not a "
            f"bijective affine map of the block's iter vars: {e}"
        ) from None


def _unit_dims(buf: ir.Value) -> frozenset:
    """The buffer's dimensions of size 1 (index 0 there: a unit iter var, not a fusion)."""
    return frozenset(d for d, n in enumerate(ir.MemRefType(buf.type).shape) if n == 1)


def _store_lins(prod: Block, pstore, who) -> List[index.Lin]:
    """The producer's store indices over its iter vars; the store must write a box, each
    element once (a bijective affine map, like the reads the consumer may have)."""
    args = list(prod.body.arguments)
    leaves = list(args)
    try:
        exprs = [to_affine(v, leaves) for v in access(pstore)[1]]
        if len(leaves) > len(args):
            raise NotAffine("it depends on a value other than the iter vars")
        mins, extents = zip(*prod.domains) if prod.domains else ((), ())
        read_groups(exprs, mins, extents, prod.iter_names, unit_dims=_unit_dims(access(pstore)[0]))
    except (NotAffine, NotInvertible) as e:
        raise ScheduleError(
            f"{who}: its store is not a bijective affine map of its iter vars: {e}"
        ) from None
    ranges = {k: (lo, lo + ext - 1) for k, (lo, ext) in enumerate(prod.domains)}
    return [index.from_affine(e, [index.var(k) for k in range(len(args))], ranges) for e in exprs]


def _check_cover(prod: Block, ps, ranges, groups: List[Group], buf, who):
    """Every element the consumer reads is one the producer writes."""
    for g in groups:
        for p in g.pieces:
            lo, hi = index.bounds(ps[p.dim], ranges)
            rlo, rhi = g.image(p)
            if not prove_le(lo, rlo) or not prove_le(rhi, hi):
                raise ScheduleError(
                    f"{who}: the block should be covered by the producer block {prod.name!r}: "
                    f"it reads [{rlo}, {rhi + 1}) of dimension {p.dim} of buffer "
                    f"{buffer_name(buf)!r}, the producer writes [{lo}, {hi + 1})"
                )


def _index_const(v: int, dtype: str = "int32") -> ir.Value:
    c = arith.ConstantOp(ir.IndexType.get(), v)
    if dtype == "int64":
        c.attributes[INDEX_DTYPE] = index_dtype_attr("int64")
    return c.result


def _unit_reads(cons: Block, load, buf) -> dict:
    """{consumer iter var k: buffer dim d} where a size-1 dim d is read at a unit iter var k
    itself (`D[vn, ...]`): k takes the producer's index there, as in TVM."""
    args = list(cons.body.arguments)
    out = {}
    for d, v in enumerate(access(load)[1]):
        if d in _unit_dims(buf) and v in args and cons.domains[args.index(v)][1] == 1:
            out[args.index(v)] = d
    return out


def _inverse_iters(cons: Block, groups: List[Group], prod: Block, pidx, unit_reads) -> list:
    """Per consumer iter var, a maker of its value from the producer's store indices:
    F = s_low + s_next * div + ... (TVM's order), iter = F // stride % extent; a unit iter
    var read at a size-1 dim (`unit_reads`) is the producer's index there."""

    def piece(p, user):
        s = clone_tree(pidx[p.dim], user, {}, within=prod.op)
        s = s if p.off == 0 else arith.SubIOp(s, _index_const(p.off)).result
        return s if p.sign == 1 else arith.MulIOp(s, _index_const(-1)).result

    def fused(g, user):
        f = piece(g.pieces[0], user)
        for p in g.pieces[1:]:
            f = arith.AddIOp(f, arith.MulIOp(piece(p, user), _index_const(p.div)).result).result
        return f

    def maker(k):
        lo, ext = cons.domains[k]
        g = next((g for g in groups if k in g.coeffs), None)

        def make(user):
            with ir.InsertionPoint(user):
                if g is None and k in unit_reads:
                    return clone_tree(pidx[unit_reads[k]], user, {}, within=prod.op)
                if g is None:
                    return _index_const(lo, cons.index_dtypes[k])
                div, mod = digit_of(g, k)
                v = fused(g, user)
                if div is not None:
                    v = arith.FloorDivSIOp(v, _index_const(div)).result
                if mod is not None and len(g.coeffs) > 1:
                    v = ir.Operation.create(
                        "tir.call",
                        results=[ir.IndexType.get()],
                        operands=[v, _index_const(mod)],
                        attributes={"callee": ir.StringAttr.get("floormod")},
                    ).result
                if lo:
                    v = arith.AddIOp(v, _index_const(lo)).result
                return mark_constants(v)

        return make

    return [maker(k) for k in range(len(cons.iter_names))]


def _in_domain(cons: Block, ps, ranges, groups: List[Group]) -> list:
    """The conditions `e >= 0` over the producer's iter vars (TVM's simplified form) under
    which its iteration is one the consumer had: each consumer iter var in its domain; each
    with the comparison TVM would print it with (Block.where_spelling)."""
    conds = []
    for k, (lo, ext) in enumerate(cons.domains):
        g = next((g for g in groups if k in g.coeffs), None)
        if g is None:
            continue
        f = index.Lin()
        for p in reversed(g.pieces):  # highest digit first, as TVM's simplifier
            f = f + (ps[p.dim] + index.const(-p.off)).scale(p.div * p.sign)
        div, mod = digit_of(g, k)
        t = f if div is None else index.floordiv(f, div, ranges)
        t = t if mod is None else index.mod(t, mod, ranges)
        t = t + index.const(lo)
        tlo, thi = index.bounds(t, ranges)
        if not all(isinstance(x, int) for x in (tlo, thi, lo, ext)):
            if prove_le(lo, tlo) and prove_lt(thi, lo + ext):
                continue  # symbolic, and always in the domain
            raise ScheduleError(
                f"reverse_compute_inline: cannot tell whether the producer's "
                f"iterations stay in the domain of {cons.iter_names[k]} "
                f"([{show(lo)}, {show(lo + ext)}))"
            )
        if tlo < lo:  # lo <= t
            conds.append((index.to_affine(t + index.const(-lo)), ""))
        if thi >= lo + ext:  # t < lo + ext ("<": `8 - i < 8` is TVM's `0 < i`)
            e, n = index.less_than(t, lo + ext, ranges)
            conds.append(
                (
                    index.to_affine(index.const(n - 1) + e.scale(-1)),
                    "<" if all(k < 0 for _, k in e.terms) else "",
                )
            )
    return conds


def _add_predicate(prod: Block, conds: list):
    """And `conds` (over the iter vars) into the block's T.where (over its loop vars)."""
    binds = list(prod.bindings.results)
    n = len(prod.dims)
    ranges = {k: value_range(v) for k, v in enumerate(prod.dims)}
    exprs, eqs = [], []
    if prod.predicate is not None:
        for c in prod.predicate.constraints:
            exprs.append(c.expr)
            eqs.append(c.is_eq)
    spelled = prod.where_spelling
    for c, op in conds:
        e = index.to_affine(
            index.from_affine(substitute(c, binds), [index.var(k) for k in range(n)], ranges)
        )
        if not any(not q and _same(e, x) for x, q in zip(exprs, eqs)):
            exprs.append(e)
            eqs.append(False)
            if op:
                spelled[str(e)] = op
    _tighten_quotient_bounds(exprs, eqs, spelled, n)
    prod.set_attr("predicate", ir.IntegerSetAttr.get(ir.IntegerSet.get(n, 0, exprs, eqs)))
    prod.where_spelling = spelled


def _same(a: ir.AffineExpr, b: ir.AffineExpr) -> bool:
    """The two expressions are one sum of the same scaled terms (MLIR may hold them in
    another order: the inlined copy and the write-back both bound the same padded index)."""
    return str(a) == str(b) or _terms(a) == _terms(b)


def _terms(e: ir.AffineExpr) -> dict:
    """{printed atom: coefficient} of a sum (the constant under "")."""
    out: dict = {}

    def add(t, c):
        t = t.maybe_downcast()
        if isinstance(t, ir.AffineAddExpr):
            add(t.lhs, c)
            add(t.rhs, c)
        elif isinstance(t, ir.AffineConstantExpr):
            out[""] = out.get("", 0) + c * t.value
        elif isinstance(t, ir.AffineMulExpr) and isinstance(
            rhs := t.rhs.maybe_downcast(), ir.AffineConstantExpr
        ):
            add(t.lhs, c * rhs.value)
        else:
            out[str(t)] = out.get(str(t), 0) + c

    add(e, 1)
    return {k: v for k, v in out.items() if v}


def _tighten_quotient_bounds(exprs: list, eqs: list, spelled: dict, n: int):
    """`x // c < q and x % c < r` as `x < (q - 1) * c + r and x % c < r`, `x // c < q` alone
    as `x < q * c` (in place): the same set, the bounds TVM's simplifier writes
    (`i < 16255 and i % 128 < 127`)."""
    lins = [
        None if eq else index.from_affine(e, [index.var(k) for k in range(n)], {})
        for e, eq in zip(exprs, eqs)
    ]
    mods = {}  # (x, c) -> r: the constraint r - x % c >= 0
    for lin in lins:
        if lin is not None and len(lin.terms) == 1 and lin.terms[0][1] == -1:
            atom = lin.terms[0][0]
            if atom[0] == "mod":
                mods[(atom[1], atom[2])] = lin.const
    for k, lin in enumerate(lins):
        if lin is None or len(lin.terms) != 1 or lin.terms[0][1] != -1:
            continue
        atom = lin.terms[0][0]
        if atom[0] != "div":
            continue  # (x // c <= q) and (x % c <= r): x <= q * c + r (r = c - 1: none)
        r = min(mods.get((atom[1], atom[2]), atom[2] - 1), atom[2] - 1)
        if r < 0:
            continue
        tight = index.to_affine(index.const(lin.const * atom[2] + r) + atom[1].scale(-1))
        if str(exprs[k]) in spelled:
            spelled[str(tight)] = spelled.pop(str(exprs[k]))
        exprs[k] = tight
