"""Random everyday schedules, as replayable Python code over the TVM 0.21 schedule API (for the
performance differential benchmarks/bench_random_vs_tvm.py; its test: tests/schedule/test_schedule_everyday.py).

Unlike tests/support/schedule_random.py (any primitive on any block, for correctness), a draw here is
what a TVM user writes: tile the main block's loops, reorder them, fuse and parallelize the outer
ones, vectorize and unroll inner ones, cache_read/cache_write with compute_at/reverse_compute_at
and storage_align, rfactor or decompose_reduction, inline or attach the other blocks. The draw
is made on a model of the loop nests read from the program text (one `T.grid` per block), not
on a live schedule, so it is the same code whichever side runs it and whichever side refuses it.

`draw(workload_text, seed)` -> code using a variable `sch`; `schedule_fn(code)` runs it.
`workloads(small)` -> name -> TVMScript text (a function `main`); small: tiny shapes for tests.
"""

import random
import re
from dataclasses import dataclass

# --- workloads --------------------------------------------------------------------------------


def _block(name: str, extents, kinds: str, store: str, init: str = "") -> str:
    """One block under its own `T.grid`: loops i0.., iter vars v0.. (used by `store`/`init`)."""
    loops = ", ".join(f"i{k}" for k in range(len(extents)))
    ivs = ", ".join(f"v{k}" for k in range(len(extents)))
    text = (
        f"    for {loops} in T.grid({', '.join(map(str, extents))}):\n"
        f'        with T.block("{name}"):\n'
        f'            {ivs} = T.axis.remap("{kinds}", [{loops}])\n'
    )
    if init:
        text += f"            with T.init():\n                {init}\n"
    return text + f"            {store}\n"


def _func(params: str, blocks, allocs=()) -> str:
    body = "".join(f"    {a}\n" for a in allocs) + "".join(blocks)
    return (
        "@T.prim_func\n"
        f"def main({params}):\n"
        '    T.func_attr({"global_symbol": "main", "tir.noalias": True})\n' + body
    )


def _buf(name: str, shape, dtype: str = "float32") -> str:
    dims = ", ".join(map(str, shape)) + ("," if len(shape) == 1 else "")
    return f'{name}: T.Buffer(({dims}), "{dtype}")'


def _params(*bufs) -> str:
    return ", ".join(_buf(*b) for b in bufs)


def _zero(dtype):
    return "0" if dtype.startswith("int") else f"T.{dtype}(0)"


def matmul(n, m, k, dtype="float32", acc=None):
    acc = acc or dtype
    term = (
        "A[v0, v2] * B[v2, v1]"
        if acc == dtype
        else f'T.Cast("{acc}", A[v0, v2]) * T.Cast("{acc}", B[v2, v1])'
    )
    return _func(
        _params(("A", (n, k), dtype), ("B", (k, m), dtype), ("C", (n, m), acc)),
        [
            _block(
                "C",
                (n, m, k),
                "SSR",
                f"C[v0, v1] = C[v0, v1] + {term}",
                f"C[v0, v1] = {_zero(acc)}",
            )
        ],
    )


def matmul_bias_relu(n, m, k):
    return _func(
        _params(("A", (n, k)), ("B", (k, m)), ("bias", (m,)), ("D", (n, m))),
        [
            _block(
                "C",
                (n, m, k),
                "SSR",
                "C[v0, v1] = C[v0, v1] + A[v0, v2] * B[v2, v1]",
                "C[v0, v1] = T.float32(0)",
            ),
            _block("D", (n, m), "SS", "D[v0, v1] = T.max(C[v0, v1] + bias[v1], T.float32(0))"),
        ],
        [f"C = T.alloc_buffer(({n}, {m}))"],
    )


def batch_matmul(b, n, m, k):
    return _func(
        _params(("A", (b, n, k)), ("B", (b, k, m)), ("C", (b, n, m))),
        [
            _block(
                "C",
                (b, n, m, k),
                "SSSR",
                "C[v0, v1, v2] = C[v0, v1, v2] + A[v0, v1, v3] * B[v0, v3, v2]",
                "C[v0, v1, v2] = T.float32(0)",
            )
        ],
    )


