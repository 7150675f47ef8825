"""Stage `transpose-gathers` (CPU, scf level): vectors gathered down the columns of a tile, one per
column of a contiguous run, are read as rows and transposed in registers.

    %a0 = load A[r, c]    %b0 = load A[r + 1, c]  ...        %ra = vector.load A[r, c]     : vector<8xf32>
    %x0 = vector.from_elements %a0, %b0, ...          =>      %rb = vector.load A[r + 1, c] : vector<8xf32>
    %a1 = load A[r, c + 1] %b1 = load A[r + 1, c + 1] ...     ...
    %x1 = vector.from_elements %a1, %b1, ...                  %x0 = shuffles of lane 0 of %ra, %rb, ...
    ...  (c + 2 .. c + 7)                                     %x1 = shuffles of lane 1 ...

A transpose vectorized along one axis and unrolled along the other (`C[i, j] = A[j, i] + ...`,
`j` vectorized, `i` unrolled by 8) gathers each vector lane by lane from rows a page apart. LLVM
builds such a vector with one `insertps` per lane, an insert from memory that Intel cores run on
one shuffle port (5) only: a 7-lane column costs 6 of them, and in a loop that is otherwise waiting
on memory that port is the bottleneck (0017 of issue 28's random sample: 56 cycles per 8 columns
in llvm-mca against 45 for TVM's SSE2 build, whose `unpcklps` trees use ports 1 and 5; its own
SSE2 build ran faster than the AVX-512 one: benchmarks/README.md, "session 9, stage figures").
The unrolled copies read whole row segments between them, so each row is one contiguous load
and the columns come out of a transpose of those registers, shuffles LLVM lowers to unpacks and
blends on both ports.

A group is rewritten when, in one block:
- each `vector.from_elements` takes every lane from a `memref.load` of one memref (rank >= 2,
  unit stride in its last dimension) in that block, the lanes differing only in their leading
  indices and sharing the last one (indices compared as linear forms, an index computed by a
  pure `arith` op named by what it computes: each unrolled copy recomputes its `floordivsi`);
- the builds of a run have the same leading indices lane by lane and last indices that are one
  linear form plus the constants 0 .. n - 1; the run is cut into groups of K columns, K a power
  of two of at least MIN_COLUMNS dividing n whose K elements fit one vector register, the K of
  fewest shuffles per column, and only when those are fewer than the inserts the lanes would
  take (lanes - 1 per column: a transpose of K x K registers is K log2 K two-source shuffles per
  K rows, a few rows padded to K pay for the padding);
- the build at column 0 comes first in the block (the rows are loaded there);
- from the group's first load to its last build, nothing in the block writes memory that may be
  the memref (stores to other `noalias` buffers, or to other allocations, are fine) and no op
  holds a region or calls out;
- the row registers of the groups a point of the block lies in (a group's rows live from its
  first build to its last, across the unrolled copies between) stay within half the target's
  vector registers (cpu_model.py): rows held across many copies would spill.
Every element of a K x lanes tile is read by some build, so the row loads read nothing the
program did not.
"""

from mlir import ir
from mlir.dialects import vector

from tir_mlir.analysis.linear import Linear, value_linear
from tir_mlir.ir.ir_walk import walk_all
from tir_mlir.passes.lowering.buffer_roots import root
from tir_mlir.passes.lowering.common import scalar_bits
from tir_mlir.passes.lowering.register_transpose import RegisterTransposeStage

# Fewest columns worth a transpose: below four, the shuffles save no inserts.
MIN_COLUMNS = 4
STORES = ("memref.store", "vector.store", "vector.maskedstore", "vector.transfer_write")


