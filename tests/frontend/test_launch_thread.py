"""TVM's lowered GPU form: `T.launch_thread` / `T.env_thread` parse as thread-bound loops over
the rest of the body, and `T.decl_buffer` with a scope (no `data=`) allocates, so a program
TVM prints after its lowering reads, prints with thread-bound loops and runs. A buffer
allocated in a loop prints as TVM's `T.decl_buffer` (TVM's parser takes `T.alloc_buffer` only
in a block), and parses back to the same program."""

import numpy as np
import pytest
from gpu_sim import simulate

import tir_mlir
from tir_mlir import TIRParseError
from tir_mlir.passes.lowering.pipeline import lower

LAUNCHED = """
@T.prim_func
def main(A: T.Buffer((256,), "float32"), B: T.Buffer((256,), "float32")):
    bx = T.launch_thread("blockIdx.x", 4)
    S = T.decl_buffer((64,), scope="shared")
    tx = T.launch_thread("threadIdx.x", 64)
    S[tx] = A[bx * 64 + tx]
    B[bx * 64 + tx] = S[tx] * T.float32(2)
"""

# TVM's source form of the same program: the threads declared first, launched later
ENV_THREADS = """
@T.prim_func
def main(A: T.Buffer((256,), "float32"), B: T.Buffer((256,), "float32")):
    tx = T.env_thread("threadIdx.x")
    bx = T.env_thread("blockIdx.x")
    T.launch_thread(bx, 4)
    S = T.decl_buffer([64], "float32", scope="shared")
    T.launch_thread(tx, 64)
    S[tx] = A[bx * 64 + tx]
    B[bx * 64 + tx] = S[tx] * T.float32(2)
"""

PRINTED = """\
# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((256,), "float32"), B: T.Buffer((256,), "float32")):
    for bx in T.thread_binding(4, thread="blockIdx.x"):
        S = T.decl_buffer((64,), scope="shared")
        for tx in T.thread_binding(64, thread="threadIdx.x"):
            S[tx] = A[bx * 64 + tx]
            B[bx * 64 + tx] = S[tx] * T.float32(2.0)"""


@pytest.mark.parametrize("src", [LAUNCHED, ENV_THREADS], ids=["launch_thread", "env_thread"])
def test_launch_thread_is_a_thread_bound_loop_over_the_rest(src):
    mod = tir_mlir.parse(src)
    assert mod.script().strip() == PRINTED
    assert tir_mlir.parse(PRINTED).script().strip() == PRINTED
    a = np.random.default_rng(0).standard_normal(256).astype(np.float32)
    b = np.zeros_like(a)
    simulate(lower(mod.module, "cuda", "gpu"), a, b)
    np.testing.assert_array_equal(b, a * 2)


HDR = '@T.prim_func\ndef f(A: T.Buffer((8,), "float32")):\n'


@pytest.mark.parametrize(
    "body, where, message",
    [
        (
            "    T.launch_thread(A, 8)\n",
            "3:21",
            "T.launch_thread(thread, extent) needs a thread from T.env_thread",
        ),
        ('    tx = T.launch_thread("threadIdx.x")\n', "3:10", "takes a thread and an extent"),
        ('    tx = T.launch_thread("warp.x", 8)\n', "3:26", "unknown thread tag 'warp.x'"),
        ('    tx = T.env_thread("threadIdx.x", 8)\n', "3:10", "T.env_thread takes one thread tag"),
        (
            '    tx = T.env_thread("threadIdx.x")\n    A[tx] = T.float32(2)\n',
            "4:5",
            "found thread 'tx' (threadIdx.x), used before its T.launch_thread",
        ),
    ],
)
def test_launch_thread_errors(body, where, message):
    with pytest.raises(TIRParseError) as e:
        tir_mlir.parse(HDR + body + "    A[0] = T.float32(1)\n")
    assert f":{where}:" in str(e.value) and message in str(e.value), str(e.value)
