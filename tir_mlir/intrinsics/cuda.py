"""CUDA tensor-core intrinsics (WMMA, sm_70+; 16x16x16 tiles, fp16 in, fp32 accumulate), under
TVM's names:

    wmma_fill_16x16x16_f32            C_frag[0:16, 0:16] = 0             (wmma.accumulator)
    wmma_load_16x16x16_f16_a_shared   A_frag[0:16, 0:16] = A_shared[..]  (wmma.matrix_a)
    wmma_load_16x16x16_f16_b_shared   B_frag[0:16, 0:16] = B_shared[..]  (wmma.matrix_b)
    wmma_sync_16x16x16_f16f16f32      C_frag += A_frag @ B_frag          (f16 x f16 -> f32)
    wmma_store_16x16x16_f32_global    C[..] = C_frag[0:16, 0:16]         (and _f32_shared)
    wmma_load_16x16x16_f16_b_trans_shared, wmma_sync_16x16x16_f16f16f32_trans: B stored n x k

A fragment buffer (scope `wmma.*`) holds 16x16 tiles, each spread over the 32 threads of a warp:
the tensorized blocks run once per warp (no loop around them bound to the warp's lanes), as in
TVM. The descs are TVM's. The impls are the same loop nests with the loop annotated
`tir_mlir.wmma` = the operation: tensorize rebinds them to the target buffers, compaction and
barrier placement see ordinary accesses, and `gpu-lower-wmma` (passes/lowering/gpu_wmma.py)
turns each annotated nest into one `nvvm.wmma.*` op over the tile, the fragment buffers into the
registers each thread holds (8 per 16x16 tile).
"""

from tir_mlir.schedule.tensor_intrin import TensorIntrin

WMMA_ATTR = "tir_mlir.wmma"


def _buf(name, shape, dtype, scope):
    return (
        f'    {name} = T.match_buffer({name.lower()}, ({shape[0]}, {shape[1]}), "{dtype}", '
        f'align=64, offset_factor=16, scope="{scope}")\n'
    )


def _func(name, params, body, reads, writes, block=None, op=None):
    """desc (`block`: the name of its inner block) or impl (`op`: the annotation) text; `body`
    is a statement with {i}, {j}, {k} for the tile's indices."""
    args = ", ".join(f"{p.lower()}: T.handle" for p, *_ in params)
    text = f"@T.prim_func\ndef {name}({args}):\n"
    text += "".join(_buf(*p) for p in params)
    text += f'    with T.block("root"):\n        T.reads({reads})\n        T.writes({writes})\n'
    loops = ["i", "j", "k"] if "{k}" in body else ["i", "j"]
    if block is not None:
        iters = [f"v{x}{x}" for x in loops]  # TVM's names: vii, vjj, vkk
        text += f"        for {', '.join(loops)} in T.grid({', '.join(['16'] * len(loops))}):\n"
        text += f'            with T.block("{block}"):\n'
        text += (
            f'                {", ".join(iters)} = T.axis.remap("{"SSR"[: len(loops)]}", '
            f"[{', '.join(loops)}])\n"
        )
        text += "                " + body.format(**dict(zip(loops, iters))) + "\n"
    else:
        text += f'        for i in T.serial(16, annotations={{"{WMMA_ATTR}": "{op}"}}):\n'
        for depth, x in enumerate(loops[1:]):
            text += "    " * (depth + 3) + f"for {x} in T.serial(16):\n"
        text += "    " * (len(loops) + 2) + body.format(**{x: x for x in loops}) + "\n"
    return text


def _register(name, params, body, reads, writes, block, op):
    base = "_".join(name.split("_")[:2])  # wmma_load_desc ..., as TVM's generators
    desc = _func(base + "_desc", params, body, reads, writes, block=block)
    impl = _func(base + "_impl", params, body, reads, writes, op=op)
    TensorIntrin.register(name, desc, impl)


FRAG_A, FRAG_B, ACC = "wmma.matrix_a", "wmma.matrix_b", "wmma.accumulator"

# "_dyn": from `shared.dyn` buffers (the same shared memory here). "b_trans": B stored n x k
# (C = A @ B^T), the tile loaded column-major and multiplied as such.
for _shared, _suffix in (("shared", "shared"), ("shared.dyn", "shared_dyn")):
    for _m, _op in (("a", "load_a"), ("b", "load_b"), ("b_trans", "load_b_trans")):
        _register(
            f"wmma_load_16x16x16_f16_{_m}_{_suffix}",
            [
                ("A", (16, 16), "float16", _shared),
                ("C", (16, 16), "float16", FRAG_A if _m == "a" else FRAG_B),
            ],
            "C[{i}, {j}] = A[{i}, {j}]",
            "A[0:16, 0:16]",
            "C[0:16, 0:16]",
            "load",
            _op,
        )

_register(
    "wmma_fill_16x16x16_f32",
    [("C", (16, 16), "float32", ACC)],
    "C[{i}, {j}] = T.float32(0)",
    "",
    "C[0:16, 0:16]",
    "init",
    "fill",
)

