"""The TVMScript printer on hand-written MLIR (tests/data/printer/*.mlir), in TVM 0.21's style."""

from pathlib import Path

import pytest
from mlir import ir

from tir_mlir.context import get_context
from tir_mlir.module import IRModule
from tir_mlir.printer import script_func
from tir_mlir.ir.regions import block_regions

MLIR = Path(__file__).parent.parent / "data" / "printer"


def load(name) -> IRModule:
    with get_context():
        return IRModule(ir.Module.parse((MLIR / name).read_text()))


# What TVM 0.21 prints for the tutorial's mm_relu (tests/data/mm_relu.tir), verbatim.
MM_RELU_TVM = """# from tvm.script import ir as I
# from tvm.script import tir as T

@I.ir_module
class Module:
    @T.prim_func
    def mm_relu(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32"), C: T.Buffer((128, 128), "float32")):
        T.func_attr({"tir.noalias": True})
        # with T.block("root"):
        Y = T.alloc_buffer((128, 128))
        for i, j, k in T.grid(128, 128, 128):
            with T.block("Y"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                T.reads(A[vi, vk], B[vk, vj])
                T.writes(Y[vi, vj])
                with T.init():
                    Y[vi, vj] = T.float32(0.0)
                Y[vi, vj] = Y[vi, vj] + A[vi, vk] * B[vk, vj]
        for i, j in T.grid(128, 128):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(Y[vi, vj])
                T.writes(C[vi, vj])
                C[vi, vj] = T.max(Y[vi, vj], T.float32(0.0))"""


def test_mm_relu_matches_tvm_verbatim():
    assert load("mm_relu.mlir").script() == MM_RELU_TVM


def test_loop_kinds_let_if_casts_predicate():
    text = load("kinds.mlir").script()
    for line in [
        "# from tvm.script import tir as T\n\n@T.prim_func\ndef kinds(",
        'S = T.alloc_buffer((64,), "int32", scope="shared")',
        "for i in T.parallel(64):",
        'for j_0 in T.unroll(4, annotations={"pragma_auto_unroll_max_step": 16}):',
        "for j_1 in T.vectorized(16):",
        "vj = T.axis.spatial(64, j_0 * 16 + j_1)",
        "T.writes(B[vi, vj], D[vi], S[vi])",
        'T.block_attr({"meta_schedule.tiling_structure": "SSR"})',
        "x: T.float32 = A[vi, vj] * T.float32(2.0)",
        "if vi % 2 == 0:\n                        B[vi, vj] = x\n                    else:",
        'D[vi] = T.int64(5) + T.Cast("int64", vi // 2)',
        "S[vi] = vi - 3",  # index_cast is hidden
        'for t in T.thread_binding(32, thread="threadIdx.x"):',
        "for u in range(2, 6):",
        "vu = T.axis.spatial((2, 6), u)",
        "T.where(t * 2 + u < 64)",
        "B[vt, vu] = A[vt, vu] - (T.exp(A[vt, vu]) - T.sigmoid(T.exp(A[vt, vu])))",
    ]:
        assert line in text, line
    assert "T.func_attr" not in text  # no attributes: no func_attr line


def test_reads_relax_inner_loops_and_init_drops_written_buffers():
    text = load("nested.mlir").script()
    assert "T.reads(A[vi, 0:16])\n            T.writes(B[vi])" in text


def test_shadowed_names_are_disambiguated_like_tvm():
    text = load("nested.mlir").script()
    assert "for i, i_1 in T.grid(16, 16):" in text
    assert 'vi, vj = T.axis.remap("SS", [i_1, i])' in text
    assert "T.reads(A[vi, vj - 1])" in text
    # Sibling loops reuse the name, like TVM.
    assert text.count("for i in range(16):") == 1


def test_script_func_single_function():
    mod = load("mm_relu.mlir")
    text = script_func(mod["mm_relu"])
    assert text.startswith("# from tvm.script import tir as T\n\n@T.prim_func\ndef mm_relu(")


