"""Symbolic programs build to ONE kernel, lowered once from the IR (docs/symbolic.md): right at
sizes that are primes and smaller than every tile, unscheduled and scheduled; the calling
convention (sizes read from the arrays' shapes, scalars passed by the caller, mismatches named);
time_evaluator, export_library; specialization as constant propagation."""

import re

import gpu_sim
import numpy as np
import pytest
from tir_mlir.passes.lowering.loop_interchange import LoopInterchange
from tir_mlir.passes.lowering.pipeline import emit_text, lower
from tir_mlir.passes.lowering.tir_to_affine import TirToAffine
from tir_mlir.passes.lowering.version_guards import VersionGuards

import tir_mlir
from tir_mlir.context import get_context
from tir_mlir.errors import RuntimeCallError
from tir_mlir.frontend.parser import build as build_ir
from tir_mlir.frontend.parser import parse_ast
from symbolic_build import CASES, SIZES, SOURCE, _check_at_sizes, _rand, program


@pytest.fixture
def lowerings(monkeypatch):
    """The runs of the lowering pipeline (each passes its `tir-to-affine` stage once)."""
    runs = []
    real = TirToAffine.__call__

    def counted(self, module):
        runs.append(1)
        return real(self, module)

    monkeypatch.setattr(TirToAffine, "__call__", counted)
    return runs


@pytest.mark.parametrize("name", sorted(CASES))
def test_one_kernel_right_at_every_size(name, lowerings):
    lib = tir_mlir.build(program(name))
    _check_at_sizes(lib, name)
    assert len(lowerings) == 1


def _split_parallel_vectorize(sch, block, tile=4, lanes=8):
    loops = sch.get_loops(sch.get_block(block))
    io, _ = sch.split(loops[0], [None, tile])
    sch.parallel(io)
    _, ji = sch.split(loops[-1], [None, lanes])
    sch.vectorize(ji)


@pytest.mark.parametrize("name, block", [("add", "C"), ("two_stage", "C")])
def test_split_parallel_vectorize_one_kernel(name, block, lowerings):
    """Splits by factors that divide no size below and some above, parallel outer loops and a
    vector inner loop (guards where the split does not divide): one kernel, numpy's numbers."""
    sch = tir_mlir.Schedule(program(name))
    _split_parallel_vectorize(sch, block)
    lib = tir_mlir.build(sch.mod)
    _check_at_sizes(lib, name, seed=1)
    assert len(lowerings) == 1


def test_matmul_tiled_by_hand_one_kernel(lowerings):
    sch = tir_mlir.Schedule(program("matmul"))
    c = sch.get_block("C")
    i, j, k = sch.get_loops(c)
    io, ii = sch.split(i, [None, 4])
    jo, ji = sch.split(j, [None, 8])
    sch.reorder(io, jo, k, ii, ji)
    sch.parallel(io)
    sch.vectorize(ji)
    lib = tir_mlir.build(sch.mod)
    _check_at_sizes(lib, "matmul", seed=2)
    assert len(lowerings) == 1


def test_vector_loop_over_a_size_is_left_to_llvm():
    """A vectorized loop of extent n has no constant vector length: it stays a loop with
    LLVM's vectorize hint (LLVM adds the remainder)."""
    sch = tir_mlir.Schedule(program("tiled"))
    sch.vectorize(sch.fuse(*sch.get_loops(sch.get_block("B"))))
    text = emit_text(sch.mod.module, "scf")
    assert "vector.load" not in text and "llvm.loop_vectorize<disable = false" in text
    _check_at_sizes(tir_mlir.build(sch.mod), "tiled", seed=3)


def test_lowered_kernel_reads_sizes_from_its_arguments():
    text = emit_text(program("two_stage").module, "affine")
    assert re.search(
        r"func\.func @two_stage\(%arg0: memref<\?x16xf32> \{[^}]*\}, %arg1: "
        r"memref<\?x16xf32> \{[^}]*\}, %arg2: index",
        text,
    )
    assert "memref.alloc(%arg2) : memref<?x16xf32>" in text
    assert text.count("cf.assert") == 2  # each match_shape's dynamic dimension
    assert "affine.for %arg3 = 0 to %arg2" in text
    tiled = emit_text(program("tiled").module, "affine")
    assert re.search(r"affine_set<\(d0, d1\)\[s0\] : \(d0 \* -4 - d1 \+ s0 - 1 >= 0\)>", tiled)