for _scope in ("global", "shared", "shared.dyn"):
    _register(
        f"wmma_store_16x16x16_f32_{_scope.replace('.', '_')}",
        [("A", (16, 16), "float32", ACC), ("C", (16, 16), "float32", _scope)],
        "C[{i}, {j}] = A[{i}, {j}]",
        "A[0:16, 0:16]",
        "C[0:16, 0:16]",
        "store",
        "store",
    )

_register(
    "wmma_sync_16x16x16_f16f16f32",
    [
        ("A", (16, 16), "float16", FRAG_A),
        ("B", (16, 16), "float16", FRAG_B),
        ("C", (16, 16), "float32", ACC),
    ],
    'C[{i}, {j}] = C[{i}, {j}] + T.Cast("float32", A[{i}, {k}]) * T.Cast("float32", B[{k}, {j}])',
    "C[0:16, 0:16], A[0:16, 0:16], B[0:16, 0:16]",
    "C[0:16, 0:16]",
    "",
    "sync",
)
_register(
    "wmma_sync_16x16x16_f16f16f32_trans",
    [
        ("A", (16, 16), "float16", FRAG_A),
        ("B", (16, 16), "float16", FRAG_B),
        ("C", (16, 16), "float32", ACC),
    ],
    'C[{i}, {j}] = C[{i}, {j}] + T.Cast("float32", A[{i}, {k}]) * T.Cast("float32", B[{j}, {k}])',
    "C[0:16, 0:16], A[0:16, 0:16], B[0:16, 0:16]",
    "C[0:16, 0:16]",
    "",
    "sync_trans",
)

# mma.sync (sm_80+): the same tiles and descs, each 16x16x16 product two m16n8k16 instructions,
# fp16 or bf16 operands; fragments in the same scopes, held in the layout PTX documents
# (passes/lowering/gpu_mma.py). A fragment is used by wmma_* or by mma_* intrinsics, not both.
_register(
    "mma_fill_16x16_f32",
    [("C", (16, 16), "float32", ACC)],
    "C[{i}, {j}] = T.float32(0)",
    "",
    "C[0:16, 0:16]",
    "init",
    "mma_fill",
)

for _scope in ("global", "shared"):
    _register(
        f"mma_store_16x16_f32_{_scope}",
        [("A", (16, 16), "float32", ACC), ("C", (16, 16), "float32", _scope)],
        "C[{i}, {j}] = A[{i}, {j}]",
        "A[0:16, 0:16]",
        "C[0:16, 0:16]",
        "store",
        "mma_store",
    )

for _dtype, _short in (("float16", "f16"), ("bfloat16", "bf16")):
    for _m in ("a", "b"):
        _register(
            f"mma_load_16x16_{_short}_{_m}_shared",
            [
                ("A", (16, 16), _dtype, "shared"),
                ("C", (16, 16), _dtype, FRAG_A if _m == "a" else FRAG_B),
            ],
            "C[{i}, {j}] = A[{i}, {j}]",
            "A[0:16, 0:16]",
            "C[0:16, 0:16]",
            "load",
            f"mma_load_{_m}",
        )
    _register(
        f"mma_sync_16x16x16_{_short}{_short}f32",
        [
            ("A", (16, 16), _dtype, FRAG_A),
            ("B", (16, 16), _dtype, FRAG_B),
            ("C", (16, 16), "float32", ACC),
        ],
        'C[{i}, {j}] = C[{i}, {j}] + T.Cast("float32", A[{i}, {k}])'
        ' * T.Cast("float32", B[{k}, {j}])',
        "C[0:16, 0:16], A[0:16, 0:16], B[0:16, 0:16]",
        "C[0:16, 0:16]",
        "",
        "mma_sync",
    )


def get_wmma_intrin_group(
    load_scope: str, store_scope: str, in_dtype: str, out_dtype: str, trans_b: bool
) -> dict:
    """TVM's `get_wmma_intrin_group`: the names of the WMMA intrinsics one tensorized matmul
    uses (keys init, load_a, load_b, compute, store; MultiLevelTilingTensorCore's groups).
    Registered here: fp16 operands, fp32 accumulation, from `shared` / `shared.dyn`, stored to
    `global`, `shared` or `shared.dyn`."""
    if (in_dtype, out_dtype) != ("float16", "float32"):
        raise ValueError(
            f"no WMMA intrinsics for {in_dtype} operands accumulated in "
            f"{out_dtype} (registered: float16 -> float32)"
        )
    if load_scope not in ("shared", "shared.dyn"):
        raise ValueError(f"WMMA operands load from shared or shared.dyn, not {load_scope!r}")
    if store_scope not in ("global", "shared", "shared.dyn"):
        raise ValueError(f"WMMA results store to global, shared or shared.dyn, not {store_scope!r}")
    load, store = load_scope.replace(".", "_"), store_scope.replace(".", "_")
    trans = "_trans" if trans_b else ""
    return {
        "init": "wmma_fill_16x16x16_f32",
        "load_a": f"wmma_load_16x16x16_f16_a_{load}",
        "load_b": f"wmma_load_16x16x16_f16_b{trans}_{load}",
        "compute": f"wmma_sync_16x16x16_f16f16f32{trans}",
        "store": f"wmma_store_16x16x16_f32_{store}",
    }