def int8_dot(n, k):
    """A batch of int8 dot products accumulated in int32."""
    return _func(
        _params(("A", (n, k), "int8"), ("B", (n, k), "int8"), ("C", (n,), "int32")),
        [
            _block(
                "C",
                (n, k),
                "SR",
                'C[v0] = C[v0] + T.Cast("int32", A[v0, v1]) * T.Cast("int32", B[v0, v1])',
                "C[v0] = 0",
            )
        ],
    )


def conv1d_ncw(c, f, w, r):
    return _func(
        _params(("A", (1, c, w + r - 1)), ("W", (f, c, r)), ("B", (1, f, w))),
        [
            _block(
                "B",
                (1, f, w, c, r),
                "SSSRR",
                "B[v0, v1, v2] = B[v0, v1, v2] + A[v0, v3, v2 + v4] * W[v1, v3, v4]",
                "B[v0, v1, v2] = T.float32(0)",
            )
        ],
    )


def conv2d_nchw(c, f, hw):
    """3x3, padding 1 by a padding block."""
    p = hw + 2
    return _func(
        _params(("A", (1, c, hw, hw)), ("W", (f, c, 3, 3)), ("B", (1, f, hw, hw))),
        [
            _block(
                "pad",
                (1, c, p, p),
                "SSSS",
                f"P[v0, v1, v2, v3] = T.if_then_else(1 <= v2 and v2 < {hw + 1} and 1 <= v3"
                f" and v3 < {hw + 1}, A[v0, v1, v2 - 1, v3 - 1], T.float32(0))",
            ),
            _block(
                "B",
                (1, f, hw, hw, c, 3, 3),
                "SSSSRRR",
                "B[v0, v1, v2, v3] = B[v0, v1, v2, v3] + P[v0, v4, v2 + v5, v3 + v6] * "
                "W[v1, v4, v5, v6]",
                "B[v0, v1, v2, v3] = T.float32(0)",
            ),
        ],
        [f"P = T.alloc_buffer((1, {c}, {p}, {p}))"],
    )


def conv2d_nhwc(c, f, hw):
    """3x3 over an input padded beforehand."""
    return _func(
        _params(("A", (1, hw + 2, hw + 2, c)), ("W", (3, 3, c, f)), ("B", (1, hw, hw, f))),
        [
            _block(
                "B",
                (1, hw, hw, f, 3, 3, c),
                "SSSSRRR",
                "B[v0, v1, v2, v3] = B[v0, v1, v2, v3] + A[v0, v1 + v4, v2 + v5, v6] * "
                "W[v4, v5, v6, v3]",
                "B[v0, v1, v2, v3] = T.float32(0)",
            )
        ],
    )


def depthwise(c, hw):
    return _func(
        _params(("A", (1, c, hw + 2, hw + 2)), ("W", (c, 3, 3)), ("B", (1, c, hw, hw))),
        [
            _block(
                "B",
                (1, c, hw, hw, 3, 3),
                "SSSSRR",
                "B[v0, v1, v2, v3] = B[v0, v1, v2, v3] + A[v0, v1, v2 + v4, v3 + v5] * "
                "W[v1, v4, v5]",
                "B[v0, v1, v2, v3] = T.float32(0)",
            )
        ],
    )


def maxpool(c, hw):
    """2x2, stride 2."""
    h = hw // 2
    return _func(
        _params(("A", (1, c, hw, hw)), ("B", (1, c, h, h))),
        [
            _block(
                "B",
                (1, c, h, h, 2, 2),
                "SSSSRR",
                "B[v0, v1, v2, v3] = T.max(B[v0, v1, v2, v3], A[v0, v1, v2 * 2 + v4, v3 * 2 + v5])",
                "B[v0, v1, v2, v3] = T.float32(-3.4028234663852886e38)",
            )
        ],
    )


