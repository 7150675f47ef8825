"""Programs and helpers of the compute-location tests (compute_at, reverse_compute_at,
compute_inline): producer-consumer chains and the printed body."""

CHAIN = """
@T.prim_func
def main(A: T.Buffer((16, 16), "float32"), D: T.Buffer((16, 16), "float32")):
    B = T.alloc_buffer((16, 16))
    C = T.alloc_buffer((16, 16))
    for i, j in T.grid(16, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for i, j in T.grid(16, 16):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vj, vi] + T.float32(1)
    for i, j in T.grid(16, 16):
        with T.block("D"):
            vi, vj = T.axis.remap("SS", [i, j])
            D[vi, vj] = T.exp(C[vi, vj])
"""


MM_BIAS_RELU = """
@T.prim_func
def main(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32"), bias: T.Buffer((16,), "float32"), D: T.Buffer((16, 16), "float32")):
    C = T.alloc_buffer((16, 16))
    for i, j, k in T.grid(16, 16, 16):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
    for i, j in T.grid(16, 16):
        with T.block("D"):
            vi, vj = T.axis.remap("SS", [i, j])
            D[vi, vj] = T.max(C[vi, vj] + bias[vj], T.float32(0))
"""


def body(sch) -> str:
    """The printed function from its first loop/alloc line on (headers differ in attrs)."""
    lines = sch.mod.script().splitlines()
    start = next(k for k, ln in enumerate(lines) if '# with T.block("root")' in ln)
    return "\n".join(
        ln.strip() and ln[4:] if ln.startswith("    ") else ln for ln in lines[start + 1 :]
    ).strip("\n")


def blocks(sch) -> dict:
    """Handles of all blocks, fetched before the failing call (get_block is traced too)."""
    from tir_mlir.analysis.structure import blocks_under
    from tir_mlir.dialect.ops import Block

    names = [Block(b).name for b in blocks_under(next(iter(sch.mod.functions.values())))]
    return {n: sch.get_block(n) for n in names}
