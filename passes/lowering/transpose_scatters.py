"""Stage `transpose-scatters` (CPU, scf level): vectors scattered down the columns of a tile, one
per column of a contiguous run, are transposed in registers and stored as rows.

    %v0 = ... : vector<4xf32>                                 %v0 = ...   %v1 = ...   ...
    store (extract %v0[0]), C[r, c]                           %r0, %r1, %r2, %r3 = transpose of %v0 .. %v3
    store (extract %v0[1]), C[r + 1, c]   ...           =>    vector.store %r0, C[r, c]     : vector<4xf32>
    %v1 = ... ; store (extract %v1[l]), C[r + l, c + 1]       vector.store %r1, C[r + 1, c] : vector<4xf32>
    ...  (c + 2, c + 3)                                       ...

The mirror of `transpose-gathers` on the store side. A transpose vectorized along one axis and
unrolled along the other (`C[i, j] = A[j, i] + ...`, `i` vectorized, `j` unrolled) writes each
vector lane by lane to rows a page apart: one scalar store per element, each lane past the first
also a shuffle (`vextractps` to memory). The unrolled copies write whole row segments between
them, so a K x K transpose of K of those vectors (K log2 K two-source shuffles) gives the
segments, each one vector store: K stores per K x K tile instead of K * K.

A group is rewritten when, in one block:
- each vector of `lanes` lanes has every lane stored, by one `memref.store` of a
  `vector.extract` at a constant position, into one memref (rank >= 2, unit stride in its last
  dimension) at one last index, lane l at leading indices that differ from every other lane's by
  a nonzero constant in some dimension (the lanes' addresses never meet);
- the vectors of a run store the same leading indices lane by lane, at last indices that are
  one linear form plus the constants 0 .. n - 1 (forms compared as in `transpose-gathers`); the
  run is cut into groups of K columns, K a power of two of at least MIN_COLUMNS dividing n and
  `lanes`, whose K elements fit one vector register (the largest such K);
- from the group's first store to its last, no other op touches memory that may be the memref
  (loads and stores of other `noalias` buffers, or of other allocations, are fine) and no op
  holds a region or calls out: the row stores go where the last scalar store was;
- the vectors of the groups a point of the block lies in (held from a group's first store to its
  last) stay within half the target's vector registers (cpu_model.py).
The row stores write exactly the elements the scalar stores wrote.
"""

from mlir import ir
from mlir.dialects import vector

from tir_mlir.analysis.linear import Linear, value_linear
from tir_mlir.ir.ir_walk import walk_all
from tir_mlir.passes.lowering.buffer_roots import root
from tir_mlir.passes.lowering.common import group_in_order, scalar_bits
from tir_mlir.passes.lowering.register_transpose import RegisterTransposeStage
from tir_mlir.passes.lowering.transpose_gathers import MIN_COLUMNS, leaf_of, zip_transpose


