# Metaprogramming as TVM users write it: macros calling macros, hygiene, captured lists, bools
# and tuples, a private function, a packed call, T.meta_var, and factories closing over their
# arguments.
from tvm.script import tir as T, ir as I

TILE = 4
FACTORS = [2.0, 0.5]
CLAMP = True
LANES = (8,)


@T.macro
def fill(B, i, value):
    for j in T.serial(TILE):       # TVM's macros know T.serial, not range
        B[i, j] = T.float32(value)


@T.macro
def fill_twice(B, i):
    fill(B, i, FACTORS[0])
    for j in T.serial(TILE):       # a local `j` next to fill's own `j`
        B[i, j] = B[i, j] * T.float32(FACTORS[1])


@T.prim_func(private=True)
def rows(B: T.Buffer((TILE, TILE), "float32")):
    for i in range(TILE):
        fill_twice(B, i)


@T.prim_func
def clamp(A: T.Buffer(LANES, "float32"), B: T.Buffer(LANES, "float32")):
    for i in range(LANES[0]):
        with T.block("B"):
            vi = T.axis.spatial(LANES[0], i)
            if CLAMP:
                B[vi] = T.min(A[vi], T.float32(1))
            else:
                B[vi] = A[vi]


@T.prim_func
def packed(A: T.Buffer((TILE,), "float32")):
    T.call_packed("metaprog.touch", A, TILE)


def make_reduce(n, op_is_max):
    @T.macro
    def combine(dst, src):
        if op_is_max:
            dst[0] = T.max(dst[0], src)
        else:
            dst[0] = dst[0] + src

    @T.prim_func
    def reduce(A: T.Buffer((n,), "float32"), B: T.Buffer((1,), "float32")):
        for k in range(n):
            with T.block("B"):
                vk = T.axis.reduce(n, k)
                with T.init():
                    B[0] = T.float32(0)
                combine(B, A[vk])
    return reduce


@T.prim_func
def meta(A: T.Buffer((16,), "float32"), B: T.Buffer(LANES + (2,), "float32")):
    n = T.meta_var(TILE * 4)
    rows, cols = T.meta_var(LANES + (2,))
    for i in range(n):
        with T.block("A"):
            vi = T.axis.spatial(n, i)
            A[vi] = T.float32(n - 1)
    for i, j in T.grid(rows, cols):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            half = T.meta_var(cols // 2)
            B[vi, vj] = T.float32(rows * half)


sum_16 = make_reduce(16, False)
max_16 = make_reduce(16, True)
