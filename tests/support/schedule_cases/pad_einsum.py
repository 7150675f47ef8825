"""Programs and schedules of pad_einsum (tests/schedule/test_schedule_pad_einsum.py runs them; the trace
tests replay them)."""

MM = """
@T.prim_func
def main(A: T.Buffer((127, 127), "float32"), B: T.Buffer((127, 127), "float32"), C: T.Buffer((127, 127), "float32")):
    for i0, i1, i2 in T.grid(127, 127, 127):
        with T.block("C_shared"):
            i, j, k = T.axis.remap("SSR", [i0, i1, i2])
            with T.init():
                C[i, j] = T.float32(0)
            C[i, j] = C[i, j] + A[i, k] * B[k, j]
"""


EW = """
@T.prim_func
def main(A: T.Buffer((30, 127), "float32"), B: T.Buffer((30,), "float32"), E: T.Buffer((4,), "float32"), C: T.Buffer((127, 30), "float32")):
    for i0, i1 in T.grid(127, 30):
        with T.block("C"):
            i, j = T.axis.remap("SS", [i0, i1])
            C[i, j] = A[j, i] * T.float32(2) + B[j] + E[0]
"""


CHAIN = """
@T.prim_func
def main(A: T.Buffer((130, 30), "int32"), C: T.Buffer((127, 30), "int32")):
    D = T.alloc_buffer((127, 30), "int32")
    for i0, i1 in T.grid(127, 30):
        with T.block("D"):
            i, j = T.axis.remap("SS", [i0, i1])
            D[i, j] = A[i, j] * 2
    for i0, i1 in T.grid(127, 30):
        with T.block("C"):
            i, j = T.axis.remap("SS", [i0, i1])
            C[i, j] = D[i, j] + 1
"""


SUM = """
@T.prim_func
def main(A: T.Buffer((20, 30), "float32"), C: T.Buffer((20,), "float32")):
    for i0, i1 in T.grid(20, 30):
        with T.block("C"):
            i, k = T.axis.remap("SR", [i0, i1])
            with T.init():
                C[i] = T.float32(0)
            C[i] = C[i] + A[i, k]
"""


def pad(block, padding, before=None):
    def fn(sch):
        if before is not None:
            before(sch)
        sch.pad_einsum(sch.get_block(block), padding)

    return fn


def _split_first(sch):
    sch.split(sch.get_loops(sch.get_block("C_shared"))[0], [None, 4])


SCHEDULES = {
    "matmul_all": (MM, pad("C_shared", [32, 32, 32])),
    "matmul_one_spatial": (MM, pad("C_shared", [1, 16, 1])),
    "matmul_reduction_only": (MM, pad("C_shared", [1, 1, 32])),
    "matmul_nothing_to_pad": (MM, pad("C_shared", [1, 1, 1])),
    "matmul_after_split": (MM, pad("C_shared", [32, 32, 32], _split_first)),
    "transposed_input_constant_index": (EW, pad("C", [32, 8])),
    "int_intermediate_output": (CHAIN, pad("D", [32, 1])),
    "int_intermediate_input": (CHAIN, pad("C", [32, 1])),
    "sum": (SUM, pad("C", [8, 16])),
    # the padded copy of a buffer with axis separators has none, as TVM's (fuzzer seed 2682)
    "input_with_axis_separator": (
        MM,
        pad(
            "C_shared",
            [1, 32, 1],
            lambda sch: sch.set_axis_separator(sch.get_block("C_shared"), ("read", 1), [1]),
        ),
    ),
}