def test_size_mismatches_name_the_buffers():
    z = np.zeros
    lib = tir_mlir.build(program("matmul"))
    with pytest.raises(
        RuntimeCallError,
        match="^matmul: m is 4 from dimension 0 of 'A' but 5 from dimension 0 of 'C'$",
    ):
        lib["matmul"](z((4, 64), "float32"), z((64, 32), "float32"), z((5, 32), "float32"))
    with pytest.raises(RuntimeCallError, match="^matmul: dimension 1 of 'B' is 31, expected 32$"):
        lib["matmul"](z((4, 64), "float32"), z((64, 31), "float32"), z((4, 32), "float32"))
    with pytest.raises(RuntimeCallError, match="expects 2 dimensions, got shape \\(4,\\)"):
        lib["matmul"](z(4, "float32"), z((64, 32), "float32"), z((4, 32), "float32"))
    axpb = tir_mlir.build(program("axpb"))
    with pytest.raises(RuntimeCallError, match="^axpb: n = 5 but dimension 0 of 'A' is 4$"):
        axpb["axpb"](z(4, "float32"), z(4, "float32"), 1.0, 5, 0)
    with pytest.raises(
        RuntimeCallError, match="^axpb takes 5 arguments \\(A, B, alpha, n, shift\\), got 3$"
    ):
        axpb["axpb"](z(4, "float32"), z(4, "float32"), 1.0)
    with pytest.raises(RuntimeCallError, match="parameter 'n' expects a int32 value, got float"):
        axpb["axpb"](z(4, "float32"), z(4, "float32"), 1.0, 4.0, 0)
    with pytest.raises(
        RuntimeCallError,
        match="^halves: dimension 0 of 'B' is 4, expected 3 \\(n // 2 with n = 6\\)$",
    ):
        tir_mlir.build(program("halves"))["halves"](z(6, "float32"), z(4, "float32"))
    with pytest.raises(
        RuntimeCallError,
        match="^flat: dimension 0 of 'B' is 9, expected 7 \\(n \\* m \\+ 1 with n = 2, m = 3\\)$",
    ):
        tir_mlir.build(program("flat"))["flat"](z((2, 3), "float32"), z(9, "float32"))
    with pytest.raises(
        RuntimeCallError,
        match="^conv2d: dimension 1 of 'A' is 6, expected 7 \\(wd \\+ 2 with wd = 5\\)$",
    ):
        tir_mlir.build(program("conv2d"))["conv2d"](
            z((6, 6), "float32"), z((3, 3), "float32"), z((4, 5), "float32")
        )


def test_time_evaluator_and_float_scalars():
    lib = tir_mlir.build(program("axpb"))
    a, b = np.ones(33, "float32"), np.zeros(33, "float32")
    result = lib.time_evaluator("axpb", number=3, repeat=2)(a, b, 2.0, 33, 1)
    assert len(result.results) == 2 and result.mean > 0
    np.testing.assert_array_equal(b, np.full(33, 3.0))
    add = tir_mlir.build(program("add"))
    args = CASES["add"][0](np.random.default_rng(4), 5)
    assert add.time_evaluator("add", number=3)(*args).mean > 0
    np.testing.assert_array_equal(args[2], args[0] + args[1])


def test_export_library_of_a_symbolic_function(tmp_path):
    tir_mlir.build(program("halves")).export_library(tmp_path / "halves.so")
    lib = tir_mlir.load_module(tmp_path / "halves.so")
    _check_at_sizes(lib, "halves", seed=5)
    with pytest.raises(RuntimeCallError, match="expected 3 \\(n // 2 with n = 6\\)"):
        lib["halves"](np.zeros(6, "float32"), np.zeros(4, "float32"))
    tir_mlir.build(program("axpb")).export_library(tmp_path / "axpb.so")
    _check_at_sizes(tir_mlir.load_module(tmp_path / "axpb.so"), "axpb", seed=6)


