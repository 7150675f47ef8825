# An @I.ir_module class mixing a symbolic function and a concrete one, as TVM 0.21 writes them.
from tvm.script import tir as T, ir as I


@I.ir_module
class Module:
    @T.prim_func
    def scale(a: T.handle, b: T.handle, factor: T.float32):
        T.func_attr({"tir.noalias": True})
        n = T.int32()
        A = T.match_buffer(a, (n, 8))
        B = T.match_buffer(b, (n, 8))
        for i, j in T.grid(n, 8):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj] * factor

    @T.prim_func
    def fixed(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
        T.func_attr({"tir.noalias": True})
        for i in range(8):
            with T.block("B"):
                vi = T.axis.spatial(8, i)
                B[vi] = A[vi] + T.float32(1)


@I.ir_module
class Single:
    @T.prim_func
    def main(a: T.handle, b: T.handle):
        T.func_attr({"tir.noalias": True})
        n = T.int64()
        A = T.match_buffer(a, (n,))
        B = T.match_buffer(b, (n,))
        for i in range(n):
            with T.block("B"):
                vi = T.axis.spatial(n, i)
                B[vi] = A[vi] * T.float32(3)