class TransposeGathers(RegisterTransposeStage):
    name = "transpose-gathers"

    def candidates(self, f) -> list:
        return [op for op in walk_all(f) if op.name == "vector.from_elements"]

    def rewrite(self, block, order, items, noalias):
        groups = [g for g in _groups(items, self.vector_bits) if _legal(block, order, g, noalias)]
        for group in _fitting(groups, order, self.vector_registers // 2):
            _transpose(group)


class _Build:
    """A `vector.from_elements` whose lanes are loads of one memref at one last index."""

    def __init__(self, op, loads, rows, column: Linear):
        self.op, self.loads, self.rows, self.column = op, loads, rows, column


def leaf_of(memo: dict):
    """Leaves for `value_linear`: an index computed by a pure `arith` op (the unrolled copies
    each recompute a `floordivsi` of the same IV) is named by what it computes, so equal
    computations are one atom; any other value is itself."""

    def atom(value):
        owner = value.owner
        if isinstance(owner, ir.Block):
            return value
        op = owner.operation
        if op.name == "arith.constant":
            return ("const", str(op.attributes["value"]))
        if not op.name.startswith("arith.") or op.regions or len(op.results) != 1:
            return value
        return (op.name, tuple(_key(value_linear(v, leaf, memo), v) for v in op.operands))

    def leaf(value):
        return Linear({atom(value): 1}, 0)

    return leaf


def _key(form, value):
    return form.key() if form is not None else value


def _build(op, memo) -> "_Build | None":
    loads = []
    for v in op.operands:
        owner = v.owner
        if isinstance(owner, ir.Block) or owner.operation.name != "memref.load":
            return None
        load = owner.operation
        if load.block != op.block:
            return None
        loads.append(load)
    memref = loads[0].operands[0]
    mtype = ir.MemRefType(memref.type)
    if mtype.rank < 2 or any(ld.operands[0] != memref for ld in loads):
        return None
    strides, _ = mtype.get_strides_and_offset()
    if strides[-1] != 1:
        return None
    leaf = leaf_of(memo)
    forms = [[value_linear(i, leaf, memo) for i in list(ld.operands)[1:]] for ld in loads]
    if any(f is None for fs in forms for f in fs):
        return None
    columns = [fs[-1] for fs in forms]
    if any(c != columns[0] for c in columns):
        return None
    rows = tuple(tuple(f.key() for f in fs[:-1]) for fs in forms)
    return _Build(op.operation, loads, rows, columns[0])


def _groups(builds, vector_bits: int) -> list:
    """Runs of K builds that read the same rows at columns c + 0 .. c + K - 1: K a power of two
    of at least MIN_COLUMNS whose elements fit one register, the one of fewest shuffles per
    column where that is fewer than the inserts (a run of n columns is cut into n / K)."""
    memo: dict = {}
    found = [b for b in (_build(op, memo) for op in builds) if b is not None]
    by_rows: dict = {}
    for b in found:
        key = (b.loads[0].operands[0], b.rows, frozenset(b.column.terms.items()))
        by_rows.setdefault(key, []).append(b)
    out = []
    for members in by_rows.values():
        members.sort(key=lambda b: b.column.const)
        n, lanes = len(members), len(members[0].loads)
        c0 = members[0].column.const
        if [b.column.const - c0 for b in members] != list(range(n)):
            continue
        bits = scalar_bits(ir.MemRefType(members[0].loads[0].operands[0].type).element_type)
        sizes = [
            k
            for k in (1 << e for e in range(n.bit_length()))
            if k >= MIN_COLUMNS and n % k == 0 and k * bits <= vector_bits
        ]
        if not sizes:
            continue
        k = min(sizes, key=lambda k: (_shuffles(lanes, k) / k, -k))
        if _shuffles(lanes, k) < (lanes - 1) * k:
            out += [members[start : start + k] for start in range(0, n, k)]
    return out


def _shuffles(lanes: int, k: int) -> int:
    """Shuffles that build K columns of `lanes` rows from row registers: a K x K transpose
    (K log2 K) per K rows, joining the blocks of a column and cutting off its padding. Built
    lane by lane, the columns take (lanes - 1) inserts each, on the same shuffle ports."""
    blocks = -(-lanes // k)
    return k * (blocks * (k.bit_length() - 1) + (blocks - 1) + (lanes != blocks * k))


def _fitting(groups, order, registers: int) -> list:
    """The groups, in block order, whose row registers (live from a group's first build to its
    last) never add up to more than `registers` at once: the unrolled copies a group spans
    run between them, and rows of many groups held across them would spill."""
    spans = sorted(
        ((order[g[0].op], max(order[b.op] for b in g), g) for g in groups), key=lambda s: s[0]
    )
    kept: list = []
    for start, end, group in spans:
        live = sum(len(g[0].loads) for s, e, g in kept if s <= end and start <= e)
        if live + len(group[0].loads) <= registers:
            kept.append((start, end, group))
    return [g for _, _, g in kept]


def _legal(block, order, group, noalias) -> bool:
    # The rows are loaded where the column-0 build is (its loads' indices are defined above it):
    # every other build must come after it.
    first = group[0]
    if any(order[b.op] < order[first.op] for b in group[1:]):
        return False
    memref = first.loads[0].operands[0]
    (buffer, shared), _ = root(memref, noalias)
    if buffer is None or shared:
        return False
    start = min(order[ld] for b in group for ld in b.loads)
    end = max(order[b.op] for b in group)
    for op in list(block.operations)[start : end + 1]:
        op = op.operation
        if op.regions or op.name.startswith(("func.call", "llvm.call")):
            return False
        if op.name in STORES:
            target = op.operands[1]
            (other, other_shared), _ = root(target, noalias)
            if other is None or other_shared or other == buffer:
                return False
    return True


def _transpose(group):
    first = group[0]
    k = len(group)
    element = ir.MemRefType(first.loads[0].operands[0].type).element_type
    row_type = ir.VectorType.get([k], element)
    lanes = len(first.loads)
    with ir.InsertionPoint(first.op), first.op.location:
        rows = [vector.load(row_type, ld.operands[0], list(ld.operands)[1:]) for ld in first.loads]
        # K rows at a time (the last block padded with copies of its first row, whose lanes
        # are dropped), each block transposed; column c is then its blocks' c-th vectors.
        blocks = []
        for start in range(0, lanes, k):
            block = rows[start : start + k]
            blocks.append(zip_transpose(block + [block[0]] * (k - len(block))))
        for column, b in enumerate(group):
            parts = [blk[column] for blk in blocks]
            built = parts[0]
            for part in parts[1:]:
                width = ir.VectorType(built.type).shape[0]
                built = vector.shuffle(built, part, list(range(width + k)))
            if ir.VectorType(built.type).shape[0] != lanes:
                built = vector.shuffle(built, built, list(range(lanes)))
            b.op.results[0].replace_all_uses_with(built)
    for b in group:
        loads = b.loads
        b.op.erase()
        for ld in loads:
            if not list(ld.results[0].uses):
                ld.erase()


def zip_transpose(rows: list) -> list:
    """The transpose of K registers of K lanes (K a power of two): log2(K) rounds of
    interleaving row i with row i + K/2, low halves into row 2i and high halves into 2i + 1.
    A round moves element (r, c) to (2 (r mod K/2) + c // (K/2), 2 (c mod K/2) + r // (K/2)):
    the bits of r and c rotate by one, so after log2(K) rounds it sits at (c, r). Each
    interleave is one unpack or two-source permute."""
    k = len(rows)
    half = k // 2
    low = [x for j in range(half) for x in (j, k + j)]
    high = [x for j in range(half, k) for x in (j, k + j)]
    for _ in range(k.bit_length() - 1):
        out = []
        for i in range(half):
            a, b = rows[i], rows[i + half]
            out += [vector.shuffle(a, b, low), vector.shuffle(a, b, high)]
        rows = out
    return rows