def avgpool(c, hw):
    """3x3, stride 1, over an input padded beforehand: a sum, then a scale."""
    return _func(
        _params(("A", (1, c, hw + 2, hw + 2)), ("B", (1, c, hw, hw))),
        [
            _block(
                "S",
                (1, c, hw, hw, 3, 3),
                "SSSSRR",
                "S[v0, v1, v2, v3] = S[v0, v1, v2, v3] + A[v0, v1, v2 + v4, v3 + v5]",
                "S[v0, v1, v2, v3] = T.float32(0)",
            ),
            _block(
                "B",
                (1, c, hw, hw),
                "SSSS",
                "B[v0, v1, v2, v3] = S[v0, v1, v2, v3] * T.float32(0.1111111)",
            ),
        ],
        [f"S = T.alloc_buffer((1, {c}, {hw}, {hw}))"],
    )


def softmax(n, m):
    return _func(
        _params(("A", (n, m)), ("B", (n, m))),
        [
            _block(
                "maxelem",
                (n, m),
                "SR",
                "M[v0] = T.max(M[v0], A[v0, v1])",
                "M[v0] = T.float32(-3.4028234663852886e38)",
            ),
            _block("exp", (n, m), "SS", "E[v0, v1] = T.exp(A[v0, v1] - M[v0])"),
            _block("expsum", (n, m), "SR", "S[v0] = S[v0] + E[v0, v1]", "S[v0] = T.float32(0)"),
            _block("norm", (n, m), "SS", "B[v0, v1] = E[v0, v1] / S[v0]"),
        ],
        [
            f"M = T.alloc_buffer(({n},))",
            f"E = T.alloc_buffer(({n}, {m}))",
            f"S = T.alloc_buffer(({n},))",
        ],
    )


def layernorm(n, m):
    inv = f"T.float32({1 / m!r})"
    return _func(
        _params(("A", (n, m)), ("gamma", (m,)), ("beta", (m,)), ("B", (n, m))),
        [
            _block(
                "mean", (n, m), "SR", f"M[v0] = M[v0] + A[v0, v1] * {inv}", "M[v0] = T.float32(0)"
            ),
            _block(
                "var",
                (n, m),
                "SR",
                f"V[v0] = V[v0] + (A[v0, v1] - M[v0]) * (A[v0, v1] - M[v0]) * {inv}",
                "V[v0] = T.float32(0)",
            ),
            _block(
                "norm",
                (n, m),
                "SS",
                "B[v0, v1] = (A[v0, v1] - M[v0]) / T.sqrt(V[v0] + T.float32(1e-05)) * "
                "gamma[v1] + beta[v1]",
            ),
        ],
        [f"M = T.alloc_buffer(({n},))", f"V = T.alloc_buffer(({n},))"],
    )


ACTIVATIONS = {
    "gelu_erf": "X[v0, v1] * T.float32(0.5) * (T.float32(1) + T.erf(X[v0, v1] * "
    "T.float32(0.70710678)))",
    "gelu_tanh": "X[v0, v1] * T.float32(0.5) * (T.float32(1) + T.tanh(T.float32(0.7978846) * "
    "(X[v0, v1] + T.float32(0.044715) * X[v0, v1] * X[v0, v1] * X[v0, v1])))",
    "silu": "X[v0, v1] * T.sigmoid(X[v0, v1])",
}


def bias_activation(n, m, act):
    """A bias add, then an activation (the bias block is what a user inlines)."""
    return _func(
        _params(("A", (n, m)), ("bias", (m,)), ("B", (n, m))),
        [
            _block("bias", (n, m), "SS", "X[v0, v1] = A[v0, v1] + bias[v1]"),
            _block("act", (n, m), "SS", f"B[v0, v1] = {ACTIVATIONS[act]}"),
        ],
        [f"X = T.alloc_buffer(({n}, {m}))"],
    )


def transpose_add(n):
    return _func(
        _params(("A", (n, n)), ("B", (n, n)), ("C", (n, n))),
        [_block("C", (n, n), "SS", "C[v0, v1] = A[v1, v0] + B[v0, v1]")],
    )


def row_sum(n, m):
    return _func(
        _params(("A", (n, m)), ("B", (n,))),
        [_block("B", (n, m), "SR", "B[v0] = B[v0] + A[v0, v1]", "B[v0] = T.float32(0)")],
    )


