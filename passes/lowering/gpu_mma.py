"""The `mma.sync` half of `gpu-lower-wmma`: 16x16 tiles as two m16n8k16 products (sm_80+,
fp16 or bf16 operands, fp32 accumulators), with the fragment layout PTX documents, so each
thread loads and stores its own elements (no opaque fragment ops as for wmma). With
g = lane / 4 and t = lane % 4, a thread holds of each 16x16 tile:

    A (rows m, cols k)  reg r in 0..3: A[g + 8(r%2), 2t + 8(r/2) + {0, 1}]
    B (rows k, cols n)  reg 2h+s:      B[2t + 8s + {0, 1}, g + 8h]        (h: the n8 half)
    C (fp32)            reg 4h+c:      C[g + 8(c/2), 8h + 2t + c%2]

The operand registers are pairs (`vector<2xf16|bf16>`; an i32 for bf16, as mma.sync takes it).
From shared memory a warp loads an operand tile with one `ldmatrix.x4` (`.trans` for B): lane l
gives the address of row l % 8 of the 8x8 matrix l / 8, the matrices in register order, and
each thread receives exactly the elements above. From global memory each lane loads its pairs.
"""

from typing import Callable, Dict, List, Tuple

from mlir import ir
from mlir.dialects import arith, gpu, llvm, memref, vector

from tir_mlir.errors import BuildError
from tir_mlir.passes.lowering.common import index_const
from tir_mlir.passes.lowering.gpu_scopes import address_space

_DTYPE = {"f16": "f16", "bf16": "bf16"}