def test_implicit_var_no_buffer_dimension_names_is_refused():
    src = (
        "@T.prim_func\ndef f(a: T.handle):\n    n = T.int32()\n"
        "    A = T.match_buffer(a, (n * 2,))\n    for i in range(n * 2):\n"
        "        with T.block('A'):\n            vi = T.axis.spatial(n * 2, i)\n"
        "            A[vi] = T.float32(1)\n"
    )
    with pytest.raises(tir_mlir.BuildError, match="no buffer has n as a dimension"):
        tir_mlir.build(build_ir(parse_ast(src, "f.py"), "f.py"))


def test_lowering_is_deterministic():
    """The same symbolic program lowers to the same text every time (the compile cache's key:
    cf.assert's message globals are named in module order, not by a process-wide counter)."""
    mod = program("two_stage")
    assert emit_text(mod.module, "llvm-dialect") == emit_text(mod.module, "llvm-dialect")


def test_compute_at_into_a_symbolic_split_compacts_to_a_tile():
    """B computed at the outer loop of a split of n: its (n, 16) buffer becomes a (4, 16) tile
    per parallel iteration (compact-buffers: the loop over n is the tile's origin)."""
    sch = tir_mlir.Schedule(program("two_stage"))
    io, _ = sch.split(sch.get_loops(sch.get_block("C"))[0], [None, 4])
    sch.parallel(io)
    sch.compute_at(sch.get_block("B"), io)
    text = emit_text(sch.mod.module, "scf")
    assert "memref.alloca() : memref<4x16xf32>" in text and "memref<?x16xf32>" in text
    assert "memref.alloc(" not in text
    _check_at_sizes(tir_mlir.build(sch.mod), "two_stage", sizes=SIZES + (65,), seed=10)


def test_dynamic_buffers_are_not_refused_by_the_memory_limit():
    mod = program("two_stage")
    text = emit_text(mod.module, "llvm-dialect")
    assert "malloc" in text or "aligned_alloc" in text


def test_a_split_guard_over_a_size_is_versioned():
    """`i_0 * 8 + i_1 < n` holds for every i_1 when `i_0 * 8 + 7 < n`: that test runs once per
    i_0 and the tile beneath it runs unguarded (version-guards); the last, partial tile keeps
    the guard. A static program's guard over constants is versioned the same way."""
    sch = tir_mlir.Schedule(program("matmul"))
    i, j, k = sch.get_loops(sch.get_block("C"))
    io, ii = sch.split(i, [None, 8])
    sch.reorder(io, j, k, ii)
    text = _versioned(sch.mod)
    assert re.search(r"affine_set<\(d0\)\[s0\] : \(d0 \* -8 \+ s0 - 8 >= 0\)>", text)
    assert text.count("memref.store") == 4  # init and update, guarded and not
    _check_at_sizes(tir_mlir.build(sch.mod), "matmul", sizes=SIZES + (8, 16, 17), seed=11)
    static = tir_mlir.Schedule(program("matmul").specialize({"m": 12}))
    io, ii = static.split(static.get_loops(static.get_block("C"))[0], [None, 8])
    assert _versioned(static.mod).count("memref.store") == 4  # 12 rows: a full tile of 8


def _versioned(mod) -> str:
    lowered = lower(mod.module, emit="affine")
    with get_context():
        VersionGuards()(lowered)
    return str(lowered)


def _bound_add():
    sch = tir_mlir.Schedule(program("add"))
    i, _ = sch.get_loops(sch.get_block("C"))
    io, ii = sch.split(i, [None, 32])
    sch.bind(io, "blockIdx.x")
    sch.bind(ii, "threadIdx.x")
    return sch


