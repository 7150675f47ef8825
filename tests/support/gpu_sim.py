"""A SIMT simulator of the `--emit gpu` module (host function + outlined kernels), for checking
GPU lowering without a GPU: every thread block runs in lockstep, one numpy lane per thread
(`scf.if` masks lanes, `scf.for` needs uniform bounds), `gpu.shuffle` reads other lanes of the
same warp, `gpu.barrier` ends an epoch. It is also a race detector: two threads touching one
element of a shared buffer in the same epoch, one of them writing, or two blocks of a launch
touching one global element with a write, raise `Race`. Without races the lockstep result is
the result of every interleaving, so comparing it with numpy checks the kernel's arithmetic
and its synchronisation together.
"""

import numpy as np
from mlir import ir

import gpu_sim_wmma

WARP = 32
DTYPES = {
    "f32": np.float32,
    "f16": np.float16,
    "f64": np.float64,
    "bf16": np.float32,
    "i1": np.bool_,
    "i8": np.int8,
    "i16": np.int16,
    "i32": np.int32,
    "i64": np.int64,
    "index": np.int64,
}


class Race(AssertionError):
    pass


def _dtype(t):
    if str(t) in ("vector<2xf16>", "vector<2xbf16>"):  # a pair (tensor-core operands)
        return np.complex64
    return DTYPES[str(t)]


class _Buffer:
    """A memref: flat data, its shape, and the access log of the current epoch."""

    def __init__(self, data, space, name):
        self.data, self.space, self.name = data, space, name
        self.shape = data.shape[1:] if space == "private" else data.shape
        self.flat = data.reshape(data.shape[0], -1) if space == "private" else data.reshape(-1)
        self.log = []  # (addresses, thread ids, is_write) this epoch
        self.launch_log = []  # (addresses, block ids, is_write) this launch

    def address(self, idx):
        addr = np.zeros_like(idx[0]) if idx else 0
        for i, n in zip(idx, self.shape):
            addr = addr * n + i
        return addr


def _check(buf, what):
    if not buf.log:
        return
    addr = np.concatenate([a for a, _, _ in buf.log])
    who = np.concatenate([t for _, t, _ in buf.log])
    wr = np.concatenate([np.full(len(a), w) for a, _, w in buf.log])
    buf.log.clear()
    order = np.lexsort((who, addr))
    addr, who, wr = addr[order], who[order], wr[order]
    starts = np.flatnonzero(np.r_[True, addr[1:] != addr[:-1]])
    any_write = np.logical_or.reduceat(wr, starts)
    n_who = np.add.reduceat(
        np.r_[True, (who[1:] != who[:-1]) | (addr[1:] != addr[:-1])].astype(int), starts
    )
    bad = any_write & (n_who > 1)
    if bad.any():
        a = addr[starts[np.flatnonzero(bad)[0]]]
        raise Race(
            f"{what}: element {a} of buffer '{buf.name}' is written and accessed by "
            f"different threads with no barrier between"
        )


