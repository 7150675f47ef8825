"""Stage `gpu-lower-wmma` (affine level, after `gpu-insert-barriers`): tensor-core tiles.

The CUDA tensor intrinsics (tir_mlir/intrinsics/cuda.py) leave, where a block was tensorized, a
16x16(x16) loop nest whose outer loop is annotated `tir_mlir.wmma` = fill | load_a | load_b |
sync | store (WMMA) or mma_fill | mma_load_a | mma_load_b | mma_sync | mma_store (mma.sync:
gpu_mma.py). Up to here it was an ordinary nest (compaction shrank the fragment buffers to one
warp's tiles, the barrier pass saw its shared-memory reads). Each nest becomes one warp-wide op:

    load_a/load_b  nvvm.wmma.load  (row-major, from the tile's address and row stride)
    sync           nvvm.wmma.mma   (f16 x f16 + f32 -> f32)
    store          nvvm.wmma.store (row-major)
    fill           the accumulator's registers set to the value

and each fragment buffer (scope `wmma.*`, R x C after compaction) becomes the registers one
thread holds of its tiles: `memref<R/16 x C/16 x n x T>` private, T = vector<2xf16|bf16>
(operands) or f32 (accumulator); a tile's registers are loaded before and stored after each op,
so LLVM keeps them in registers once the tile loops are unrolled (else they live in local
memory). Refused at build time: a fragment touched by anything but these nests (its block was
not tensorized) or by both kinds, and a warp that is not uniform (threads along x not a
multiple of 32, a tile depending on threadIdx.x).
"""

from typing import Dict, List, Optional, Tuple, cast

from mlir import ir
from mlir.dialects import arith, gpu, llvm, memref

from tir_mlir.dialect.ops import Loop
from tir_mlir.intrinsics.cuda import WMMA_ATTR
from tir_mlir.passes.lowering.common import (
    ancestors,
    build_error,
    depends_on,
    functions,
    index_const,
    loop_iv,
    run_pipeline,
    walk,
)
from tir_mlir.passes.lowering.gpu_limits import buffer_label
from tir_mlir.passes.lowering.gpu_mma import MmaOps
from tir_mlir.passes.lowering.gpu_scopes import address_space
from tir_mlir.passes.lowering.tir_to_affine import SCOPE_ATTR

FRAGMENT_SCOPES = ("wmma.matrix_a", "wmma.matrix_b", "wmma.accumulator")
REGS = 8  # registers per thread per 16x16 tile (wmma m16n16k16; accumulators)
MMA_OPERAND_REGS = 4  # pairs of halves per thread per 16x16 operand tile (mma.sync m16n8k16)
ROLE = {"load_a": "wmma.matrix_a", "load_b": "wmma.matrix_b", "load_b_trans": "wmma.matrix_b"}
COL_MAJOR_B = ("load_b_trans", "sync_trans")  # B's fragment loaded and used column-major


def wmma_op(loop) -> Optional[str]:
    """The wmma operation of an annotated nest's outer loop, or None."""
    if loop.name != "affine.for":
        return None
    value = Loop(loop).annotations.get(WMMA_ATTR)
    return ir.StringAttr(value).value if value is not None else None


class GpuLowerWmma:
    name = "gpu-lower-wmma"

    def __call__(self, module: ir.Module):
        if any(wmma_op(o) for f in functions(module) for o in walk(f)):
            _fold_views(module)
        for f in functions(module):
            nests = [(o, op) for o in walk(f) if (op := wmma_op(o))]
            frags = _fragments(f)
            for nest, op in nests:
                _check_warp_uniform(nest)
                _Lowering(nest, op, frags).run()
                nest.erase()
            for old, new in frags.items():
                old.owner.erase()


