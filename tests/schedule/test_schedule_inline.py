"""compute_inline / reverse_compute_inline: printed result (as TVM 0.21 prints it), numerics,
trace replay, TVM differential, and each illegal case (message + module unchanged)."""

from schedule_check import check_all, check_error, parse
from compute_location import CHAIN, MM_BIAS_RELU, blocks, body
from shared_programs import CONV2D_PAD_C4_6X6 as CONV
from tir_mlir import Schedule

SOFTMAX = open(__file__.rsplit("/", 2)[0] + "/data/programs/softmax.tir").read()


def _inline_chain(sch):
    sch.compute_inline(sch.get_block("B"))
    sch.compute_inline(sch.get_block("C"))


def test_compute_inline_elementwise_chain():
    sch = check_all(CHAIN, _inline_chain, "main")
    assert (
        body(sch)
        == """\
for i, j in T.grid(16, 16):
    with T.block("D"):
        vi, vj = T.axis.remap("SS", [i, j])
        T.reads(A[vj, vi])
        T.writes(D[vi, vj])
        D[vi, vj] = T.exp(A[vj, vi] * T.float32(2.0) + T.float32(1.0))"""
    )


def test_compute_inline_padding_into_conv2d():
    sch = check_all(CONV, lambda s: s.compute_inline(s.get_block("Apad")), "main")
    assert body(sch).splitlines()[-1].strip() == (
        "B[vn, vf, vy, vx] = B[vn, vf, vy, vx] + T.if_then_else(1 <= vy + vry and vy + vry < 7 "
        "and 1 <= vx + vrx and vx + vrx < 7, A[vn, vrc, vy + vry - 1, vx + vrx - 1], "
        "T.float32(0.0)) * W[vf, vrc, vry, vrx]"
    )


def test_compute_inline_softmax_exp_into_two_consumers():
    sch = check_all(SOFTMAX, lambda s: s.compute_inline(s.get_block("exp")), "softmax")
    text = sch.mod.script()
    assert "expv" not in text
    assert "expsum[vi] = expsum[vi] + T.exp(A[vi, vk] - maxelem[vi])" in text
    assert "B[vi, vj] = T.exp(A[vi, vj] - maxelem[vi]) / expsum[vi]" in text


def test_reverse_compute_inline():
    sch = check_all(CHAIN, lambda s: s.reverse_compute_inline(s.get_block("D")), "main")
    text = body(sch)
    assert 'with T.block("C")' in text and 'T.block("D")' not in text
    assert "D[vi, vj] = T.exp(B[vj, vi] + T.float32(1.0))" in text


def test_reverse_compute_inline_transposed_store():
    sch = check_all(CHAIN, lambda s: s.reverse_compute_inline(s.get_block("C")), "main")
    assert "C[vj, vi] = A[vi, vj] * T.float32(2.0) + T.float32(1.0)" in body(sch)


# --- illegal cases ----------------------------------------------------------------------------
def test_error_inline_reduction():
    sch = Schedule(parse(MM_BIAS_RELU))
    blk = blocks(sch)
    check_error(
        sch,
        lambda s: s.compute_inline(blk["C"]),
        r"compute_inline: block 'C': the block is not a complete spatial block "
        r"\(it has an init\)",
    )


def test_error_inline_output_block():
    sch = Schedule(parse(CHAIN))
    blk = blocks(sch)
    check_error(
        sch,
        lambda s: s.compute_inline(blk["D"]),
        r"compute_inline: block 'D': cannot inline a block writing the output buffer 'D'",
    )


def test_error_inline_not_injective():
    src = CHAIN.replace(
        "B[vi, vj] = A[vi, vj] * T.float32(2)", "B[vi, vi] = A[vi, vj] * T.float32(2)"
    )
    sch = Schedule(parse(src))
    blk = blocks(sch)
    check_error(
        sch,
        lambda s: s.compute_inline(blk["B"]),
        r"compute_inline: block 'B': the store indices of buffer 'B' are not distinct "
        r"iter vars \(the block is not injective\)",
    )


def test_error_inline_two_writers():
    src = CHAIN.replace(
        """    for i, j in T.grid(16, 16):
        with T.block("C"):""",
        """    for i, j in T.grid(16, 16):
        with T.block("B2"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = T.float32(3)
    for i, j in T.grid(16, 16):
        with T.block("C"):""",
    )
    sch = Schedule(parse(src))
    blk = blocks(sch)
    check_error(
        sch,
        lambda s: s.compute_inline(blk["B"]),
        r"compute_inline: block 'B': buffer 'B' is also written by block 'B2'",
    )


def test_error_reverse_inline_into_reduction():
    sch = Schedule(parse(MM_BIAS_RELU))
    blk = blocks(sch)
    check_error(
        sch,
        lambda s: s.reverse_compute_inline(blk["D"]),
        r"reverse_compute_inline: block 'D': producer block 'C': the block is not a "
        r"complete spatial block \(it has an init\)",
    )