class Simulator:
    def __init__(self, module: ir.Module):
        self.kernels = {}
        for op in module.body.operations:
            op = op.operation
            if op.name == "gpu.module":
                module_name = ir.StringAttr(op.attributes["sym_name"]).value
                for k in op.regions[0].blocks[0].operations:
                    if k.operation.name == "gpu.func":
                        name = ir.StringAttr(k.operation.attributes["sym_name"]).value
                        self.kernels[f"@{module_name}::@{name}"] = k.operation
            elif op.name == "func.func" and len(op.regions[0].blocks):
                self.host = op
        self.barriers = 0

    # ---- host --------------------------------------------------------------------------
    def run(self, *arrays):
        self.env, self.n, self.tid = {}, 1, np.zeros(1, np.int64)
        entry = self.host.regions[0].blocks[0]
        for arg, a in zip(entry.arguments, arrays):  # (a size argument: an int)
            self.env[arg] = (
                _Buffer(a, "global", f"arg{arg.arg_number}")
                if isinstance(a, np.ndarray)
                else np.full(1, a, np.int64)
            )
        self._block(entry, np.ones(1, bool))

    def _launch(self, op):
        v = op.opview
        grid = [int(self.env[x][0]) for x in (v.gridSizeX, v.gridSizeY, v.gridSizeZ)]
        block = [int(self.env[x][0]) for x in (v.blockSizeX, v.blockSizeY, v.blockSizeZ)]
        kname = str(op.attributes["kernel"])
        kernel = self.kernels[kname]
        args = [self.env[x] for x in v.kernelOperands]
        host_env, self.n = self.env, int(np.prod(block))
        globals_ = [b for b in args if isinstance(b, _Buffer)]
        for b in globals_:
            b.launch_log = []
        for bz, by, bx in np.ndindex(*grid[::-1]):
            self.block_id = bx + grid[0] * (by + grid[1] * bz)
            self._run_block(kernel, args, (bx, by, bz), block)
        for b in globals_:
            b.log, b.launch_log = b.launch_log, []
            _check(b, f"kernel {kname}: two thread blocks")
        self.env, self.n = host_env, 1

    def _run_block(self, kernel, args, bid, block):
        t = np.arange(self.n)
        X, Y = block[0], block[1]
        self.ids = {
            "thread_id": (t % X, (t // X) % Y, t // (X * Y)),
            "block_id": bid,
            "block_dim": block,
        }
        self.tid = t
        self.env = {}
        body = kernel.regions[0].blocks[0]
        args_in = list(body.arguments)
        n_wg = (
            ir.IntegerAttr(kernel.attributes["workgroup_attributions"]).value
            if "workgroup_attributions" in kernel.attributes
            else 0
        )
        n_args = len(ir.FunctionType(ir.TypeAttr(kernel.attributes["function_type"]).value).inputs)
        for arg, val in zip(args_in[:n_args], args):
            self.env[arg] = val if isinstance(val, _Buffer) else np.full(self.n, val)
        for k, arg in enumerate(args_in[n_args:]):
            mt = ir.MemRefType(arg.type)
            shape = tuple(mt.shape)
            private = k >= n_wg
            data = np.full(((self.n,) if private else ()) + shape, 7777, _dtype(mt.element_type))
            self.env[arg] = _Buffer(data, "private" if private else "workgroup", f"attr{k}")
        self._block(body, np.ones(self.n, bool))
        self._sync()

    def _sync(self):
        """A barrier: check the epoch's accesses; global ones also count per block."""
        for v in list(self.env.values()):
            if isinstance(v, _Buffer) and v.space in ("workgroup", "global"):
                if v.space == "global":
                    v.launch_log += [(a, np.full(len(a), self.block_id), w) for a, _, w in v.log]
                _check(v, f"{v.space} memory, one block")

    # ---- ops ---------------------------------------------------------------------------
    def _block(self, block, mask):
        for op in block.operations:
            op = op.operation
            out = self._op(op, mask)
            if out is not None:
                return out
        return None

    def _op(self, op, mask):
        name, env = op.name, self.env
        ins = [env.get(v) for v in op.operands]
        if name in ("scf.yield", "gpu.return", "func.return", "gpu.terminator"):
            return ins
        if name == "arith.constant":
            a = op.attributes["value"]
            t = op.results[0].type
            val = ir.FloatAttr(a).value if isinstance(a, ir.FloatAttr) else ir.IntegerAttr(a).value
            env[op.results[0]] = np.full(self.n, val, _dtype(t))
        elif name in ("gpu.thread_id", "gpu.block_id", "gpu.block_dim"):
            axis = "xyz".index(str(op.attributes["dimension"])[-2])
            env[op.results[0]] = np.broadcast_to(
                np.asarray(self.ids[name[4:]][axis], np.int64), (self.n,)
            ).copy()
        elif name == "memref.dim":  # (a symbolic program's size checks)
            env[op.results[0]] = np.full(self.n, ins[0].shape[int(ins[1][0])], np.int64)
        elif name == "cf.assert":
            if not ins[0].all():
                raise AssertionError(ir.StringAttr(op.attributes["msg"]).value)
        elif name == "gpu.barrier":
            if not mask.all():
                raise Race("gpu.barrier reached by only part of the block")
            self.barriers += 1
            self._sync()
        elif name == "gpu.shuffle":
            self._shuffle(op, ins, mask)
        elif name == "memref.load":
            buf, idx = ins[0], ins[1:]
            addr = buf.address(idx)
            rows = self.tid
            buf.log.append(
                (addr[mask] if np.ndim(addr) else np.full(mask.sum(), addr), rows[mask], False)
            )
            safe = np.where(mask, addr, 0)
            val = buf.flat[rows, safe] if buf.space == "private" else buf.flat[safe]
            env[op.results[0]] = val
        elif name == "memref.store":
            val, buf, idx = ins[0], ins[1], ins[2:]
            addr = np.broadcast_to(buf.address(idx), (self.n,))
            buf.log.append((addr[mask], self.tid[mask], True))
            if buf.space == "private":
                buf.flat[self.tid[mask], addr[mask]] = val[mask]
            else:
                buf.flat[addr[mask]] = val[mask]
        elif name == "scf.if":
            cond = ins[0].astype(bool)
            res = [None] * len(op.results)
            for region, m in ((op.regions[0], mask & cond), (op.regions[1], mask & ~cond)):
                if len(region.blocks) and m.any():
                    out = self._block(region.blocks[0], m)
                    for k, v in enumerate(out or []):
                        res[k] = v if res[k] is None else np.where(m, v, res[k])
            for r, v in zip(op.results, res):
                env[r] = v
        elif name == "scf.for":
            lb, ub, step = (int(self._uniform(x, mask)) for x in ins[:3])
            carried = ins[3:]
            body = op.regions[0].blocks[0]
            for i in range(lb, ub, step):
                env[body.arguments[0]] = np.full(self.n, i, np.int64)
                for a, v in zip(list(body.arguments)[1:], carried):
                    env[a] = v
                carried = self._block(body, mask)
            for r, v in zip(op.results, carried):
                env[r] = v
        elif name == "gpu.launch_func":
            self._launch(op)
        elif name in ("gpu.alloc",):
            mt = ir.MemRefType(op.results[0].type)
            env[op.results[0]] = _Buffer(
                np.zeros(mt.shape, _dtype(mt.element_type)), "global", "scratch"
            )
            if len(op.results) > 1:
                env[op.results[1]] = None
        elif name in gpu_sim_wmma.OPS:
            gpu_sim_wmma.step(self, op, ins, mask)
        elif name in ("gpu.wait", "gpu.dealloc"):
            for r in op.results:
                env[r] = None
        else:
            env[op.results[0]] = _arith(op, ins)
        return None

    def _uniform(self, x, mask):
        vals = np.unique(x[mask])
        assert len(vals) == 1, "scf.for bounds differ between threads"
        return vals[0]

    def _shuffle(self, op, ins, mask):
        val, offset, width = ins
        off, w = int(self._uniform(offset, mask)), int(self._uniform(width, mask))
        mode = str(op.attributes["mode"])
        lane = self.tid % WARP
        seg = lane - lane % w
        partner = {
            "xor": lane ^ off,
            "down": lane + off,
            "up": lane - off,
            "idx": np.full_like(lane, off),
        }[mode.split()[-1].rstrip(">")]
        valid = (partner >= seg) & (partner < seg + w)
        src = self.tid - lane + np.where(valid, partner, lane)
        if not (mask[src[mask]]).all() or src.max() >= self.n:
            raise Race("gpu.shuffle reads a lane that does not take part")
        self.env[op.results[0]] = val[src]
        self.env[op.results[1]] = valid


def _arith(op, ins):
    name = op.name.split(".", 1)[1]
    t = op.results[0].type
    if name in (
        "index_cast",
        "sitofp",
        "fptosi",
        "extf",
        "truncf",
        "extsi",
        "trunci",
        "index_castui",
        "uitofp",
        "fptoui",
        "extui",
    ):
        return ins[0].astype(_dtype(t))
    if name == "select":
        return np.where(ins[0], ins[1], ins[2])
    if name in ("cmpi", "cmpf"):
        ops = (
            ["eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge"]
            if name == "cmpi"
            else [
                "false",
                "oeq",
                "ogt",
                "oge",
                "olt",
                "ole",
                "one",
                "ord",
                "ueq",
                "ugt",
                "uge",
                "ult",
                "ule",
                "une",
                "uno",
                "true",
            ]
        )
        pred = ops[ir.IntegerAttr(op.attributes["predicate"]).value]
        if pred in ("false", "true", "ord", "uno"):
            raise NotImplementedError(f"simulator: cmpf {pred}")
        base = pred if pred in ("eq", "ne") else pred[1:]
        a, b = ins
        return {"eq": a == b, "ne": a != b, "lt": a < b, "le": a <= b, "gt": a > b, "ge": a >= b}[
            base
        ]
    a = ins[0]
    b = ins[1] if len(ins) > 1 else None
    fns = {
        "addf": np.add,
        "addi": np.add,
        "subf": np.subtract,
        "subi": np.subtract,
        "mulf": np.multiply,
        "muli": np.multiply,
        "divf": np.divide,
        "divui": np.floor_divide,
        "divsi": lambda x, y: np.trunc(x / y).astype(x.dtype),
        "floordivsi": np.floor_divide,
        "remui": np.remainder,
        "remsi": lambda x, y: np.fmod(x, y),
        "ceildivsi": lambda x, y: -(-x // y),
        "maximumf": np.maximum,
        "minimumf": np.minimum,
        "maxnumf": np.fmax,
        "minnumf": np.fmin,
        "maxsi": np.maximum,
        "minsi": np.minimum,
        "maxui": np.maximum,
        "minui": np.minimum,
        "andi": np.bitwise_and,
        "ori": np.bitwise_or,
        "xori": np.bitwise_xor,
        "negf": np.negative,
        "exp": np.exp,
        "log": np.log,
        "sqrt": np.sqrt,
        "absf": np.abs,
        "tanh": np.tanh,
        "rsqrt": lambda x: 1 / np.sqrt(x),
    }
    if name not in fns:
        raise NotImplementedError(f"simulator: {op.name}")
    with np.errstate(all="ignore"):
        r = fns[name](a) if b is None else fns[name](a, b)
    return np.asarray(r).astype(_dtype(t))


def simulate(module: ir.Module, *arrays) -> Simulator:
    """Run the host function of a `--emit gpu` module on numpy arrays (updated in place)."""
    sim = Simulator(module)
    sim.run(*arrays)
    return sim