def test_block_regions_api():
    mod = load("nested.mlir")
    blocks = []
    mod["rowsum"].walk(
        lambda op: (
            blocks.append(op) or ir.WalkResult.ADVANCE
            if op.name == "tir.block"
            else ir.WalkResult.ADVANCE
        )
    )
    with get_context():
        r = block_regions(blocks[0])
        assert [str(e) for e, _ in r.reads[0].ranges] == ["d0", "0"]
        assert [ext for _, ext in r.reads[0].ranges] == [1, 16]
        assert len(r.writes) == 1 and r.writes[0].free == []


@pytest.mark.tvm
@pytest.mark.parametrize("name", ["mm_relu.mlir", "kinds.mlir", "nested.mlir"])
def test_tvm_reprints_our_text_unchanged(name):
    """Our output is a fixed point of TVM's own parser + printer."""
    import tvm

    text = load(name).script()
    assert tvm.script.from_source(text).script() == text


SPLIT_ME = """
@T.prim_func
def main(A: T.Buffer((128,), "float32"), B: T.Buffer((128,), "float32")):
    for i in range(128):
        with T.block("B"):
            vi = T.axis.remap("S", [i])
            B[vi] = A[vi] * T.float32(2)
"""


SPLITS = [
    ([None, 2, 3], "T.where((i_0 * 2 + i_1) * 3 + i_2 < 128)"),
    ([None, 5], "T.where(i_0 * 5 + i_1 < 128)"),
    ([None, 2, 3, 4], "T.where(((i_0 * 2 + i_1) * 3 + i_2) * 4 + i_3 < 128)"),
]


@pytest.mark.parametrize("factors, where", SPLITS)
def test_split_predicate_nested_as_tvm_builds_it(factors, where):
    """A non-dividing split into three or more loops bounds them as TVM's split builds it (its
    structural equality tells `(i_0 * 2 + i_1) * 3 + i_2` from the flat sum)."""
    import tir_mlir

    sch = tir_mlir.Schedule(tir_mlir.parse(SPLIT_ME))
    sch.split(sch.get_loops(sch.get_block("B"))[0], factors=factors)
    text = sch.mod.script()
    assert where in text
    assert tir_mlir.parse(text).script() == text  # reads back the same


@pytest.mark.tvm
@pytest.mark.parametrize("factors, where", SPLITS)
def test_split_predicate_nested_equals_tvms(factors, where):
    import tvm

    import tir_mlir

    sch = tir_mlir.Schedule(tir_mlir.parse(SPLIT_ME))
    sch.split(sch.get_loops(sch.get_block("B"))[0], factors=factors)
    text = sch.mod.script()
    theirs = tvm.tir.Schedule(tvm.script.from_source(SPLIT_ME))
    theirs.split(theirs.get_loops(theirs.get_block("B"))[0], factors=factors)
    tvm.ir.assert_structural_equal(tvm.script.from_source(text), theirs.mod["main"])


def test_a_module_pickles_as_its_mlir_text():
    """(How modules reach the tuner's search workers.)"""
    import pickle
    import tir_mlir

    mod = tir_mlir.parse(
        (Path(__file__).parent.parent.parent / "examples" / "mm_relu.tir").read_text()
    )
    back = pickle.loads(pickle.dumps(mod))
    assert back is not mod and back.script() == mod.script() and back.mlir() == mod.mlir()


SCALED_MOD = """@T.prim_func
def main(A: T.Buffer((64, 128), "float32")):
    T.func_attr({"tir.noalias": True})
    for f, c in T.grid(64, 8):
        with T.block("A"):
            v_i = T.axis.spatial(64, f // 16 * 16 + c)
            v_j = T.axis.spatial(128, f % 16 * 8 + c)
            A[v_i, v_j] = T.float32(1.0)
"""


def test_scaled_floormod_prints_as_written():
    """MLIR's affine simplifier holds `f % 16 * 8` as `f * 8 - f // 16 * 128`; printed that
    way TVM reads another expression. The printer folds it back, and the text is stable."""
    import tir_mlir

    text = tir_mlir.parse(SCALED_MOD).script()
    assert "v_j = T.axis.spatial(128, f % 16 * 8 + c)" in text
    assert "f // 16 * 128" not in text
    assert tir_mlir.parse(text).script() == text
