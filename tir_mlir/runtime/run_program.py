"""What `tir-mlir run` does: random inputs, build, run, compare with the interpreter, time."""

import numpy as np
from mlir import ir

from tir_mlir.context import get_context
from tir_mlir.dialect.ops import Block
from tir_mlir.dtypes import is_float, numpy_dtype
from tir_mlir.errors import RuntimeCallError
from tir_mlir.passes.lowering.common import walk
from tir_mlir.runtime import aligned
from tir_mlir.runtime.signature import signatures

TOLERANCE = {"float16": 2e-2, "bfloat16": 5e-2, "float32": 1e-4, "float64": 1e-9}


def random_array(shape, dtype, rng):
    """Inputs that keep every dtype's arithmetic meaningful (small ints, floats in [-1, 1)),
    64-byte aligned (as TVM allocates) so that timings are not those of split vector loads."""
    if dtype == "bool":
        values = rng.random(shape) < 0.5
    elif is_float(dtype):
        values = rng.uniform(-1, 1, shape).astype(numpy_dtype(dtype))
    else:
        lo = 0 if dtype.startswith("uint") else -4
        values = rng.integers(lo, 5, shape).astype(numpy_dtype(dtype))
    return aligned.copy(values)


FLOAT_OPS = {
    "arith.addf": 1,
    "arith.subf": 1,
    "arith.mulf": 1,
    "arith.divf": 1,
    "arith.maximumf": 1,
    "arith.minimumf": 1,
    "arith.maxnumf": 1,
    "arith.minnumf": 1,
    "math.fma": 2,
}


def flop_count(module: ir.Module, func_name: str):
    """Floating-point operations of the reduction blocks: the float arithmetic ops of each
    one's body (its update, init excluded: 2 for a multiply-accumulate, 1 for a max) times its
    iteration domain size. None when there is none (then no GFLOP/s is reported)."""
    with get_context():
        f = next(
            op.operation
            for op in module.body.operations
            if op.operation.name == "func.func"
            and ir.StringAttr(op.operation.attributes["sym_name"]).value == func_name
        )
        total = 0
        for op in walk(f):
            if op.name == "tir.block" and "R" in Block(op).iter_types:
                block = Block(op)
                per_point = _float_ops(block.body)
                n = 1
                for _, extent in block.domains:
                    n *= extent
                total += per_point * n
    return total or None


def _float_ops(body: ir.Block) -> int:
    """Float arithmetic ops in a block body, nested blocks (counted on their own) excluded."""
    n = 0
    for o in body.operations:
        o = o.operation
        n += FLOAT_OPS.get(o.name, 0)
        if o.name != "tir.block":
            n += sum(_float_ops(b) for r in o.regions for b in r.blocks)
    return n


def first_mismatch(params, got, want):
    """(buffer name, error) of the first buffer where `got` and `want` differ beyond the
    dtype's tolerance (relative error for floats, count of differing elements otherwise), or
    None when all match."""
    for p, g, w in zip(params, got, want):
        if is_float(p.dtype):
            g64, w64 = g.astype(np.float64), w.astype(np.float64)
            err = float(np.max(np.abs(g64 - w64) / (1 + np.abs(w64)), initial=0))
            ok = err <= TOLERANCE[p.dtype]  # NaN compares False: a mismatch
        else:
            err = int(np.count_nonzero(g != w))
            ok = err == 0
        if not ok:
            return p.name, err
    return None


def run_program(
    mod,
    func_name=None,
    *,
    check=False,
    bench=False,
    seed=0,
    debug=False,
    target="llvm",
    number=3,
    repeat=5,
    inputs=None,
    outputs=None,
    extern_libs=(),
    reference=None,
):
    """Yield report lines for `tir-mlir run`; raises RuntimeCallError when --check fails.
    `check`: compare the outputs with `reference` (the unscheduled program, compiled: what
    the tuner compares candidates with) when given, else with the interpreter; "interp"
    compares with the interpreter in any case.
    `inputs` / `outputs`: buffer name -> .npy file to read it from / save it to;
    `extern_libs`: build's."""
    from tir_mlir.interpreter import interpret
    from tir_mlir.runtime.build import build

    with get_context():
        sigs = signatures(mod.module)
    if not sigs:
        raise RuntimeCallError("the program has no function to run")
    func_name = func_name or next(iter(sigs))
    if func_name not in sigs:
        raise RuntimeCallError(f"no function named {func_name!r}; the module has {sorted(sigs)}")
    params = sigs[func_name]
    rng = np.random.default_rng(seed)
    inputs = _given_arrays(params, inputs or {}, rng)
    lib = build(mod, target=target, debug=debug, extern_libs=extern_libs)
    got = [a.copy() for a in inputs]
    lib[func_name](*got)
    yield f"{func_name}: ran on {len(params)} buffers " + ", ".join(
        f"{p.name}{list(p.shape)}:{p.dtype}" for p in params
    )
    for name, file in (outputs or {}).items():
        np.save(file, got[_param_index(params, name, "--output")])
        yield f"saved {name} to {file}"
    if check:
        want = [a.copy() for a in inputs]
        if reference is not None and check != "interp":
            what = "the unscheduled program, compiled"
            build(reference, target=target, extern_libs=extern_libs)[func_name](*want)
        else:
            what = "the interpreter"
            interpret(mod, func_name, *want)
        bad = first_mismatch(params, got, want)
        if bad:
            raise RuntimeCallError(
                f"--check failed: buffer {bad[0]!r} differs from {what} (error {bad[1]})"
            )
        yield f"check: OK (matches {what})"
    if bench:
        res = lib.time_evaluator(func_name, number=number, repeat=repeat, min_repeat_ms=50)(*got)
        line = f"median: {res.median * 1e3:.4f} ms"
        flops = flop_count(mod.module, func_name)
        if flops:
            line += f", {flops / res.median / 1e9:.2f} GFLOP/s"
        yield line


def _param_index(params, name, option) -> int:
    for k, p in enumerate(params):
        if p.name == name:
            return k
    raise RuntimeCallError(
        f"{option} {name}: no buffer of that name; the buffers are "
        f"{', '.join(p.name for p in params)}"
    )


def _given_arrays(params, files: dict, rng) -> list:
    """Random inputs, replaced by the .npy files given for some buffers (checked to fit)."""
    arrays = []
    for p in params:
        try:
            arrays.append(random_array(p.shape, p.dtype, rng))
        except MemoryError:
            size = int(np.prod(p.shape, dtype=np.float64)) * numpy_dtype(p.dtype).itemsize
            raise RuntimeCallError(
                f"not enough memory for buffer {p.name!r} "
                f"({'x'.join(map(str, p.shape))} {p.dtype}: "
                f"{size / 2**30:.1f} GiB)"
            ) from None
    for name, file in files.items():
        k = _param_index(params, name, "--input")
        try:
            a = np.load(file, allow_pickle=False)
        except (OSError, ValueError) as e:
            raise RuntimeCallError(
                f"--input {name}={file}: cannot read a .npy array ({e})"
            ) from None
        p = params[k]
        if tuple(a.shape) != tuple(p.shape) or a.dtype != numpy_dtype(p.dtype):
            raise RuntimeCallError(
                f"--input {name}={file}: expected shape {list(p.shape)} "
                f"{p.dtype}, the file holds {list(a.shape)} {a.dtype}"
            )
        arrays[k] = np.ascontiguousarray(a)
    return arrays
