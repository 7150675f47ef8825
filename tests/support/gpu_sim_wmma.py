"""Tensor-core ops in the SIMT simulator (tests/support/gpu_sim.py): `nvvm.wmma.load/mma/store` and the
pointer arithmetic that feeds them, and `nvvm.mma.sync` (m16n8k16) with the lane id and pairs it
takes, so a tensorized kernel's addresses, strides, fragment bookkeeping and barriers are
checked numerically without a GPU.

The simulator picks its own fragment layout (the hardware's is opaque, and the lowering never
depends on it): of a 16x16 tile in row-major order, lane l of the warp holds the accumulator
elements 8l..8l+7 and, as 8 pairs of halves, the operand elements 16(l%16)..16(l%16)+15 (lanes
16-31 hold copies). A `vector<2xf16>` is one complex64 (real, imaginary: the two halves). Reads
and writes of the tile are logged for the race detector as done by the lanes that hold them.
mma.sync's layout is the real one (PTX ISA, passes/lowering/gpu_mma.py): the lowering loads and
stores those elements itself, so the simulator must place them as the hardware does.
"""

import numpy as np
from mlir import ir

WARP, REGS = 32, 8
OPS = (
    "memref.extract_aligned_pointer_as_index",
    "llvm.inttoptr",
    "llvm.getelementptr",
    "llvm.extractvalue",
    "nvvm.wmma.load",
    "nvvm.wmma.mma",
    "nvvm.wmma.store",
    "gpu.lane_id",
    "vector.from_elements",
    "llvm.bitcast",
    "nvvm.mma.sync",
    "nvvm.ldmatrix",
)


class Ptr:
    """A pointer into a simulated buffer: the buffer and each lane's element offset."""

    def __init__(self, buf, offset):
        self.buf, self.offset = buf, offset

    def astype(self, _):  # arith.index_cast of the address
        return self


def _tile_addresses(ptr, stride, lanes):
    """(16, 16) element addresses of the tile a warp's lanes point at (all lanes agree)."""
    base, ld = np.unique(ptr.offset[lanes]), np.unique(stride[lanes])
    assert len(base) == 1 and len(ld) == 1, "wmma: lanes of a warp disagree on the tile"
    r, c = np.meshgrid(np.arange(16), np.arange(16), indexing="ij")
    return base[0] + r * ld[0] + c


def _warps(sim, mask):
    if not mask.all():
        raise AssertionError("wmma: a tensor-core op run by part of a warp")
    return [np.arange(w, min(w + WARP, sim.n)) for w in range(0, sim.n, WARP)]


def step(sim, op, ins, mask):
    name, env = op.name, sim.env
    if name == "memref.extract_aligned_pointer_as_index":
        env[op.results[0]] = Ptr(ins[0], np.zeros(sim.n, np.int64))
    elif name == "llvm.inttoptr":
        env[op.results[0]] = ins[0]
    elif name == "llvm.getelementptr":
        env[op.results[0]] = Ptr(ins[0].buf, ins[0].offset + ins[1])
    elif name == "llvm.extractvalue":
        env[op.results[0]] = ins[0][ir.DenseI64ArrayAttr(op.attributes["position"])[0]]
    elif name == "nvvm.wmma.load":
        _load(sim, op, ins, mask)
    elif name == "nvvm.wmma.mma":
        _mma(sim, op, ins, mask)
    elif name == "nvvm.wmma.store":
        _store(sim, ins, mask)
    elif name == "gpu.lane_id":
        env[op.results[0]] = sim.tid % WARP
    elif name == "vector.from_elements":
        env[op.results[0]] = (ins[0].astype(np.float32) + 1j * ins[1].astype(np.float32)).astype(
            np.complex64
        )
    elif name == "llvm.bitcast":  # pairs as i32 (ldmatrix, mma.sync's bf16)
        env[op.results[0]] = ins[0]
    elif name == "nvvm.ldmatrix":
        _ldmatrix(sim, op, ins, mask)
    else:
        _mma_sync(sim, op, ins, mask)