def _check_warp_uniform(nest):
    """A tensor-core op is one warp's: its 32 lanes must be the threads along x (blockDim.x a
    multiple of 32) and all run it on the same tile (nothing on the way depends on x)."""
    launch = next((p for p in ancestors(nest) if p.name == "gpu.launch"), None)
    if launch is None:
        raise build_error(nest, "a tensor-core intrinsic outside the kernel's thread loops")
    size = cast(gpu.LaunchOp, launch.opview).blockSizeX.owner
    lanes = ir.IntegerAttr(size.attributes["value"]).value
    where = f"tensor-core intrinsic '{wmma_op(nest)}'"
    if lanes % 32:
        raise build_error(
            nest,
            f"{where} runs per warp: the threads along threadIdx.x make "
            f"the warps and must be a multiple of 32, not {lanes}",
        )
    tx = launch.regions[0].blocks[0].arguments[3]
    guards = []
    for p in ancestors(nest):
        if p == launch:
            break
        if p.name in ("affine.if", "scf.if") and any(depends_on(v, tx, launch) for v in p.operands):
            guards.append(p)
    inside = [o for o in [nest, *walk(nest)] if o.name in ("memref.load", "memref.store")]
    if guards or any(depends_on(v, tx, nest) for o in inside for v in o.operands):
        raise build_error(
            nest,
            f"{where} runs per warp, but its tile depends on threadIdx.x "
            f"(bind no loop around the tensorized block to threadIdx.x)",
        )


def _fold_views(module):
    """Accesses through views (tensorize's T.match_buffer views of the tiles) become accesses
    of the viewed buffers, which is what the nests are read for; the views then go."""
    run_pipeline(module, "fold-memref-alias-ops", "folding tensor-core tile views")
    for f in functions(module):
        for op in reversed(list(walk(f))):
            if op.name == "memref.subview" and not list(op.results[0].uses):
                op.erase()


def _scope(value) -> str:
    owner = value.owner
    if isinstance(owner, ir.Block) or SCOPE_ATTR not in owner.attributes:
        return "global"
    return ir.StringAttr(owner.attributes[SCOPE_ATTR]).value