class MmaOps:
    """Methods of gpu_wmma._Lowering for the `mma_*` annotations."""

    # What these methods use of gpu_wmma._Lowering, declared for the type checker only
    # (annotations without values: _Lowering defines each of them).
    loc: ir.Location
    op: str
    loads: List[ir.Operation]
    fail: Callable[[str], BuildError]
    scope: Callable[[ir.Value], str]
    _access: Callable[[ir.Operation], Tuple[ir.Value, List[ir.Value]]]  # buffer, origin
    _tile: Callable[[ir.Value, List[ir.Value], str], Tuple[ir.Value, List[ir.Value]]]
    _check_memory: Callable[[ir.Value], None]
    _pointer: Callable[[ir.Value, List[ir.Value]], Tuple[ir.Value, ir.Value]]  # ptr, stride
    _read_regs: Callable[[ir.Value, List[ir.Value]], List[ir.Value]]
    _write_regs: Callable[[ir.Value, List[ir.Value], List[ir.Value]], None]
    _unpack: Callable[[ir.Value, int, ir.Type], List[ir.Value]]

    def _lane(self):
        """(g, t) of this thread: lane / 4 and lane % 4."""
        lane = gpu.LaneIdOp().result
        four = index_const(4, self.loc)
        return arith.divui(lane, four), arith.remui(lane, four)

    def _at(self, base, *terms):
        """base + terms (index values or ints)."""
        out = base
        for x in terms:
            if isinstance(x, int):
                if x:
                    out = arith.addi(out, index_const(x, self.loc))
            else:
                out = arith.addi(out, x)
        return out

    def _pair(self, buf, first, second):
        """The elements at indices `first` and `second` as a pair."""
        a, b = memref.load(buf, first), memref.load(buf, second)
        t = ir.VectorType.get([2], a.type)
        return vector.from_elements(t, [a, b])

    def _mma_load(self, store):
        if len(self.loads) != 1:
            raise self.fail("expected a copy")
        src, origin = self._access(self.loads[0])
        dst, dst_origin = self._access(store)
        regs, tile = self._tile(
            dst, dst_origin, "wmma.matrix_a" if self.op.endswith("a") else "wmma.matrix_b"
        )
        self._check_memory(src)
        lead, (r0, c0) = list(origin[:-2]), origin[-2:]
        if address_space(src.type) == "workgroup":
            return self._write_regs(regs, tile, self._ldmatrix(src, lead, r0, c0, dst))
        g, t = self._lane()
        two_t = arith.muli(t, index_const(2, self.loc))
        values = []
        for r in range(4):
            if self.op.endswith("a"):  # rows g (+8), columns 2t (+8), +1
                row, col = self._at(r0, g, 8 * (r % 2)), self._at(c0, two_t, 8 * (r // 2))
                values.append(self._pair(src, lead + [row, col], lead + [row, self._at(col, 1)]))
            else:  # rows 2t (+8), +1; column g (+8 for the 2nd half)
                h, s = divmod(r, 2)
                row, col = self._at(r0, two_t, 8 * s), self._at(c0, g, 8 * h)
                values.append(self._pair(src, lead + [row, col], lead + [self._at(row, 1), col]))
        self._write_regs(regs, tile, values)

    def _ldmatrix(self, src, lead, r0, c0, frag):
        """The four operand registers of the tile at (r0, c0) of shared `src`: ldmatrix.x4."""
        lane = gpu.LaneIdOp().result
        eight = index_const(8, self.loc)
        i, j = arith.divui(lane, eight), arith.remui(lane, eight)
        two = index_const(2, self.loc)
        row = self._at(r0, j, arith.muli(arith.remui(i, two), eight))
        col = self._at(c0, arith.muli(arith.divui(i, two), eight))
        ptr, _ = self._pointer(src, lead + [row, col])
        i32 = ir.IntegerType.get_signless(32)
        struct = ir.Type.parse("!llvm.struct<(i32, i32, i32, i32)>")
        layout = "row" if self.op.endswith("a") else "col"  # col: .trans, for B
        loaded = ir.Operation.create(
            "nvvm.ldmatrix",
            results=[struct],
            operands=[ptr],
            attributes={
                "num": ir.IntegerAttr.get(i32, 4),
                "layout": ir.Attribute.parse(f"#nvvm.mma_layout<{layout}>"),
                "shape": ir.Attribute.parse("#nvvm.ld_st_matrix_shape<m = 8, n = 8>"),
                "eltType": ir.Attribute.parse("#nvvm.ld_st_matrix_elt_type<b16>"),
            },
        ).result
        pair = ir.VectorType.get([2], ir.MemRefType(frag.type).element_type)
        return [llvm.bitcast(pair, v) for v in self._unpack(loaded, 4, i32)]

    def _mma_sync(self, store):
        acc, acc_origin = self._access(store)
        by_scope: Dict[str, Tuple[ir.Value, List[ir.Value]]] = {}
        for load in self.loads:
            buf, origin = self._access(load)
            by_scope.setdefault(self.scope(buf), (buf, origin))
        if set(by_scope) != {"wmma.matrix_a", "wmma.matrix_b", "wmma.accumulator"}:
            raise self.fail(
                "its operands must be wmma.matrix_a, wmma.matrix_b and wmma.accumulator fragments"
            )
        a_regs, a_tile = self._tile(*by_scope["wmma.matrix_a"], "wmma.matrix_a")
        b_regs, b_tile = self._tile(*by_scope["wmma.matrix_b"], "wmma.matrix_b")
        c_regs, c_tile = self._tile(acc, acc_origin, "wmma.accumulator")
        a, b, c = (
            self._read_regs(r, t) for r, t in ((a_regs, a_tile), (b_regs, b_tile), (c_regs, c_tile))
        )
        elt = str(ir.VectorType(a[0].type).element_type)
        if elt == "bf16":  # mma.sync takes bf16 pairs as i32
            i32 = ir.IntegerType.get_signless(32)
            a, b = ([llvm.bitcast(i32, x) for x in xs] for xs in (a, b))
        f32 = ir.F32Type.get()
        struct = ir.Type.parse("!llvm.struct<(f32, f32, f32, f32)>")
        attrs = {
            "layoutA": ir.Attribute.parse("#nvvm.mma_layout<row>"),
            "layoutB": ir.Attribute.parse("#nvvm.mma_layout<col>"),
            "multiplicandAPtxType": ir.Attribute.parse(f"#nvvm.mma_type<{_DTYPE[elt]}>"),
            "multiplicandBPtxType": ir.Attribute.parse(f"#nvvm.mma_type<{_DTYPE[elt]}>"),
            "shape": ir.Attribute.parse("#nvvm.shape<m = 16, n = 8, k = 16>"),
            "operandSegmentSizes": ir.DenseI32ArrayAttr.get([4, 2, 4]),
        }
        out = []
        for h in range(2):  # the two n8 halves of the 16x16 tile
            d = ir.Operation.create(
                "nvvm.mma.sync",
                results=[struct],
                operands=a + b[2 * h : 2 * h + 2] + c[4 * h : 4 * h + 4],
                attributes=attrs,
            ).result
            out += self._unpack(d, 4, f32)
        self._write_regs(c_regs, c_tile, out)

    def _mma_store(self, store):
        if len(self.loads) != 1:
            raise self.fail("expected a copy")
        frag, frag_origin = self._access(self.loads[0])
        dst, origin = self._access(store)
        regs, tile = self._tile(frag, frag_origin, "wmma.accumulator")
        self._check_memory(dst)
        lead, (r0, c0) = list(origin[:-2]), origin[-2:]
        g, t = self._lane()
        two_t = arith.muli(t, index_const(2, self.loc))
        values = self._read_regs(regs, tile)
        for h in range(2):
            for c in range(4):
                row = self._at(r0, g, 8 * (c // 2))
                col = self._at(c0, two_t, 8 * h + c % 2)
                memref.store(values[4 * h + c], dst, lead + [row, col])
