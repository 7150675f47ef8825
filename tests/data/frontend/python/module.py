# An @I.ir_module class whose functions use module constants and a non-hygienic macro.
from tvm.script import tir as T, ir as I

ROWS, COLS = 16, 24


@T.macro(hygienic=False)
def relu_store(i, j):
    with T.block("Y"):
        vi, vj = T.axis.remap("SS", [i, j])
        Y[vi, vj] = T.max(X[vi, vj], T.float32(0))


@I.ir_module
class Module:
    @T.prim_func
    def relu(X: T.Buffer((ROWS, COLS), "float32"), Y: T.Buffer((ROWS, COLS), "float32")):
        T.func_attr({"tir.noalias": True})
        for i in range(ROWS):
            for j in range(COLS):
                relu_store(i, j)

    @T.prim_func
    def copy(X: T.Buffer((ROWS,), "float32"), Y: T.Buffer((ROWS,), "float32")):
        for i in range(ROWS):
            with T.block("Y"):
                vi = T.axis.spatial(ROWS, i)
                Y[vi] = X[vi]