def _load(sim, op, ins, mask):
    ptr, stride = ins
    regs = np.zeros((REGS, sim.n), np.complex64)
    for lanes in _warps(sim, mask):
        addrs = _tile_addresses(ptr, stride, lanes)
        if "col" in str(op.attributes["layout"]):  # element (r, c) at column-major place
            addrs = addrs.T
        addr = addrs.reshape(-1)
        tile = ptr.buf.flat[addr].astype(np.float32)
        held = (np.arange(len(lanes)) % 16)[:, None] * 16 + np.arange(16)  # lane -> elements
        pairs = tile[held].reshape(len(lanes), REGS, 2)
        regs[:, lanes] = (pairs[..., 0] + 1j * pairs[..., 1]).T
        ptr.buf.log.append((addr, lanes[np.arange(256) // 16 % len(lanes)], False))
    sim.env[op.results[0]] = list(regs)


def _operand(regs, lanes):
    """The 16x16 tile of an operand fragment (lanes 0-15 of the warp hold it)."""
    v = np.stack([r[lanes[:16]] for r in regs], axis=1)  # (16 lanes, 8)
    return np.stack([v.real, v.imag], axis=-1).reshape(16, 16).astype(np.float16)


def _mma(sim, op, ins, mask):
    a, b, c = ins[:REGS], ins[REGS : 2 * REGS], ins[2 * REGS :]
    out = np.zeros((REGS, sim.n), np.float32)
    for lanes in _warps(sim, mask):
        acc = np.stack([r[lanes] for r in c], axis=1).reshape(16, 16)
        d = _operand(a, lanes).astype(np.float32) @ _operand(b, lanes).astype(np.float32) + acc
        out[:, lanes] = d.reshape(len(lanes), REGS).T
    sim.env[op.results[0]] = list(out)


def _store(sim, ins, mask):
    ptr, values, stride = ins[0], ins[1 : 1 + REGS], ins[1 + REGS]
    for lanes in _warps(sim, mask):
        addr = _tile_addresses(ptr, stride, lanes).reshape(-1)
        tile = np.stack([v[lanes] for v in values], axis=1).reshape(-1)
        ptr.buf.flat[addr] = tile.astype(ptr.buf.flat.dtype)
        ptr.buf.log.append((addr, lanes[np.arange(256) // REGS], True))


def _mma_sync(sim, op, ins, mask):
    """D (16x8) = A (16x16) @ B (16x8) + C, each lane holding its elements as PTX lays them."""
    a, b, c = ins[:4], ins[4:6], ins[6:10]
    lane = np.arange(WARP)
    g, t = lane // 4, lane % 4
    out = np.zeros((4, sim.n), np.float32)
    for lanes in _warps(sim, mask):
        A, B, C = np.zeros((16, 16)), np.zeros((16, 8)), np.zeros((16, 8))
        for r in range(4):  # A: rows g (+8), columns 2t (+8), +1
            v = a[r][lanes]
            row, col = g + 8 * (r % 2), 2 * t + 8 * (r // 2)
            A[row, col], A[row, col + 1] = v.real, v.imag
        for s in range(2):  # B: rows 2t (+8), +1, column g
            v = b[s][lanes]
            B[2 * t + 8 * s, g], B[2 * t + 8 * s + 1, g] = v.real, v.imag
        for k in range(4):  # C: rows g (+8), columns 2t, +1
            C[g + 8 * (k // 2), 2 * t + k % 2] = c[k][lanes]
        D = A.astype(np.float32) @ B.astype(np.float32) + C.astype(np.float32)
        for k in range(4):
            out[k, lanes] = D[g + 8 * (k // 2), 2 * t + k % 2]
    sim.env[op.results[0]] = list(out)


def _ldmatrix(sim, op, ins, mask):
    """ldmatrix.x4: lane l points at row l % 8 of 8x8 matrix l / 8; register i of lane (g, t)
    gets matrix i's row g, columns 2t and 2t+1 (or, .trans, column g, rows 2t and 2t+1)."""
    ptr = ins[0]
    trans = "col" in str(op.attributes["layout"])
    lane = np.arange(WARP)
    g, t = lane // 4, lane % 4
    out = np.zeros((4, sim.n), np.complex64)
    for lanes in _warps(sim, mask):
        addr = ptr.offset[lanes][:, None] + np.arange(8)  # (32 lanes, 8)
        rows = ptr.buf.flat[addr.reshape(-1)].astype(np.float32).reshape(4, 8, 8)
        ptr.buf.log.append((addr.reshape(-1), np.repeat(lanes, 8), False))
        for i in range(4):
            m = rows[i].T if trans else rows[i]
            out[i, lanes] = m[g, 2 * t] + 1j * m[g, 2 * t + 1]
    sim.env[op.results[0]] = list(out)