class TransposeScatters(RegisterTransposeStage):
    name = "transpose-scatters"

    def candidates(self, f) -> list:
        """[(store, (vector, lane))] of the lane stores of `f`."""
        return [(op.operation, lane) for op in walk_all(f) if (lane := _lane_store(op))]

    def block_of(self, item) -> ir.Block:
        return item[0].block

    def rewrite(self, block, order, items, noalias):
        memo: dict = {}
        leaf = leaf_of(memo)
        scatters = _scatters(items, leaf, memo)
        groups = [
            g
            for g in _groups(scatters, self.vector_bits)
            if _legal(block, order, g, noalias, leaf, memo)
        ]
        for group in _fitting(groups, order, self.vector_registers // 2):
            _transpose(group, order)


class _Scatter:
    """A vector whose lanes are stored one by one into one memref at one last index: `stores[l]`
    stores lane l at leading indices `rows[l]`."""

    def __init__(self, value, stores, forms, column: Linear):
        self.value, self.stores, self.forms, self.column = value, stores, forms, column
        self.rows = tuple(tuple(f.key() for f in fs[:-1]) for fs in forms)


def _lane_store(op):
    """(vector, lane) of a `memref.store` of a `vector.extract` at a constant position of a
    1-D vector, else None."""
    op = op.operation
    if op.name != "memref.store":
        return None
    owner = op.operands[0].owner
    if isinstance(owner, ir.Block) or owner.operation.name != "vector.extract":
        return None
    extract = owner.operation
    source = extract.operands[0]
    if len(extract.operands) != 1 or len(ir.VectorType(source.type).shape) != 1:
        return None
    position = list(ir.DenseI64ArrayAttr(extract.attributes["static_position"]))
    return source, position[0]


def _scatters(stores, leaf, memo) -> list:
    """The `_Scatter`s among `stores`, [(store, (vector, lane))] of one block."""
    out = []
    for source, members in group_in_order(stores, lambda s: s[1][0]):
        s = _scatter(source, [(op, lane) for op, (_, lane) in members], leaf, memo)
        if s is not None:
            out.append(s)
    return out


def _scatter(source, stores, leaf, memo) -> "_Scatter | None":
    lanes = ir.VectorType(source.type).shape[0]
    by_lane = {lane: op for op, lane in stores}
    if len(stores) != lanes or sorted(by_lane) != list(range(lanes)):
        return None
    ordered = [by_lane[lane] for lane in range(lanes)]
    memref = ordered[0].operands[1]
    mtype = ir.MemRefType(memref.type)
    if mtype.rank < 2 or any(op.operands[1] != memref for op in ordered):
        return None
    strides, _ = mtype.get_strides_and_offset()
    if strides[-1] != 1:
        return None
    forms = []
    for op in ordered:
        fs = _forms(list(op.operands)[2:], leaf, memo)
        if fs is None:
            return None
        forms.append(fs)
    column = forms[0][-1]
    if any(fs[-1] != column for fs in forms):
        return None
    if not all(_apart(a, b) for i, a in enumerate(forms) for b in forms[i + 1 :]):
        return None
    return _Scatter(source, ordered, forms, column)


def _forms(indices, leaf, memo) -> "list[Linear] | None":
    """The indices as linear forms (None: one is not linear)."""
    forms = []
    for i in indices:
        form = value_linear(i, leaf, memo)
        if form is None:
            return None
        forms.append(form)
    return forms


def _apart(a: list, b: list) -> bool:
    """Whether two index lists differ by a nonzero constant in some dimension (the
    addresses never meet)."""
    return any(x.terms == y.terms and x.const != y.const for x, y in zip(a, b))


def _groups(scatters, vector_bits: int) -> list:
    """Runs of K scatters that store the same rows at columns c + 0 .. c + K - 1, K the largest
    power of two of at least MIN_COLUMNS dividing the run and the lanes whose elements fit one
    register (a run of n columns is cut into n / K)."""
    by_rows: dict = {}
    for s in scatters:
        key = (s.stores[0].operands[1], s.rows, frozenset(s.column.terms.items()))
        by_rows.setdefault(key, []).append(s)
    out = []
    for members in by_rows.values():
        members.sort(key=lambda s: s.column.const)
        n, lanes = len(members), len(members[0].stores)
        c0 = members[0].column.const
        if [s.column.const - c0 for s in members] != list(range(n)):
            continue
        bits = scalar_bits(ir.VectorType(members[0].value.type).element_type)
        sizes = [
            k
            for k in (1 << e for e in range(n.bit_length()))
            if k >= MIN_COLUMNS and n % k == 0 and lanes % k == 0 and k * bits <= vector_bits
        ]
        if sizes:
            k = max(sizes)
            out += [members[start : start + k] for start in range(0, n, k)]
    return out


def _span(group, order) -> tuple:
    ops = [order[op] for s in group for op in s.stores]
    return min(ops), max(ops)


def _fitting(groups, order, registers: int) -> list:
    """The groups, in block order, whose vectors (held from a group's first store to its last)
    never add up to more than `registers` at once."""
    spans = sorted(((*_span(g, order), g) for g in groups), key=lambda s: s[0])
    kept: list = []
    for start, end, group in spans:
        live = sum(len(g) for s, e, g in kept if s <= end and start <= e)
        if live + len(group) <= registers:
            kept.append((start, end, group))
    return [g for _, _, g in kept]


def _legal(block, order, group, noalias, leaf, memo) -> bool:
    memref = group[0].stores[0].operands[1]
    (buffer, shared), _ = root(memref, noalias)
    if buffer is None or shared:
        return False
    own = {op for s in group for op in s.stores}
    start, end = _span(group, order)
    for op in list(block.operations)[start : end + 1]:
        op = op.operation
        if op in own:
            continue
        if op.regions or op.name.startswith(("func.call", "llvm.call")):
            return False
        for v in op.operands:
            if isinstance(v.type, ir.MemRefType) and not _elsewhere(op, v, buffer, noalias):
                if not _apart_from(op, group, leaf, memo):
                    return False
    return True


def _elsewhere(op, memref, buffer, noalias) -> bool:
    """Whether `memref` (an operand of `op`) is provably not `buffer`."""
    (other, other_shared), _ = root(memref, noalias)
    return other is not None and not other_shared and other != buffer


def _apart_from(op, group, leaf, memo) -> bool:
    """Whether `op` is a scalar load or store of the group's memref at an address apart from
    every address the group stores to (the unrolled copies of other groups in between)."""
    memref = group[0].stores[0].operands[1]
    first = {"memref.store": 1, "memref.load": 0}.get(op.name)
    if first is None or op.operands[first] != memref:
        return False
    forms = _forms(list(op.operands)[first + 1 :], leaf, memo)
    if forms is None:
        return False
    return all(_apart(forms, other) for s in group for other in s.forms)


def _transpose(group, order):
    first = group[0]
    k = len(group)
    lanes = len(first.stores)
    last = max((op for s in group for op in s.stores), key=lambda op: order[op])
    with ir.InsertionPoint.after(last), last.location:
        for start in range(0, lanes, k):
            chunks = [_lanes(s.value, start, k, lanes) for s in group]
            for lane, row in zip(range(start, start + k), zip_transpose(chunks)):
                store = first.stores[lane]
                vector.store(row, store.operands[1], list(store.operands)[2:])
    for s in group:
        for store in s.stores:
            extract = store.operands[0].owner.operation
            store.erase()
            if not list(extract.results[0].uses):
                extract.erase()


def _lanes(value, start: int, k: int, lanes: int):
    """Lanes start .. start + k - 1 of `value` (the vector itself when that is all of it)."""
    if k == lanes:
        return value
    return vector.shuffle(value, value, list(range(start, start + k)))