def _fragments(f) -> dict:
    """{fragment buffer: its register buffer}, after checking only the nests touch them."""
    frags = {}
    for op in walk(f):
        if (
            op.name not in ("memref.alloc", "memref.alloca")
            or _scope(op.results[0]) not in FRAGMENT_SCOPES
        ):
            continue
        buf = op.results[0]
        kinds = set()
        for use in buf.uses:
            user = use.owner
            kind = next((k for k in map(wmma_op, ancestors(user)) if k), None)
            if kind is None:
                raise build_error(
                    user,
                    f"buffer {buffer_label(buf)} in scope "
                    f"'{_scope(buf)}' is accessed outside a tensor-core "
                    f"intrinsic: tensorize every block that reads or writes "
                    f"it with a wmma_* or mma_* intrinsic",
                )
            if kind not in ("fill", "mma_fill"):  # a fill suits any layout
                kinds.add(
                    "mma"
                    if kind.startswith("mma_")
                    else "wmma-col"
                    if kind in COL_MAJOR_B and _scope(buf) == "wmma.matrix_b"
                    else "wmma"
                )
        if len(kinds) > 1:
            raise build_error(
                op,
                f"fragment {buffer_label(buf)} is used by intrinsics whose "
                f"register layouts differ ({', '.join(sorted(kinds))}: the "
                f"mma_* and wmma_* ones, or a B tile loaded and multiplied "
                f"with and without _trans)",
            )
        t = ir.MemRefType(buf.type)
        if t.rank < 2 or t.shape[-1] % 16 or t.shape[-2] % 16:
            raise build_error(
                op,
                f"fragment {buffer_label(buf)} has shape {t.shape}: its last "
                f"two dimensions must be multiples of 16",
            )
        if _scope(buf) == "wmma.accumulator":
            elem, regs = ir.F32Type.get(), REGS
        else:  # pairs of halves; mma.sync operands hold 8 elements per thread, wmma's 16
            elem = ir.VectorType.get([2], t.element_type)
            regs = MMA_OPERAND_REGS if kinds == {"mma"} else REGS
        shape = list(t.shape[:-2]) + [t.shape[-2] // 16, t.shape[-1] // 16, regs]
        with ir.InsertionPoint(op), op.location:
            new = memref.AllocaOp(
                ir.MemRefType.get(shape, elem, memory_space=t.memory_space), [], []
            )
        frags[buf] = new.result
    return frags


class _Lowering(MmaOps):
    scope = staticmethod(_scope)

    def __init__(self, nest, op: str, frags):
        self.nest, self.frags, self.op = nest, frags, op
        self.ivs = [loop_iv(o) for o in [nest, *walk(nest)] if o.name == "affine.for"]
        self.loads = [o for o in walk(nest) if o.name == "memref.load"]
        self.stores = [o for o in walk(nest) if o.name == "memref.store"]
        self.loc = nest.location
        self._cloned = {}

    def fail(self, why):
        return build_error(self.nest, f"tensor-core intrinsic '{self.op}': {why}")

    def run(self):
        if len(self.stores) != 1:
            raise self.fail("expected one store in its nest")
        store = self.stores[0]
        with ir.InsertionPoint(self.nest), self.loc:
            if self.op in ("fill", "mma_fill"):
                self._fill(store)
            elif self.op in ROLE:
                self._load(store)
            elif self.op in ("sync", "sync_trans"):
                self._sync(store)
            elif self.op == "store":
                self._store(store)
            elif self.op in ("mma_load_a", "mma_load_b"):
                self._mma_load(store)
            elif self.op == "mma_sync":
                self._mma_sync(store)
            elif self.op == "mma_store":
                self._mma_store(store)
            else:
                raise self.fail("unknown operation")

    # --- tile addresses -------------------------------------------------------------------

    def _origin(self, value):
        """`value` with the nest's IVs at 0, computed before the nest."""
        if any(value == iv for iv in self.ivs):
            return index_const(0, self.loc)
        owner = value.owner
        if isinstance(owner, ir.Block) or not any(p == self.nest for p in ancestors(owner)):
            return value
        for k, v in self._cloned.items():
            if k == owner:
                return v.result
        operands = [self._origin(v) for v in owner.operands]  # defined before the clone
        clone = owner.clone(ip=ir.InsertionPoint(self.nest))
        for i, operand in enumerate(operands):
            clone.operands[i] = operand
        self._cloned[owner] = clone
        return clone.result

    def _access(self, op):
        """(buffer, origin indices) of a load or store of the nest."""
        is_store = op.name == "memref.store"
        buf = op.operands[1 if is_store else 0]
        idx = list(op.operands)[2 if is_store else 1 :]
        return buf, [self._origin(v) for v in idx]

    def _tile(self, buf, origin, scope):
        """The register buffer of fragment `buf` and the indices of the tile at `origin`."""
        if _scope(buf) != scope or not any(buf == k for k in self.frags):
            raise self.fail(
                f"buffer {buffer_label(buf)} must be a fragment in scope "
                f"'{scope}', not '{_scope(buf)}'"
            )
        regs = next(v for k, v in self.frags.items() if k == buf)
        sixteen = index_const(16, self.loc)
        tile = list(origin[:-2]) + [arith.divui(v, sixteen) for v in origin[-2:]]
        return regs, tile

    def _check_memory(self, buf):
        scope = _scope(buf)
        if scope in FRAGMENT_SCOPES or address_space(buf.type) == "private":
            raise self.fail(
                f"buffer {buffer_label(buf)} must be in shared or global memory, "
                f"not '{scope if scope in FRAGMENT_SCOPES else 'local'}'"
            )

    def _pointer(self, buf, origin):
        """(pointer to the tile at `origin` of memory buffer `buf`, its row stride as i32)."""
        self._check_memory(buf)
        t = ir.MemRefType(buf.type)
        strides, offset = t.get_strides_and_offset()
        if any(s < 0 for s in strides) or offset < 0 or strides[-1] != 1:
            raise self.fail(f"buffer {buffer_label(buf)} needs static strides, the last one 1")
        i64 = ir.IntegerType.get_signless(64)
        linear = index_const(offset, self.loc)
        for v, s in zip(origin, strides):
            linear = arith.addi(linear, arith.muli(v, index_const(s, self.loc)))
        space = 3 if t.memory_space is not None and "workgroup" in str(t.memory_space) else 0
        ptr_t = ir.Type.parse(f"!llvm.ptr<{space}>" if space else "!llvm.ptr")
        base = llvm.inttoptr(
            ptr_t, arith.index_cast(i64, memref.extract_aligned_pointer_as_index(buf))
        )
        ptr = llvm.GEPOp(
            ptr_t,
            base,
            [arith.index_cast(i64, linear)],
            [-2147483648],
            ir.TypeAttr.get(t.element_type),
            None,
        ).result
        stride = arith.ConstantOp(ir.IntegerType.get_signless(32), strides[-2]).result
        return ptr, stride

    # --- registers ------------------------------------------------------------------------

    def _read_regs(self, regs, tile):
        n = ir.MemRefType(regs.type).shape[-1]
        return [memref.load(regs, tile + [index_const(r, self.loc)]) for r in range(n)]

    def _write_regs(self, regs, tile, values):
        for r, v in enumerate(values):
            memref.store(v, regs, tile + [index_const(r, self.loc)])

    def _unpack(self, struct, n, t):
        return [llvm.ExtractValueOp(t, struct, [r]).result for r in range(n)]

    # --- the operations -------------------------------------------------------------------

    def _fill(self, store):
        buf, origin = self._access(store)
        regs, tile = self._tile(buf, origin, "wmma.accumulator")
        value = self._origin(store.operands[0])
        self._write_regs(regs, tile, [value] * ir.MemRefType(regs.type).shape[-1])

    def _load(self, store):
        if len(self.loads) != 1:
            raise self.fail("expected a copy")
        src, src_origin = self._access(self.loads[0])
        dst, dst_origin = self._access(store)
        regs, tile = self._tile(dst, dst_origin, ROLE[self.op])
        ptr, stride = self._pointer(src, src_origin)
        half2 = ir.VectorType.get([2], ir.F16Type.get())
        struct = ir.Type.parse(f"!llvm.struct<({', '.join([str(half2)] * REGS)})>")
        attrs = _shape_attrs(
            eltype="f16", frag=self.op[5], layout="col" if self.op in COL_MAJOR_B else "row"
        )
        loaded = ir.Operation.create(
            "nvvm.wmma.load", results=[struct], operands=[ptr, stride], attributes=attrs
        ).result
        self._write_regs(regs, tile, self._unpack(loaded, REGS, half2))

    def _sync(self, store):
        acc, acc_origin = self._access(store)
        by_scope: Dict[str, Tuple[ir.Value, List[ir.Value]]] = {}
        for load in self.loads:
            buf, origin = self._access(load)
            by_scope.setdefault(_scope(buf), (buf, origin))
        if set(by_scope) != set(FRAGMENT_SCOPES):
            raise self.fail(
                "its operands must be wmma.matrix_a, wmma.matrix_b and wmma.accumulator fragments"
            )
        operands = []
        for scope in FRAGMENT_SCOPES[:2]:
            regs, tile = self._tile(*by_scope[scope], scope)
            operands += self._read_regs(regs, tile)
        c_regs, c_tile = self._tile(acc, acc_origin, "wmma.accumulator")
        operands += self._read_regs(c_regs, c_tile)
        f32 = ir.F32Type.get()
        struct = ir.Type.parse(f"!llvm.struct<({', '.join(['f32'] * REGS)})>")
        attrs = _shape_attrs(
            eltypeA="f16",
            eltypeB="f32",
            layoutA="row",
            layoutB="col" if self.op in COL_MAJOR_B else "row",
        )
        out = ir.Operation.create(
            "nvvm.wmma.mma", results=[struct], operands=operands, attributes=attrs
        ).result
        self._write_regs(c_regs, c_tile, self._unpack(out, REGS, f32))

    def _store(self, store):
        if len(self.loads) != 1:
            raise self.fail("expected a copy")
        frag, frag_origin = self._access(self.loads[0])
        dst, dst_origin = self._access(store)
        regs, tile = self._tile(frag, frag_origin, "wmma.accumulator")
        ptr, stride = self._pointer(dst, dst_origin)
        values = self._read_regs(regs, tile)
        ir.Operation.create(
            "nvvm.wmma.store",
            results=[],
            operands=[ptr] + values + [stride],
            attributes=_shape_attrs(eltype="f32", layout="row"),
        )


def _shape_attrs(**kinds) -> dict:
    i32 = ir.IntegerType.get_signless(32)
    attrs: Dict[str, ir.Attribute] = {d: ir.IntegerAttr.get(i32, 16) for d in "mnk"}
    for name, v in kinds.items():
        kind = (
            "mma_type"
            if name.startswith("eltype")
            else "mma_frag"
            if name == "frag"
            else "mma_layout"
        )
        attrs[name] = ir.Attribute.parse(f"#nvvm.{kind}<{v}>")
    return attrs
