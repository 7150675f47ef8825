# A symbolic var made at module level and used in a parameter's T.Buffer shape, as TVM allows.
from tvm.script import tir as T

n = T.int32()


@T.prim_func
def fill(A: T.Buffer((n, 128), "float32")):
    for i, j in T.grid(n, 128):
        with T.block("A"):
            vi, vj = T.axis.remap("SS", [i, j])
            A[vi, vj] = T.float32(1)
