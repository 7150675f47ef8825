"""Random schedules over all primitives, as TVM-API schedule functions (for the differential
against TVM: tests/differential/test_schedule_tvm_differential.py and the seed loop tests/support/schedule_fuzz.py).

A schedule is a list of steps `(kind, bi, a, b, c, factor)`: small integers choose the block,
loops and arguments, so TVM and tir_mlir see the same choices whatever each one rejects.
"""

import random
import re
from pathlib import Path

PROGRAM_DIR = Path(__file__).parent.parent / "data" / "programs"
# programs TVM reads as one PrimFunc (the edge_* ones exercise the printer, not schedules)
PROGRAM_NAMES = (
    "matmul",
    "conv2d_pad",
    "softmax",
    "layernorm",
    "batch_matmul",
    "int8_matmul",
    "maxpool2d",
    "fp16_chain",
    "conv2d_nhwc",
    "depthwise_conv2d",
    "transpose_add",
)

KINDS = [
    "split",
    "split3",
    "split_nondiv",
    "fuse",
    "reorder",
    "reorder3",
    "parallel",
    "vectorize",
    "unroll",
    "annotate",
    "add_unit_loop",
    "compute_at",
    "reverse_compute_at",
    "compute_inline",
    "reverse_compute_inline",
    "cache_read",
    "cache_read_consumers",
    "cache_write",
    "set_scope",
    "rfactor",
    "decompose_reduction",
    "blockize",
    "storage_align",
    "transform_layout",
]
# Issue 13's primitives: drawn by the seed loop (tests/support/schedule_fuzz.py runs each seed in a worker
# process), not in-process, as TVM 0.21 can crash the process on some of their inputs.
KINDS_NEW = [
    "loop_partition",
    "decompose_padding",
    "reindex",
    "reorder_block_iter_var",
    "merge",
    "rolling_buffer",
    "pad_einsum",
    "set_axis_separator",
    "annotate_buffer_access",
    "unsafe_hide_buffer_access",
]
FUZZ_KINDS = KINDS + KINDS_NEW
FACTORS = [None, 2, 3, 4, 5, 8, 16]
# issue 13's cache primitives (drawn by the seed loop too; see _cache_step)
KINDS_CACHE = [
    "reindex_cache_read",
    "reindex_cache_write",
    "cache_inplace",
    "cache_index",
    "read_at",
    "write_at",
]
FUZZ_KINDS += KINDS_CACHE
# the last two of issue 13: block iter space and buffer dtype rewrites
KINDS_BLOCK = ["transform_block_layout", "unsafe_set_dtype"]
FUZZ_KINDS += KINDS_BLOCK


def program(name: str) -> str:
    return (PROGRAM_DIR / f"{name}.tir").read_text()


def block_names(src: str):
    return re.findall(r'T\.block\("(\w+)"\)', src)


def random_steps(rng: random.Random, n: int):
    return [
        (
            rng.choice(FUZZ_KINDS),
            rng.randrange(8),
            rng.randrange(8),
            rng.randrange(8),
            rng.randrange(8),
            rng.choice(FACTORS),
        )
        for _ in range(n)
    ]


def from_seed(seed: int):
    """(program name, steps) of one seeded random schedule."""
    rng = random.Random(seed)
    return rng.choice(PROGRAM_NAMES), random_steps(rng, rng.randint(1, 6))


def random_schedule(src: str, steps):
    """A schedule function (TVM API) applying `steps`; block handles are kept in a list (new
    blocks appended, inlined ones dropped) so both sides see the same choices."""

    def fn(sch):
        blocks = [sch.get_block(n) for n in block_names(src)]
        for step in steps:
            _step(sch, blocks, *step)

    return fn


