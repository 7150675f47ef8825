"""Programs that used to crash the process (LLVM abort, SIGFPE, SIGSEGV) are now refused with a
located error, or run with defined results. Each case runs in a subprocess so that a
regression shows up as a failed test, not as a dead test runner."""
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import tir_mlir
from tir_mlir import TIRParseError
from tir_mlir.errors import BuildError

HDR = '''# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((16,), "int32"), B: T.Buffer((16,), "int32")):
'''
LOOP_VAR_IN_BODY = HDR + '''    X = T.alloc_buffer((16,), "int32")
    for i in range(16):
        with T.block("X"):
            vi = T.axis.spatial(16, i)
            X[vi] = A[i] * 2
    for i in range(16):
        with T.block("B"):
            vi = T.axis.spatial(16, i)
            B[vi] = X[vi] + 1
'''


def _in_subprocess(code: str) -> subprocess.CompletedProcess:
    p = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                       text=True, timeout=300)
    assert p.returncode >= 0, f"killed by signal {-p.returncode}: {p.stderr[-2000:]}"
    return p


def test_block_reading_an_outer_loop_variable_is_not_well_formed():
    with pytest.raises(TIRParseError, match="block 'X' is not well-formed: it uses loop "
                                            "variable 'i' defined outside the block") as e:
        tir_mlir.parse(LOOP_VAR_IN_BODY, "wf.tir")
    assert str(e.value.loc) == "wf.tir:9:21"


def test_opaque_blocks_and_outer_block_iterators_stay_legal():
    """TVM accepts these: a block without iterators reading a loop variable, an inner block
    reading its outer block's iterator, a let value from outside."""
    tir_mlir.parse(HDR + '''    for i in range(16):
        with T.block("opq"):
            B[i] = A[i]
    for i in range(16):
        x = i + 1
        with T.block("outer"):
            vi = T.axis.spatial(16, i)
            with T.block("inner"):
                B[vi] = A[vi] + x
''')


def test_erase_of_a_used_value_is_an_error_not_an_abort():
    """Even if a malformed module gets past the parser, compute_inline fails cleanly."""
    p = _in_subprocess(f'''
        import tir_mlir, tir_mlir.wellformed as w
        w.check = lambda *a: None                          # let the malformed program in
        mod = tir_mlir.parse({LOOP_VAR_IN_BODY!r})
        sch = tir_mlir.Schedule(mod)
        try:
            sch.compute_inline(sch.get_block("X"))
        except tir_mlir.ScheduleError as e:
            print("refused:", e)
        assert sch.mod.script() == mod.script()
    ''')
    assert "refused: internal error: cannot erase 'affine.for'" in p.stdout


@pytest.mark.parametrize("expr", ["vi // 0", "vi % 0", "T.floordiv(vi, 0)", "T.floormod(vi, 0)",
                                  "T.truncdiv(vi, 0)", "T.truncmod(vi, T.int64(0))",
                                  "vi // (3 - 3)", "A[vi] // T.int32(0)"])
def test_constant_division_by_zero_is_rejected(expr):
    src = HDR + f'''    for i in range(16):
        with T.block("B"):
            vi = T.axis.spatial(16, i)
            B[vi] = A[T.min({expr}, 15)]
'''
    with pytest.raises(TIRParseError, match="division by zero"):
        tir_mlir.parse(src)


def test_division_by_a_zero_value_does_not_trap():
    src = HDR.replace('B: T.Buffer((16,), "int32")', 'B: T.Buffer((16,), "int32"), '
                      'C: T.Buffer((16,), "int32")') + '''    for i in range(16):
        with T.block("B"):
            vi = T.axis.spatial(16, i)
            B[vi] = A[vi] // A[0] + T.truncmod(A[vi], A[1])
            C[vi] = T.truncdiv(A[vi], A[2]) + A[vi] % A[3]
'''
    p = _in_subprocess(f'''
        import numpy as np, tir_mlir
        mod = tir_mlir.parse({src!r})
        a = np.arange(16, dtype="int32"); a[:4] = 0
        for debug in (False, True):
            b, c = np.zeros(16, "int32"), np.zeros(16, "int32")
            tir_mlir.build(mod, debug=debug)["main"](a, b, c)
            print(b.tolist(), c.tolist())
        try:
            tir_mlir.interpret(mod, "main", a, b, c)
        except tir_mlir.TIRError as e:
            print("interpreter:", e)
    ''')
    a = np.arange(16)
    a[:4] = 0
    want = f"{(a + 0).tolist()} {(a + a).tolist()}"       # divisor 0 acts as 1
    assert p.stdout.splitlines()[:2] == [want, want]
    assert "interpreter: main: integer division by zero at run time" in p.stdout


@pytest.mark.parametrize("shape, match", [
    ("(25000000000,)", "buffer 'X' needs 100000000000 bytes"),
    ("(1 << 40,)", "X: buffer of 4398046511104 bytes is larger than"),
])
def test_huge_allocation_is_refused(shape, match):
    src = HDR + f'''    X = T.alloc_buffer({shape}, "int32")
    for i in range(16):
        with T.block("X"):
            vi = T.axis.spatial(16, i)
            X[vi] = A[vi]
    for i in range(16):
        with T.block("B"):
            vi = T.axis.spatial(16, i)
            B[vi] = X[vi]
'''
    with pytest.raises((BuildError, TIRParseError), match=match):
        tir_mlir.build(tir_mlir.parse(src))


def test_llvm_remarks_are_not_printed():
    """A `vectorized` loop LLVM cannot vectorize (indirect index) runs, scalar, and LLVM's
    location-less 'loop not vectorized' warnings do not reach the user."""
    src = '''# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
    for i in range(64):
        with T.block("B"):
            vi = T.axis.spatial(64, i)
            B[vi] = A[T.Cast("int32", A[vi]) % 64]
'''
    p = _in_subprocess(f'''
        import numpy as np, tir_mlir
        sch = tir_mlir.Schedule(tir_mlir.parse({src!r}))
        (i,) = sch.get_loops(sch.get_block("B"))
        sch.vectorize(i)
        a, b = np.arange(64, dtype="float32"), np.zeros(64, "float32")
        tir_mlir.build(sch.mod)["main"](a, b)
        print(b[:3].tolist())
    ''')
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "[0.0, 1.0, 2.0]"
    assert "not vectorized" not in p.stderr