def test_a_grid_over_a_size_lowers_to_one_gpu_kernel():
    """A loop over (n + 31) // 32 bound to blockIdx.x: the grid size is computed on the host
    from n, the kernel takes n; no GPU needed to make the PTX."""
    sch = _bound_add()
    gpu = emit_text(sch.mod.module, "gpu", target="cuda")
    assert re.search(
        r"gpu\.launch_func\s+@\w+::@\w+ blocks in \(%\w+, %c1\w*, %c1\w*\) "
        r"threads in \(%c32\w*, %c1\w*, %c1\w*\)",
        gpu,
    )
    assert ".visible .entry" in emit_text(sch.mod.module, "ptx", target="cuda")
    # The SIMT simulator runs the one kernel at every size, n passed as the host does.
    module = lower(sch.mod.module, "cuda", "gpu")
    for n in SIZES + (33,):
        rng = np.random.default_rng(n)
        a, b = _rand(rng, n, 128), _rand(rng, n, 128)
        c = np.zeros((n, 128), "float32")
        gpu_sim.simulate(module, a, b, c, n)
        np.testing.assert_array_equal(c, a + b)
    with pytest.raises(AssertionError, match="dimension 0 of buffer 'B' is not n"):
        gpu_sim.simulate(module, a, np.zeros((n + 1, 128), "float32"), c, n)
    with pytest.raises(
        tir_mlir.BuildError, match="the CUDA runtime calls functions of static shapes"
    ):
        tir_mlir.build(sch.mod, target="cuda")
    sch = tir_mlir.Schedule(program("add"))
    i, _ = sch.get_loops(sch.get_block("C"))
    sch.bind(i, "threadIdx.x")
    with pytest.raises(tir_mlir.BuildError, match="a block's thread count must be a constant"):
        emit_text(sch.mod.module, "gpu", target="cuda")


def test_two_guards_over_two_sizes_make_three_versions():
    """A 2-d split over n and m: full x full tiles run unmasked vector stores, full x partial
    masked ones, the partial rows keep both guards; right at sizes around both tiles."""
    mod = tir_mlir.load(str(SOURCE.parent / "matmul_nmk.tir"))
    sch = tir_mlir.Schedule(mod)
    i, j, k = sch.get_loops(sch.get_block("C"))
    io, ii = sch.split(i, [None, 4])
    jo, ji = sch.split(j, [None, 16])
    sch.reorder(io, jo, k, ii, ji)
    sch.vectorize(ji)
    text = emit_text(sch.mod.module, "scf")
    assert text.count("vector.store") == 2 and text.count("vector.maskedstore") == 4
    lib = tir_mlir.build(sch.mod)
    rng = np.random.default_rng(12)
    for n, kk, m in ((1, 3, 5), (7, 13, 17), (16, 8, 32), (33, 5, 47)):
        a, b = _rand(rng, n, kk), _rand(rng, kk, m)
        c = np.zeros((n, m), "float32")
        lib["matmul_nmk"](a, b, c)
        np.testing.assert_allclose(c, a @ b, rtol=1e-5)


INTERCHANGED = {
    "matmul": {"m": 512},
    "batch_matmul.tir": {"bs": 2, "n": 512},
    "conv2d_hw.tir": {"h": 34, "wd": 34},
}


@pytest.mark.parametrize("name", sorted(INTERCHANGED))
def test_unscheduled_symbolic_nests_are_interchanged_like_static_ones(name):
    """Buffers of symbolic shape are row-major (identity layout; a stride over a size counts
    as a row) and the loop moved inward may run over a size (its bound operands move with
    it): loop-interchange reorders the symbolic program's loops as the program's at one size
    (unscheduled, 512 rows: matmul 17x, batch matmul 15x, conv2d 5.5x faster than as
    written, now at the static program's speed)."""
    mod = tir_mlir.load(str(SOURCE.parent / name)) if name.endswith(".tir") else program(name)

    def loop_names(mod, interchange=True):
        lowered = lower(mod.module, emit="affine")
        if interchange:
            with get_context():
                LoopInterchange()(lowered)
        return re.findall(r'\} \{[^{}]*tir\.name = "(\w+)"', str(lowered))

    names = loop_names(mod)  # innermost first
    assert names != loop_names(mod, interchange=False)
    assert names == loop_names(mod.specialize(INTERCHANGED[name]))