def column_sum(n, m):
    return _func(
        _params(("A", (m, n)), ("B", (n,))),
        [_block("B", (n, m), "SR", "B[v0] = B[v0] + A[v1, v0]", "B[v0] = T.float32(0)")],
    )


def workloads(small: bool = False) -> dict:
    """name -> TVMScript text. small: shapes of a few hundred points (tests, no timing)."""
    s = (lambda big, little: little) if small else (lambda big, little: big)
    return {
        "matmul512_f32": matmul(s(512, 16), s(512, 16), s(512, 16)),
        "matmul256x1024x128_f32": matmul(s(256, 8), s(1024, 32), s(128, 8)),
        "matmul64x1024x512_f32": matmul(s(64, 4), s(1024, 16), s(512, 8)),
        "matmul256_f64": matmul(s(256, 8), s(256, 8), s(256, 8), "float64"),
        "matmul256_int8": matmul(s(256, 8), s(256, 16), s(256, 16), "int8", "int32"),
        "matmul256_bias_relu": matmul_bias_relu(s(256, 8), s(256, 16), s(256, 8)),
        "batch_matmul8x128": batch_matmul(s(8, 2), s(128, 8), s(128, 8), s(128, 8)),
        "int8_dot1024x512": int8_dot(s(1024, 16), s(512, 16)),
        "conv1d_ncw64": conv1d_ncw(s(64, 4), s(64, 8), s(512, 16), 3),
        "conv2d_nchw32x28": conv2d_nchw(s(32, 2), s(32, 4), s(28, 6)),
        "conv2d_nhwc32x28": conv2d_nhwc(s(32, 2), s(32, 4), s(28, 6)),
        "depthwise64x56": depthwise(s(64, 4), s(56, 8)),
        "maxpool64x112": maxpool(s(64, 4), s(112, 8)),
        "avgpool64x56": avgpool(s(64, 4), s(56, 8)),
        "softmax256x1024": softmax(s(256, 8), s(1024, 16)),
        "layernorm128x1024": layernorm(s(128, 8), s(1024, 16)),
        "gelu_erf512x1024": bias_activation(s(512, 8), s(1024, 16), "gelu_erf"),
        "gelu_tanh512x1024": bias_activation(s(512, 8), s(1024, 16), "gelu_tanh"),
        "silu512x1024": bias_activation(s(512, 8), s(1024, 16), "silu"),
        "transpose_add1024": transpose_add(s(1024, 16)),
        "row_sum1024": row_sum(s(1024, 16), s(1024, 16)),
        "column_sum1024": column_sum(s(1024, 16), s(1024, 16)),
    }


# --- the generator ----------------------------------------------------------------------------

_NEST = re.compile(
    r"for [^:]* in T\.grid\(([^)]*)\):\s*with T\.block\(\"(\w+)\"\):\s*"
    r"[^=]*= T\.axis\.remap\(\"(\w+)\""
)


@dataclass
class Loop:
    var: str  # the Python variable of its loop handle in the generated code
    extent: int
    kind: str  # "S" spatial, "R" reduction


def nests(src: str):
    """[(block name, [(extent, kind)])] of a program written one `T.grid` per block."""
    return [
        (name, [(int(e), k) for e, k in zip(grid.split(","), kinds)])
        for grid, name, kinds in _NEST.findall(src)
    ]