def _step(sch, blocks, kind, bi, a, b, c, factor):
    blk = blocks[bi % len(blocks)]
    other = blocks[(bi + 1 + b) % len(blocks)]
    loops = sch.get_loops(blk)
    n = len(loops)
    la, lb, lc = (loops[a % n], loops[b % n], loops[c % n]) if loops else (None,) * 3
    if kind in KINDS_CACHE:
        return _cache_step(sch, blocks, kind, blk, la, a, b, c)
    if kind in ("compute_inline", "reverse_compute_inline"):
        getattr(sch, kind)(blk)
        blocks.remove(blk)
    elif kind in ("cache_read", "cache_write"):
        blocks.append(getattr(sch, kind)(blk, a % 2, "local" if b % 2 else "global"))
    elif kind == "cache_read_consumers":
        consumers = [x for x in (blk, other)[: 1 + c % 2]]
        blocks.append(sch.cache_read(other, a % 2, "global", consumer_blocks=consumers))
    elif kind == "set_scope":
        sch.set_scope(blk, 0, "global" if b % 2 else "local")
    elif kind == "storage_align":
        sch.storage_align(blk, 0, a % 2, factor or 8, c % 3)
    elif kind == "transform_layout":
        maps = [
            lambda i, j: (j, i),
            lambda i, j: (i // 4, j, i % 4),
            lambda i, j: (i, j // 8, j % 8),
        ]
        sch.transform_layout(blk, ("write", 0), maps[c % len(maps)])
    elif kind == "reindex":
        blocks.append(sch.reindex(blk, ("read", a % 2) if b % 2 else ("write", 0)))
    elif kind == "rolling_buffer":
        sch.rolling_buffer(blk, 0)
    elif kind == "pad_einsum":
        n_iters = len(sch.get(blk).iter_vars)
        sch.pad_einsum(blk, [(factor or 4) if (k + a) % 3 == 0 else 1 for k in range(n_iters)])
    elif kind in ("set_axis_separator", "annotate_buffer_access", "unsafe_hide_buffer_access"):
        _region_step(sch, blk, kind, a, b)
    elif kind == "transform_block_layout":
        sch.transform_block_layout(blk, _block_map(sch.get(blk).iter_vars, c))
    elif kind == "unsafe_set_dtype":
        # a wider float (the numbers stay those of the unscheduled program) or the same dtype
        if sch.get(blk).writes:
            sch.unsafe_set_dtype(blk, 0, "float64" if b % 2 else "float32")
    elif kind == "reorder_block_iter_var":
        n_iters = len(sch.get(blk).iter_vars)
        sch.reorder_block_iter_var(blk, [(k + a) % n_iters for k in range(n_iters)][:: (-1) ** b])
    elif la is None:
        sch.add_unit_loop(blk)
    elif kind == "loop_partition":
        # TVM 0.21 segfaults on a loop holding several statements: draw it only over one block
        if len(sch.get_child_blocks(la)) == 1:
            sch.loop_partition(la, [factor or 2, None] if b % 2 else [None, factor or 3])
    elif kind == "merge":  # (TVM 0.21 aborts when merging a loop with itself)
        target = sch.get_loops(other)
        if target and not sch.get(la).same_as(sch.get(target[a % len(target)])):
            sch.merge(la, target[a % len(target)])
    elif kind == "decompose_padding":
        blocks.append(sch.decompose_padding(blk, la))
    elif kind == "split":
        sch.split(
            la,
            factors=[None, factor or 2] if b % 2 else [factor or 3, None],
            preserve_unit_iters=bool(a % 2),
        )
    elif kind == "split3":
        sch.split(la, factors=[2, None, factor or 2], preserve_unit_iters=bool(c % 2))
    elif kind == "split_nondiv":
        sch.split(la, factors=[None, 3 + 2 * (c % 3)] if b % 2 else [3 + 2 * (c % 3), None])
    elif kind == "fuse":
        sch.fuse(*loops[min(a, b) % n :][: 2 + c % 2], preserve_unit_iters=bool(b % 2))
    elif kind == "reorder":
        sch.reorder(lb, la)
    elif kind == "reorder3":
        sch.reorder(lc, la, lb)
    elif kind == "annotate":
        sch.annotate(la, "pragma_auto_unroll_max_step", 4)
    elif kind == "add_unit_loop":
        sch.add_unit_loop(blk if b % 2 else la)
    elif kind in ("compute_at", "reverse_compute_at"):
        target = sch.get_loops(other)
        if target:
            getattr(sch, kind)(
                blk,
                target[a % len(target)],
                preserve_unit_loops=bool(b % 2),
                index=(-1, 0, -2)[c % 3],
            )
    elif kind == "rfactor":
        blocks.append(sch.rfactor(la, factor_axis=c % 2))
    elif kind == "decompose_reduction":
        blocks.append(sch.decompose_reduction(blk, la))
    elif kind == "blockize":
        blocks.append(sch.blockize(la))
    else:
        getattr(sch, kind)(la)


def _region_step(sch, blk, kind, a, b):
    """Issue 13's region primitives, with arguments that fit the block's buffers."""
    view = sch.get(blk)
    kinds = [("read", k) for k in range(len(view.reads))] + [
        ("write", k) for k in range(len(view.writes))
    ]
    if not kinds:
        return
    buf_type, index = kinds[a % len(kinds)]
    region = (view.reads if buf_type == "read" else view.writes)[index]
    ndim = region.count(",") + 1 if isinstance(region, str) else len(region.region)
    if kind == "set_axis_separator":
        if ndim > 1:
            sch.set_axis_separator(blk, (buf_type, index), [1 + b % (ndim - 1)])
    elif kind == "annotate_buffer_access":
        sch.annotate_buffer_access(
            blk, index, buf_type, lambda *v: [(x, x + (1 + b % 2)) for x in v]
        )
    else:
        sch.unsafe_hide_buffer_access(blk, buf_type, [index])


def _cache_step(sch, blocks, kind, blk, loop, a, b, c):
    """One of issue 13's cache primitives; an index map uses the iter vars the chosen access
    uses (found in its region text, the same in both APIs), reversed or with the first split."""
    scope = "local" if b % 2 else "shared"
    view = sch.get(blk)
    if kind in ("reindex_cache_read", "reindex_cache_write"):
        regions = [str(r) for r in (view.reads if kind.endswith("read") else view.writes)]
        i = a % max(1, len(regions))
        names = [str(iv.var) for iv in view.iter_vars]
        text = regions[i].partition("[")[2] if regions else ""
        used = [k for k, n in enumerate(names) if re.search(rf"\b{n}\b", text)]
        blocks.append(getattr(sch, kind)(blk, i, scope, _index_map(len(names), used, c)))
    elif kind == "cache_inplace":
        blocks.extend(sch.cache_inplace(blk, a % 2, scope))
    elif kind == "cache_index":
        blocks.extend(sch.cache_index(blk, "global", c % 3))
    elif loop is not None:
        blocks.append(getattr(sch, kind)(loop, blk, a % 2 if kind == "read_at" else 0, scope))


def _block_map(iter_vars, c: int):
    """A bijective map of the block's iter vars: reversed, the first two fused, or the first
    split by 4 (TVM refuses what is not bijective on the domain, as we must)."""
    extents = [int(iv.dom.extent) for iv in iter_vars]

    def pick(vs):
        if c % 3 == 1 and len(vs) > 1:
            return (vs[0] * extents[1] + vs[1], *vs[2:])
        if c % 3 == 2 and vs:
            return (vs[0] // 4, vs[0] % 4, *vs[1:])
        return tuple(vs[::-1])

    return _ARITY[len(iter_vars)](pick)


def _index_map(n: int, used, c: int):
    """A function of n iter vars (named parameters: TVM needs the arity) returning those at
    `used`: as they are, reversed, or the first split by 4."""

    def pick(vs):
        u = [vs[k] for k in used]
        if c % 3 == 1:
            u = u[::-1]
        elif c % 3 == 2 and u:
            u = [u[0] // 4, *u[1:], u[0] % 4]
        return tuple(u)

    return _ARITY[n](pick)


_ARITY = {
    0: lambda p: lambda: p([]),
    1: lambda p: lambda i0: p([i0]),
    2: lambda p: lambda i0, i1: p([i0, i1]),
    3: lambda p: lambda i0, i1, i2: p([i0, i1, i2]),
    4: lambda p: lambda i0, i1, i2, i3: p([i0, i1, i2, i3]),
    5: lambda p: lambda i0, i1, i2, i3, i4: p([i0, i1, i2, i3, i4]),
    6: lambda p: lambda i0, i1, i2, i3, i4, i5: p([i0, i1, i2, i3, i4, i5]),
    7: lambda p: lambda i0, i1, i2, i3, i4, i5, i6: p([i0, i1, i2, i3, i4, i5, i6]),
    8: lambda p: lambda i0, i1, i2, i3, i4, i5, i6, i7: p([i0, i1, i2, i3, i4, i5, i6, i7]),
}
