"""TVM 0.21's entry points on tir-mlir (`tvm.compile`, `tvm.tir.build`, `tvm.target.Target`,
`tvm.device`, `lib.mod.time_evaluator`, `@tvm.script.ir_module`, `PrimFunc.with_attr`,
`IRModule({"f": mod["f"]})`, get_block's refusal on several functions) and the
`import tir_mlir.tvm as tvm` alias. Whole scripts in TVM's tutorial style are run by
test_porting_doc.py."""

import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import tir_mlir
from tir_mlir import te

MM = str(Path(__file__).parent.parent.parent / "examples" / "mm_relu.tir")


def _gemm(n=64):
    k = te.reduce_axis((0, n), "k")
    A = te.placeholder((n, n), name="A")
    B = te.placeholder((n, n), name="B")
    C = te.compute((n, n), lambda x, y: te.sum(A[x, k] * B[k, y], axis=k), name="C")
    return te.create_prim_func([A, B, C])


def test_compile_and_time_evaluator_through_lib_mod():
    dev = tir_mlir.device("cpu", 0)
    target = tir_mlir.target.Target("llvm")
    assert (target.kind.name, str(target), dev, repr(dev)) == (
        "llvm",
        "llvm",
        tir_mlir.cpu(),
        "cpu(0)",
    )
    lib = tir_mlir.compile(_gemm(), target=target)
    a, b = (tir_mlir.nd.array(np.random.rand(64, 64).astype("float32"), dev) for _ in "ab")
    c = tir_mlir.nd.empty((64, 64), "float32", dev)
    lib(a, b, c)  # the entry function: main
    np.testing.assert_allclose(c.numpy(), a.numpy() @ b.numpy(), rtol=1e-5)
    assert lib.mod is lib and lib.jit() is lib
    assert lib.mod.time_evaluator("main", dev, number=2)(a, b, c).mean > 0
    lib2 = tir_mlir.tir.build(_gemm(), target="llvm")
    c2 = tir_mlir.nd.empty((64, 64), "float32")
    lib2["main"](a, b, c2)
    np.testing.assert_array_equal(c2.numpy(), c.numpy())


def test_target_forms_and_devices():
    t = tir_mlir.target.Target("llvm -mcpu=x86-64 -num-cores=4")
    assert t.attrs == {"mcpu": "x86-64", "num-cores": "4"} and t.keys == ["cpu"]
    assert str(tir_mlir.target.Target({"kind": "llvm", "mcpu": "x86-64"})) == "llvm -mcpu=x86-64"
    assert tir_mlir.target.Target("cuda").kind.name == "cuda"
    with pytest.raises(tir_mlir.BuildError, match="unknown target 'llvmx'"):
        tir_mlir.target.Target("llvmx")
    assert tir_mlir.device("cuda", 1).device_type == 2 and tir_mlir.device("llvm").device_id == 0
    with pytest.raises(tir_mlir.BuildError, match="unknown device 'tpu'"):
        tir_mlir.device("tpu")


def test_with_attr_sets_the_attribute_and_global_symbol_renames():
    f = _gemm(16)
    g = f.with_attr("global_symbol", "mmult")
    assert list(f) == ["main"] and list(g) == ["mmult"]  # f unchanged
    assert 'T.func_attr({"tir.noalias": True})' in g.script()
    h = g.with_attr({"my.flag": 3, "tir.noalias": False})
    assert 'T.func_attr({"my.flag": 3, "tir.noalias": False})' in h.script()
    lib = tir_mlir.compile(tir_mlir.IRModule({"mmult": g}))
    assert "mmult" in lib
    with pytest.raises(TypeError, match="unsupported attribute value"):
        f.with_attr("x", object())


def test_irmodule_from_a_function_of_another_module():
    mod = tir_mlir.load(MM)
    copy = tir_mlir.IRModule({"f": mod["mm_relu"]})
    assert list(copy) == ["f"] and list(mod) == ["mm_relu"]
    assert "def f(" in copy.script()
    a, b = np.random.rand(128, 128).astype("float32"), np.random.rand(128, 128).astype("float32")
    c1, c2 = np.zeros((128, 128), "float32"), np.ones((128, 128), "float32")
    tir_mlir.compile(copy)["f"](a, b, c1)
    tir_mlir.compile(mod)["mm_relu"](a, b, c2)
    np.testing.assert_array_equal(c1, c2)
    with pytest.raises(TypeError, match="expects a PrimFunc or a module's function"):
        tir_mlir.IRModule({"f": 3})


SEVERAL = """\
# from tvm.script import ir as I
# from tvm.script import tir as T

@I.ir_module
class M:
    @T.prim_func
    def f1(A: T.Buffer((4,), "float32")):
        for i in range(4):
            with T.block("B"):
                vi = T.axis.spatial(4, i)
                A[vi] = T.float32(1)

    @T.prim_func
    def g(A: T.Buffer((4,), "float32")):
        for i in range(4):
            with T.block("C"):
                vi = T.axis.spatial(4, i)
                A[vi] = T.float32(2)
"""


def test_get_block_without_func_name_refuses_on_several_functions():
    mod = tir_mlir.parse(SEVERAL)
    sch = tir_mlir.Schedule(mod)
    with pytest.raises(ValueError, match="does not know which function to be working on"):
        sch.get_block("B")
    assert sch.get_block("B", func_name="f1") is not None
    sch.work_on("g")
    assert sch.get(sch.get_block("C")).name_hint == "C"


def test_ir_module_decorator_is_reachable_as_tvm_script_ir_module(tmp_path):
    (tmp_path / "blitz_mod.py").write_text(
        textwrap.dedent("""\
        import tir_mlir as tvm
        from tir_mlir.script import tir as T


        @tvm.script.ir_module
        class MyModule:
            @T.prim_func
            def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
                for i in range(8):
                    with T.block("B"):
                        vi = T.axis.spatial(8, i)
                        B[vi] = A[vi] + T.float32(1)
        """)
    )
    sys.path.insert(0, str(tmp_path))
    try:
        from blitz_mod import MyModule
    finally:
        sys.path.remove(str(tmp_path))
    assert isinstance(MyModule, tir_mlir.IRModule) and list(MyModule) == ["main"]


def _python(code):
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_the_tvm_alias_resolves_tvm_imports_to_tir_mlir():
    r = _python("""\
        import tir_mlir.tvm as tvm
        import tvm.testing
        from tvm import te
        from tvm.script import tir as T, ir as I
        from tvm.ir.module import IRModule
        import tir_mlir
        assert te is tir_mlir.te and T is tir_mlir.script.tir and IRModule is tir_mlir.IRModule
        assert tvm.tir.Schedule is tir_mlir.Schedule and tvm.compile is tir_mlir.compile
        try:
            import tvm.relax
        except ImportError as e:
            print(e)
        """)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("No module named 'tvm.relax': tir_mlir ports TVM's TensorIR")


def test_the_tvm_alias_is_refused_after_the_real_tvm():
    r = _python("""\
        import sys, types
        sys.modules["tvm"] = types.ModuleType("tvm")       # as after `import tvm`
        import tir_mlir.tvm
        """)
    assert r.returncode == 1
    assert r.stderr.splitlines()[-1] == (
        "ImportError: tir_mlir.tvm: the real TVM is imported already in this process; "
        "`import tir_mlir.tvm as tvm` must come before any `import tvm`"
    )