def test_error_reverse_inline_mixed_indices():
    src = CHAIN.replace("D[vi, vj] = T.exp(C[vi, vj])", "D[vi, vj] = T.exp(C[vi, vj]) + C[vj, vi]")
    sch = Schedule(parse(src))
    blk = blocks(sch)
    check_error(
        sch,
        lambda s: s.reverse_compute_inline(blk["D"]),
        r"reverse_compute_inline: block 'D': the block reads buffer 'C' at different "
        r"indices; all its loads must be the same",
    )


DEPTHWISE_BIAS = """
@T.prim_func
def main(A: T.Buffer((1, 4, 6, 6), "float32"), W: T.Buffer((4, 1, 3, 3), "float32"), bias: T.Buffer((4,), "float32"), B: T.Buffer((1, 4, 4, 4), "float32")):
    D = T.alloc_buffer((1, 4, 4, 4))
    for n, c, y, x, ry, rx in T.grid(1, 4, 4, 4, 3, 3):
        with T.block("D"):
            vn, vc, vy, vx, vry, vrx = T.axis.remap("SSSSRR", [n, c, y, x, ry, rx])
            with T.init():
                D[vn, vc, vy, vx] = T.float32(0)
            D[vn, vc, vy, vx] = D[vn, vc, vy, vx] + A[vn, vc, vy + vry, vx + vrx] * W[vc, 0, vry, vrx]
    for n, c, y, x in T.grid(1, 4, 4, 4):
        with T.block("B"):
            vn, vc, vy, vx = T.axis.remap("SSSS", [n, c, y, x])
            B[vn, vc, vy, vx] = D[vn, vc, vy, vx] + bias[vc]
"""


def _bias_into_cache_copy(sch):
    sch.cache_write(sch.get_block("D"), 0, "local")
    sch.reverse_compute_inline(sch.get_block("B"))


def test_reverse_compute_inline_through_a_batch_of_one():
    """The batch dimension (size 1) is read and written at index 0 through unit iter vars:
    no fusion to invert there, as in TVM (fuzzer seed 129)."""
    check_all(DEPTHWISE_BIAS, _bias_into_cache_copy, "main")  # (TVM differential too)


# TVM's test_inline_with_reduction: a copy (transpose) of a block that accumulates with a
# T.init over spatial iters only
BMM_TRANSPOSE = """
@T.prim_func
def main(T_softmax_norm: T.Buffer((T.int64(6), T.int64(1), T.int64(1)), "float32"), T_reshape_2: T.Buffer((T.int64(6), T.int64(1), T.int64(64)), "float32"), T_transpose: T.Buffer((T.int64(1), T.int64(1), T.int64(6), T.int64(64)), "float32")):
    T_batch_matmul_NN = T.alloc_buffer((T.int64(6), T.int64(1), T.int64(64)))
    for ax0, ax1 in T.grid(T.int64(6), T.int64(64)):
        with T.block("bmm"):
            v0, v1 = T.axis.remap("SS", [ax0, ax1])
            T.reads(T_softmax_norm[v0, T.int64(0), T.int64(0)], T_reshape_2[v0, T.int64(0), v1])
            T.writes(T_batch_matmul_NN[v0, T.int64(0), v1])
            with T.init():
                T_batch_matmul_NN[v0, T.int64(0), v1] = T.float32(0.0)
            T_batch_matmul_NN[v0, T.int64(0), v1] = T_batch_matmul_NN[v0, T.int64(0), v1] + T_softmax_norm[v0, T.int64(0), T.int64(0)] * T_reshape_2[v0, T.int64(0), v1]
    for ax0, ax1 in T.grid(T.int64(6), T.int64(64)):
        with T.block("transpose"):
            v0, v1 = T.axis.remap("SS", [ax0, ax1])
            T_transpose[T.int64(0), T.int64(0), v0, v1] = T_batch_matmul_NN[v0, T.int64(0), v1]
"""


def test_reverse_inline_a_copy_into_an_accumulating_block():
    """The producer's init and update access the copy's output at the copy's index (TVM's
    expected text)."""
    sch = check_all(
        BMM_TRANSPOSE, lambda s: s.reverse_compute_inline(s.get_block("transpose")), "main"
    )
    assert """
            with T.init():
                T_transpose[T.int64(0), T.int64(0), v0, v1] = T.float32(0.0)
            T_transpose[T.int64(0), T.int64(0), v0, v1] = T_transpose[T.int64(0), T.int64(0), v0, v1] + T_softmax_norm[v0, T.int64(0), T.int64(0)] * T_reshape_2[v0, T.int64(0), v1]""" in sch.mod.script()
    assert "T_batch_matmul_NN" not in sch.mod.script()


def test_error_reverse_inline_a_computation_into_an_accumulating_block():
    src = BMM_TRANSPOSE.replace(
        "= T_batch_matmul_NN[v0, T.int64(0), v1]\n",
        "= T_batch_matmul_NN[v0, T.int64(0), v1] + T.float32(1)\n",
    )
    sch = Schedule(parse(src))
    transpose = sch.get_block("transpose")
    check_error(
        sch,
        lambda s: s.reverse_compute_inline(transpose),
        r"reverse_compute_inline: block 'transpose': producer block 'bmm': the block "
        r"has an init; only a copy of its buffer \(`C\[...\] = T_batch_matmul_NN\[...\]`\)"
        r" can be inlined into it",
    )