class _Gen:
    def __init__(self, rng: random.Random):
        self.rng = rng
        self.lines: list[str] = []
        self.n = 0

    def var(self, prefix: str = "l") -> str:
        self.n += 1
        return f"{prefix}{self.n}"

    def emit(self, line: str):
        self.lines.append(line)

    def chance(self, p: float) -> bool:
        return self.rng.random() < p

    def factor(self, extent: int):
        """A tile size for a loop of `extent`: mostly a dividing power of two."""
        divs = [f for f in (2, 4, 8, 16, 32, 64) if extent % f == 0 and f < extent]
        odd = [f for f in (3, 5, 6, 7, 12) if f < extent and extent % f]
        if divs and (not odd or self.chance(0.85)):
            return self.rng.choice(divs)
        return self.rng.choice(odd) if odd else None

    def split(self, loop: Loop):
        """Split `loop` in two or three pieces (outer first), or leave it whole."""
        f = self.factor(loop.extent)
        if f is None:
            return [loop]
        outer = -(-loop.extent // f)
        if self.chance(0.15) and outer >= 4:
            g = self.factor(outer)
            if g is not None and outer % g == 0:
                parts = [
                    Loop(self.var(), outer // g, loop.kind),
                    Loop(self.var(), g, loop.kind),
                    Loop(self.var(), f, loop.kind),
                ]
                self.emit(
                    f"{', '.join(p.var for p in parts)} = sch.split({loop.var}, "
                    f"factors=[None, {g}, {f}])"
                )
                return parts
        parts = [Loop(self.var(), outer, loop.kind), Loop(self.var(), f, loop.kind)]
        self.emit(f"{parts[0].var}, {parts[1].var} = sch.split({loop.var}, factors=[None, {f}])")
        return parts


def draw(src: str, seed: int) -> str:
    """A random everyday schedule of the program `src`, as code over `sch` (TVM 0.21 API)."""
    g = _Gen(random.Random(seed))
    blocks = nests(src)
    names = [name for name, _ in blocks]
    main = max(
        (i for i, (_, loops) in enumerate(blocks) if any(k == "R" for _, k in loops)),
        default=len(blocks) - 1,
    )
    bvar = {name: g.var("b") for name in names}
    for name in names:
        g.emit(f'{bvar[name]} = sch.get_block("{name}")')
    # elementwise producers inlined into their consumers (a padding, a bias)
    inlined = set()
    for i, (name, loops) in enumerate(blocks[:-1]):
        if all(k == "S" for _, k in loops) and g.chance(0.5):
            g.emit(f"sch.compute_inline({bvar[name]})")
            inlined.add(name)
    main_name, main_nest = blocks[main]
    anchors = _schedule_main(g, bvar[main_name], main_nest)
    for i, (name, loops) in enumerate(blocks):
        if i == main or name in inlined:
            continue
        if anchors and g.chance(0.35):
            target = g.rng.choice(anchors)
            g.emit(
                f"sch.{'compute_at' if i < main else 'reverse_compute_at'}({bvar[name]}, {target})"
            )
            if g.chance(0.4):
                g.emit(f"sch.vectorize(sch.get_loops({bvar[name]})[-1])")
        else:
            _schedule_elementwise(g, bvar[name], loops)
    return "\n".join(g.lines) + "\n"


def _schedule_main(g: _Gen, b: str, nest) -> list:
    """Tile, reorder, cache, parallelize, vectorize, unroll the main block; returns the loop
    variables other blocks may be attached to (its outer spatial loops)."""
    loops = [Loop(g.var(), e, k) for e, k in nest]
    g.emit(f"{', '.join(lp.var for lp in loops)}, = sch.get_loops({b})")
    reduction = [lp for lp in loops if lp.kind == "R"]
    if reduction and g.chance(0.15):
        return _rfactor(g, b, loops)
    pieces = [g.split(lp) if g.chance(0.75 if lp.kind == "S" else 0.35) else [lp] for lp in loops]
    outer = [p[0] for p in pieces if p[0].kind == "S"]
    middle = [q for p in pieces if p[0].kind == "S" for q in p[1:-1]]
    inner_s = [p[-1] for p in pieces if p[0].kind == "S" and len(p) > 1]
    r_outer = [p[0] for p in pieces if p[0].kind == "R"]
    r_inner = [q for p in pieces if p[0].kind == "R" for q in p[1:]]
    if g.chance(0.25):
        g.rng.shuffle(inner_s)
    if g.chance(0.25):  # the whole reduction innermost
        order = outer + middle + inner_s + r_outer + r_inner
    else:
        order = outer + middle + r_outer + r_inner + inner_s
    if [lp.var for lp in order] != [q.var for p in pieces for q in p]:
        g.emit(f"sch.reorder({', '.join(lp.var for lp in order)})")
    # fuse the leading spatial loops into one
    lead = 0
    while lead < len(order) and order[lead].kind == "S" and order[lead] in outer:
        lead += 1
    k = min(lead, g.rng.choice((1, 2, 2, 3)))
    if k >= 2:
        fused = Loop(g.var(), 1, "S")
        for lp in order[:k]:
            fused.extent *= lp.extent
        g.emit(f"{fused.var} = sch.fuse({', '.join(lp.var for lp in order[:k])})")
        order = [fused] + order[k:]
        lead -= k - 1
    anchors = [lp.var for lp in order[: max(lead, 1)]]
    if g.chance(0.15):
        cr = g.var("b")
        g.emit(f'{cr} = sch.cache_read({b}, 0, "{g.rng.choice(("global", "local"))}")')
        g.emit(f"sch.compute_at({cr}, {g.rng.choice(anchors + [lp.var for lp in r_outer])})")
        if g.chance(0.3):
            g.emit(f"sch.storage_align({cr}, 0, 0, 16, 1)")
    if g.chance(0.3):
        cw = g.var("b")
        g.emit(f'{cw} = sch.cache_write({b}, 0, "local")')
        g.emit(f"sch.reverse_compute_at({cw}, {g.rng.choice(anchors)})")
        if g.chance(0.2):
            g.emit(f"sch.storage_align({b}, 0, 0, 16, 1)")
        if g.chance(0.5):
            g.emit(f"sch.vectorize(sch.get_loops({cw})[-1])")
    if order[0].kind == "S" and order[0].extent > 1 and g.chance(0.85):
        g.emit(f"sch.parallel({order[0].var})")
    last = order[-1]
    if last.kind == "S" and last.extent <= 64 and len(order) > 1 and g.chance(0.7):
        g.emit(f"sch.vectorize({last.var})")
    unrollable = [lp for lp in inner_s + r_inner if lp.extent <= 16 and lp is not last]
    if unrollable and g.chance(0.4):
        g.emit(f"sch.unroll({g.rng.choice(unrollable).var})")
    if reduction and g.chance(0.5):
        first_r = next(lp for lp in order if lp.kind == "R")
        g.emit(f"sch.decompose_reduction({b}, {first_r.var})")
    return anchors


def _rfactor(g: _Gen, b: str, loops) -> list:
    """Split the last reduction loop and factor its inner piece out into its own block."""
    r = [lp for lp in loops if lp.kind == "R"][-1]
    f = g.factor(r.extent)
    if f is None:
        return []
    ro, ri = g.var(), g.var()
    g.emit(f"{ro}, {ri} = sch.split({r.var}, factors=[None, {f}])")
    rf = g.var("b")
    g.emit(f"{rf} = sch.rfactor({ri if g.chance(0.5) else ro}, factor_axis=0)")
    if g.chance(0.6):
        g.emit(f"sch.parallel(sch.get_loops({rf})[0])")
    if g.chance(0.4):
        g.emit(f"sch.vectorize(sch.get_loops({rf})[-1])")
    return []


def _schedule_elementwise(g: _Gen, b: str, nest):
    """A block left on its own loops: fuse/parallelize the outer ones, vectorize the last."""
    if not g.chance(0.7):
        return
    loops = [Loop(g.var(), e, k) for e, k in nest]
    g.emit(f"{', '.join(lp.var for lp in loops)}, = sch.get_loops({b})")
    last = loops[-1]
    if last.kind == "S" and g.chance(0.7):
        f = g.rng.choice([f for f in (4, 8, 16) if f <= last.extent] or [last.extent])
        lo, li = g.var(), g.var()
        g.emit(f"{lo}, {li} = sch.split({last.var}, factors=[None, {f}])")
        g.emit(f"sch.vectorize({li})")
        loops[-1] = Loop(lo, -(-last.extent // f), "S")
    if loops[0].kind == "S" and len(loops) > 1 and g.chance(0.8):
        outer = loops[0].var
        if loops[1].kind == "S" and g.chance(0.4):
            outer = g.var()
            g.emit(f"{outer} = sch.fuse({loops[0].var}, {loops[1].var})")
        g.emit(f"sch.parallel({outer})")


def schedule_fn(code: str):
    """The schedule function (either API) that runs the generated `code`."""
    compiled = compile(code, "<everyday schedule>", "exec")

    def fn(sch):
        exec(compiled, {"sch": sch})  # noqa: S102 - code this module generated

    return fn
