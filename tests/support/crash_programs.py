"""A program whose compiled code crashes (a store far out of bounds): how the measurement tests
check that a runner isolates a crash."""

SEGFAULT = """
@I.ir_module
class Module:
    @T.prim_func
    def main(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
        for i in range(16):
            with T.block("B"):
                vi = T.axis.spatial(16, i)
                if vi >= 0:         # (a guarded access: the build's static check leaves it)
                    B[vi * 100000000] = A[vi]
"""
