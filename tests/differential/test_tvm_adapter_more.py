"""TVM-differential tests for the failure classes found by running the rest of TVM's own
schedule test files (cache_read_write, read_write_at, utilities, ...) through
benchmarks/tvm_schedule_tests.py, each on a program of the same kind written here."""

import pytest
import tvm_oracle

from schedule_differential import assert_agrees
from workloads import matmul

pytestmark = pytest.mark.tvm
tvm_oracle.import_tvm()

# a 64x64 tile per thread block, 4x4 per thread, k in steps of 4
GPU_MM = """
@T.prim_func
def main(A: T.Buffer((128, 64), "float32"), B: T.Buffer((64, 128), "float32"),
         C: T.Buffer((128, 128), "float32")):
    for bx in T.thread_binding(2, thread="blockIdx.x"):
        for by in T.thread_binding(2, thread="blockIdx.y"):
            for ty in T.thread_binding(4, thread="threadIdx.y"):
                for tx in T.thread_binding(4, thread="threadIdx.x"):
                    for k0 in range(16):
                        for k1, i, j in T.grid(4, 16, 16):
                            with T.block("C"):
                                vi = T.axis.spatial(128, bx * 64 + ty * 16 + i)
                                vj = T.axis.spatial(128, by * 64 + tx * 16 + j)
                                vk = T.axis.reduce(64, k0 * 4 + k1)
                                with T.init():
                                    C[vi, vj] = T.float32(0)
                                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
"""


def _loops(s, name):
    return s.get_loops(s.get_block(name))


# --- read_at / write_at relax the region over the threads sharing the cache's scope ---------


@pytest.mark.parametrize("scope", ["shared", "local"])
@pytest.mark.parametrize("index", [1, 2])
def test_read_at_under_threads(scope, index):
    def fn(s):
        c = s.get_block("C")
        s.read_at(_loops(s, "C")[4], c, index, scope)

    assert_agrees(GPU_MM, fn, printer=True, numerics=False)


@pytest.mark.parametrize("scope", ["shared", "local"])
def test_write_at_under_threads(scope):
    def fn(s):
        c = s.get_block("C")
        s.write_at(_loops(s, "C")[3], c, 0, scope)

    assert_agrees(GPU_MM, fn, printer=True, numerics=False)


# --- error_render_level: "fast" gives TVM's short message, "none" none -------------------------
ONE_BLOCK = """
@T.prim_func
def main(A: T.Buffer((8,), "float32")):
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            A[vi] = T.float32(0)
"""


@pytest.mark.parametrize("level", ["detail", "fast", "none"])
def test_error_render_level_of_a_missing_block(level):
    import tvm
    import tir_mlir

    theirs = tvm.tir.Schedule(tvm.script.from_source(ONE_BLOCK), error_render_level=level)
    ours = tir_mlir.Schedule(tir_mlir.parse(ONE_BLOCK), error_render_level=level)
    with pytest.raises(tvm.tir.ScheduleError) as t:
        theirs.get_block("missing")
    with pytest.raises(tir_mlir.ScheduleError) as o:
        ours.get_block("missing")
    if level == "detail":  # TVM adds the function's text; the reason is the same
        assert "Cannot find a block with the name: missing" in str(t.value)
        assert "Cannot find a block with the name: missing" in str(o.value)
    else:
        assert str(o.value) == str(t.value)


# --- builtins with string arguments, void extern calls, T.type_annotation(dtype=...) --------
POINTER_CALLS = """
@T.prim_func
def main(A: T.Buffer((32, 32), "float16"), B: T.Buffer((32, 32), "float16"),
         D: T.Buffer((32,), "int32")):
    for i, j in T.grid(2, 2):
        with T.block("load"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads(A[vi * 16:vi * 16 + 16, vj * 16:vj * 16 + 16])
            T.writes(B[vi * 16:vi * 16 + 16, vj * 16:vj * 16 + 16])
            T.tvm_load_matrix_sync(B.data, 16, 16, 16, vi * 2 + vj, T.tvm_access_ptr(
                T.type_annotation(dtype="float16"), A.data, vi * 512 + vj * 16, 512, 1,
                dtype="handle"), 32, "row_major")
    for i in range(2):
        with T.block("ext"):
            vi = T.axis.spatial(2, i)
            T.reads(D[vi * 16:vi * 16 + 16])
            T.writes(D[vi * 16:vi * 16 + 16])
            T.call_extern("void", "touch", D.data, vi)
"""


@pytest.mark.parametrize("how", ["split", "reorder"])
def test_pointer_calls_with_strings_and_void(how):
    def fn(s):
        i, j = _loops(s, "load")
        if how == "split":
            s.split(j, factors=[None, 1])
            s.split(_loops(s, "ext")[0], factors=[2, 1])
        else:
            s.reorder(j, i)

    assert_agrees(POINTER_CALLS, fn, printer=True, numerics=False)


# --- transform_layout: pad_value without padding, implicit padding of an injective map -------
VECTOR = """
@T.prim_func
def main(A: T.Buffer((12,), "float32"), C: T.Buffer((12,), "float32")):
    B = T.alloc_buffer((12,), "float32")
    for i in range(12):
        with T.block("B"):
            vi = T.axis.spatial(12, i)
            B[vi] = A[vi] * T.float32(2)
    for i in range(12):
        with T.block("C"):
            vi = T.axis.spatial(12, i)
            C[vi] = B[vi] + T.float32(1)
"""


@pytest.mark.parametrize(
    "factor,pad,injective",
    [
        (4, 7.0, False),  # no padding: pad_value does not matter
        (3, None, False),
        (5, None, True),  # 12 -> (3, 5): implicit padding, never accessed
        (5, None, False),  # padding without pad_value: refused
        (5, 0.0, False),  # padding with pad_value: the writer fills it
        (8, -1.5, False),
    ],
)
def test_transform_layout_pad_value(factor, pad, injective):
    def fn(s):
        s.transform_layout(
            s.get_block("B"),
            ("write", 0),
            lambda i: (i // factor, i % factor),
            pad_value=pad,
            assume_injective_transform=injective,
        )

    assert_agrees(VECTOR, fn, printer=True, numerics=pad is None or 12 % factor == 0)


# padded writers: a reduction, an int buffer with a lambda pad, a 2-D map with a separator
PADDED = """
@T.prim_func
def main(A: T.Buffer((10, 6), "int32"), C: T.Buffer((10,), "int32")):
    S = T.alloc_buffer((10,), "int32")
    P = T.alloc_buffer((10, 6), "int32")
    for i, k in T.grid(10, 6):
        with T.block("S"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                S[vi] = 0
            S[vi] = S[vi] + A[vi, vk]
    for i, j in T.grid(10, 6):
        with T.block("P"):
            vi, vj = T.axis.remap("SS", [i, j])
            P[vi, vj] = A[vi, vj] * 2
    for i in range(10):
        with T.block("C"):
            vi = T.axis.spatial(10, i)
            C[vi] = S[vi] + P[vi, 0]
"""


@pytest.mark.parametrize("case", ["reduction", "lambda", "2d", "2d_separator"])
def test_transform_layout_padded_writer(case):
    import tvm

    sep = tvm.tir.IndexMap.AXIS_SEPARATOR

    def fn(s):
        if case == "reduction":
            s.transform_layout("S", "S", lambda i: [i // 4, i % 4], pad_value=0)
        elif case == "lambda":
            s.transform_layout("S", "S", lambda i: [i // 3, i % 3], pad_value=lambda a, b: a + b)
        elif case == "2d":
            s.transform_layout("P", "P", lambda i, j: [i // 4, j, i % 4], pad_value=7)
        else:
            s.transform_layout("P", "P", lambda i, j: [j, i // 4, sep, i % 4], pad_value=7)

    assert_agrees(PADDED, fn, printer=True, trace=case != "lambda", numerics=False)


@pytest.mark.parametrize("pad", [0.0, 1.5])
def test_transform_layout_pad_value_of_the_wrong_type(pad):
    def fn(s):
        s.transform_layout("S", "S", lambda i: [i // 4, i % 4], pad_value=pad)

    # (trace: TVM keeps the get_block of the refused call; our refusal drops the whole call)
    assert_agrees(PADDED, fn, trace=False)


# --- transform_layout: IndexMap.AXIS_SEPARATOR in the map, `*indices` with keyword-only dims -
GRID = """
@T.prim_func
def main(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
    B = T.alloc_buffer((16, 16))
    for i, j in T.grid(16, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for i, j in T.grid(16, 16):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] + T.float32(1)
"""


@pytest.mark.parametrize("buffer", [("write", 0), ("read", 0)])
def test_transform_layout_with_axis_separator(buffer):
    import tvm

    sep = tvm.tir.IndexMap.AXIS_SEPARATOR

    def fn(s):
        s.transform_layout(s.get_block("B"), buffer, lambda i, j: [j // 4, sep, i, j % 4])

    assert_agrees(GRID, fn, printer=True)


def test_transform_layout_keyword_only_dims():
    def fn(s):
        s.transform_layout(s.get_block("C"), ("write", 0), lambda *rows, j: [*rows, j // 8, j % 8])

    assert_agrees(GRID, fn, printer=True, trace=False)  # TVM names the parameters otherwise


# --- annotate keeps a Python float as is; a copy does not know handles made after it ---------
@pytest.mark.parametrize("value", [0.22, 1e-7, [0.5, "x"]])
def test_annotate_float_value(value):
    assert_agrees(GRID, lambda s: s.annotate(s.get_block("B"), "k", value), printer=True)


def test_handles_made_after_a_copy():
    import tvm
    import tir_mlir

    def run(sch):
        i, j = sch.get_loops(sch.get_block("B"))
        other = sch.copy()
        a, _ = sch.split(i, factors=[None, 4])
        b, _ = other.split(j, factors=[None, 8])
        out = []
        for s, rv in ((other, a), (sch, b), (other, i), (sch, j)):
            try:
                s.get(rv)
                out.append("ok")
            except IndexError:
                out.append("IndexError")
        return out

    theirs = run(tvm.tir.Schedule(tvm.script.from_source(GRID)))
    ours = run(tir_mlir.Schedule(tir_mlir.parse(GRID)))
    assert ours == theirs


# --- constants: alloc_buffer lines before T.allocate_const, the buffer named as TVM names it --
CONSTS = """
@T.prim_func
def main(A: T.Buffer((4, 8), "float32"), C: T.Buffer((4, 8), "float32")):
    W = T.allocate_const([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0], "float32", [8])
    W_buf = T.decl_buffer((8,), data=W)
    for i, j in T.grid(4, 8):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads(A[vi, vj], W_buf[vj])
            T.writes(C[vi, vj])
            C[vi, vj] = A[vi, vj] * W_buf[vj]
"""


@pytest.mark.parametrize("how", ["read_const", "read_input", "write"])
def test_cache_around_constants(how):
    def fn(s):
        c = s.get_block("C")
        if how == "write":
            s.cache_write(c, 0, "global")
        else:
            s.cache_read(c, 1 if how == "read_const" else 0, "global")

    assert_agrees(CONSTS, fn, printer=True)


# --- a ("read" | "write", index) out of range is an AssertionError, as TVM asserts it --------
@pytest.mark.parametrize("buffer", [("write", 1), ("read", -1), ("read", 5)])
def test_buffer_index_out_of_range_asserts(buffer):
    import tvm
    import tir_mlir

    for sch in (
        tvm.tir.Schedule(tvm.script.from_source(GRID)),
        tir_mlir.Schedule(tir_mlir.parse(GRID)),
    ):
        with pytest.raises(AssertionError):
            sch.set_axis_separator(sch.get_block("B"), buffer, [1])


# --- explicit_*_region annotations print as T.int32: TVM's parse of our text is TVM's block ---
@pytest.mark.parametrize("kind", ["read", "write"])
def test_explicit_region_annotation_reparses_as_tvm_built_it(kind):
    from schedule_differential import differential

    def fn(s):
        s.annotate_buffer_access(
            s.get_block("B"), 0, kind, lambda vi, vj: ((vi, vi + 2), (vj - 1, vj + 1))
        )

    out = differential(GRID, fn)
    # only the spelling differs (TVM prints the int32 bare, which its own parser reads as
    # another integer type: its printed text is not structurally its module)
    assert all(p.startswith("printer: text differs") for p in out.problems), out.problems
    assert "T.int32(0)" in out.our_text


# --- traces: floats as TVM prints them, TVM's JSON strings (quoted, not escaped), as_python ---
def test_trace_prints_floats_as_tvm():
    def fn(s):
        s.sample_categorical(candidates=[3, 4], probs=[1.0, 0.0])
        s.annotate(s.get_block("B"), "x", 2.0)

    assert_agrees(GRID, fn, printer=True)


@pytest.mark.parametrize("text", ["SSRSSR", "", '""', '"', "a\\b"])
def test_tvm_json_string_arguments(text):
    import tvm
    import tir_mlir

    theirs = tvm.tir.Schedule(tvm.script.from_source(GRID))
    theirs.annotate(theirs.get_block("B"), "k", text)
    ours = tir_mlir.Schedule(tir_mlir.parse(GRID))
    tir_mlir.Trace.from_json(theirs.trace.as_json()).apply_to_schedule(ours)
    if '"' not in text and "\\" not in text:  # TVM prints a string unescaped ("""")
        assert ours.trace.as_python() == list(theirs.trace.as_python())
    assert tvm.ir.structural_equal(tvm.script.from_source(ours.mod.script()), theirs.mod["main"])


# --- transform_block_layout of int64 loops gives int64 loops -----------------------------------
INT64_GRID = """
@T.prim_func
def main(A: T.Buffer((T.int64(8), T.int64(16)), "float32"),
         B: T.Buffer((T.int64(8), T.int64(16)), "float32")):
    for i, j in T.grid(T.int64(8), T.int64(16)):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
"""


@pytest.mark.parametrize("index_map", [lambda i, j: (i * 16 + j,), lambda i, j: (j, i)])
def test_transform_block_layout_int64(index_map):
    # (the trace differs: TVM writes the map's constants T.int64(16); docs/tvm_compat.md)
    assert_agrees(
        INT64_GRID, lambda s: s.transform_block_layout("B", index_map), printer=True, trace=False
    )


# --- merge of loops at the same depth of two nests merges the loops above them ---------------
TWO_NESTS = """
@T.prim_func
def main(A: T.Buffer((32, 32), "float32"), C: T.Buffer((32, 32), "float32"),
         D: T.Buffer((16, 16), "float32")):
    B = T.alloc_buffer((32, 32))
    for i, j in T.grid(32, 32):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] + T.float32(1)
    for i_0, j_0, i_1, j_1 in T.grid(4, 4, 8, 8):
        with T.block("C"):
            vi = T.axis.spatial(32, i_0 * 8 + i_1)
            vj = T.axis.spatial(32, j_0 * 8 + j_1)
            C[vi, vj] = B[vi, vj] * T.float32(2)
    for i_0, j_0, i_1, j_1 in T.grid(4, 4, 4, 4):
        with T.block("D"):
            vi = T.axis.spatial(16, i_0 * 4 + i_1)
            vj = T.axis.spatial(16, j_0 * 4 + j_1)
            D[vi, vj] = B[vi, vj] * T.float32(3)
"""


@pytest.mark.parametrize("depth", [0, 1])
def test_merge_chains_of_loops(depth):
    def fn(s):
        s.merge(_loops(s, "C")[depth], _loops(s, "D")[depth])

    assert_agrees(TWO_NESTS, fn, printer=True)


def test_merge_refuses_loops_that_are_not_only_children():
    def fn(s):
        s.merge(_loops(s, "B")[1], _loops(s, "C")[1])  # depth 1 vs a 4-loop nest: TVM too

    assert_agrees(TWO_NESTS, fn)


def test_merge_chains_refuses_a_dependence():
    import tir_mlir

    src = TWO_NESTS.replace(
        "D[vi, vj] = B[vi, vj] * T.float32(3)", "D[vi, vj] = C[vi, vj] * T.float32(3)"
    )
    sch = tir_mlir.Schedule(tir_mlir.parse(src))
    with pytest.raises(tir_mlir.ScheduleError, match="interleave"):
        sch.merge(_loops(sch, "C")[1], _loops(sch, "D")[1])


# --- cache_read of a buffer whose writer shares loops with a consumer (after compute_at) ------
SHARED_LOOP = """
@T.prim_func
def main(A: T.Buffer((64, 8), "float32"), C: T.Buffer((64, 8), "float32"),
         D: T.Buffer((64, 8), "float32")):
    B = T.alloc_buffer((64, 8))
    for i in range(4):
        for j, k in T.grid(16, 8):
            with T.block("B"):
                vi = T.axis.spatial(64, i * 16 + j)
                vk = T.axis.spatial(8, k)
                B[vi, vk] = A[vi, vk] * T.float32(2)
        for j, k in T.grid(16, 8):
            with T.block("C"):
                vi = T.axis.spatial(64, i * 16 + j)
                vk = T.axis.spatial(8, k)
                C[vi, vk] = B[vi, vk] + T.float32(1)
    for i, k in T.grid(64, 8):
        with T.block("D"):
            vi, vk = T.axis.remap("SS", [i, k])
            D[vi, vk] = B[vi, vk] * T.float32(3)
"""


@pytest.mark.parametrize("consumers", [None, ["C"], ["D"], ["C", "D"]])
@pytest.mark.parametrize("scope", ["global", "shared"])
def test_cache_read_after_a_writer_in_a_shared_loop(consumers, scope):
    def fn(s):
        blocks = None if consumers is None else [s.get_block(n) for n in consumers]
        s.cache_read(s.get_block("C"), 0, scope, consumer_blocks=blocks)

    assert_agrees(SHARED_LOOP, fn, printer=True)


@pytest.mark.parametrize("consumers", [None, ["C"], ["D"], ["C", "D"]])
def test_cache_write_of_a_writer_in_a_shared_loop(consumers):
    def fn(s):
        blocks = None if consumers is None else [s.get_block(n) for n in consumers]
        s.cache_write(s.get_block("B"), 0, "global", consumer_blocks=blocks)

    assert_agrees(SHARED_LOOP, fn, printer=True)


# --- unsafe_set_dtype of a buffer written through a T.match_buffer view -----------------------
VIEWED = """
@T.prim_func
def main(A: T.Buffer((8, 8), "float32"), C: T.Buffer((8, 8), "float32")):
    B = T.alloc_buffer((8, 8))
    for i, j in T.grid(8, 2):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            Bv = T.match_buffer(B[vi, vj * 4:vj * 4 + 4], (4,), offset_factor=1)
            for k in range(4):
                Bv[k] = A[vi, vj * 4 + k] * T.float32(2)
    for i, j in T.grid(8, 8):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            Cv = T.match_buffer(B[vi, vj], (), offset_factor=1)
            C[vi, vj] = Cv[()] + T.float32(1)
"""


@pytest.mark.parametrize("dtype", ["float16", "float64", "int32"])
def test_set_dtype_through_match_buffer_views(dtype):
    # (numbers: only float64 keeps them; the others round by design)
    assert_agrees(
        VIEWED,
        lambda s: s.unsafe_set_dtype(s.get_block("B"), 0, dtype),
        printer=True,
        numerics=dtype == "float64",
    )


# --- decompose_reduction: the update block's T.reads list what it writes first ----------------
NESTED_REDUCTION = """
@T.prim_func
def main(A: T.Buffer((4, 64), "float32"), B: T.Buffer((4,), "float32")):
    for i, ko in T.grid(4, 2):
        with T.block("outer"):
            vi, vko = T.axis.remap("SR", [i, ko])
            C = T.alloc_buffer((32,))
            with T.init():
                B[vi] = T.float32(0)
            for ki in range(32):
                with T.block("inner_1"):
                    vki = T.axis.spatial(32, ki)
                    C[vki] = A[vi, vko * 32 + vki] * T.float32(2)
            for ki in range(32):
                with T.block("inner_2"):
                    vki = T.axis.reduce(32, ki)
                    B[vi] = B[vi] + C[vki]
"""
FLIPPED_SUM = """
@T.prim_func
def main(A: T.Buffer((8, 16), "float32"), B: T.Buffer((8,), "float32")):
    for i, k in T.grid(8, 16):
        with T.block("B"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                B[vi] = T.float32(0)
            B[vi] = A[vi, vk] + B[vi]
"""


@pytest.mark.parametrize("src", [NESTED_REDUCTION, FLIPPED_SUM])
@pytest.mark.parametrize("depth", [0, 1])
def test_decompose_reduction_update_reads(src, depth):
    def fn(s):
        name = "outer" if "outer" in src else "B"
        b = s.get_block(name)
        s.decompose_reduction(b, s.get_loops(b)[depth])
        s.cache_read(s.get_block(name + "_update"), 0, "local")  # read index 0: B

    assert_agrees(src, fn, printer=True)


# --- loop_partition prints TVM's regions: none on the wrappers, the whole part on the copies --
@pytest.mark.parametrize("factors", [[4, None], [None, 3, 5]])
@pytest.mark.parametrize("depth", [0, 1])
def test_loop_partition_regions(factors, depth):
    def fn(s):
        s.loop_partition(_loops(s, "B")[depth], factors=factors)

    assert_agrees(GRID, fn, printer=True)


# --- set_axis_separator of a buffer written through a view: the source, and the views ---------
VIEWS_3D = """
@T.prim_func
def main(A: T.Buffer((8, 8, 8), "float32"), C: T.Buffer((8, 8, 8), "float32")):
    B = T.alloc_buffer((8, 8, 8))
    for i, j in T.grid(8, 2):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            Bv = T.match_buffer(B[vi, vj * 4:vj * 4 + 4, 0:8], (4, 8), offset_factor=1)
            for k, l in T.grid(4, 8):
                Bv[k, l] = A[vi, vj * 4 + k, l]
    for i, j, k in T.grid(8, 8, 8):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSS", [i, j, k])
            Cv = T.match_buffer(B[vi, vj, vk], (), offset_factor=1)
            C[vi, vj, vk] = Cv[()] * T.float32(2)
"""


@pytest.mark.parametrize("seps", [[1], [2], [1, 2]])
def test_set_axis_separator_through_views(seps):
    assert_agrees(
        VIEWS_3D, lambda s: s.set_axis_separator(s.get_block("B"), ("write", 0), seps), printer=True
    )


@pytest.mark.parametrize("by", ["name", "index"])
def test_transform_layout_separator_through_views(by):
    import tvm

    sep = tvm.tir.IndexMap.AXIS_SEPARATOR

    def fn(s):
        buf = "B" if by == "name" else ("write", 0)
        s.transform_layout(s.get_block("B"), buf, lambda i, j, k: [i, sep, j, k])

    assert_agrees(VIEWS_3D, fn, printer=True)


def test_transform_layout_of_a_viewed_buffer_refused():
    import tir_mlir

    sch = tir_mlir.Schedule(tir_mlir.parse(VIEWS_3D))
    with pytest.raises(tir_mlir.ScheduleError, match="views"):
        sch.transform_layout(sch.get_block("B"), ("write", 0), lambda i, j, k: [j, i, k])


# --- reorder holds the loops above the reordered ones constant in the affine-binding check ---
PARTLY_AFFINE = """
@T.prim_func
def main(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32")):
    for i, j, k in T.grid(4, 4, 4):
        with T.block("B"):
            vi = T.axis.spatial(16, i * i)
            vj = T.axis.spatial(16, j * 4 + k)
            B[vi, vj] = A[vi, vj] + T.float32(1)
"""


@pytest.mark.parametrize("which", [(1, 2), (0, 1), (0, 2)])
def test_reorder_with_a_binding_not_affine_in_outer_loops(which):
    def fn(s):
        loops = _loops(s, "B")
        s.reorder(loops[which[1]], loops[which[0]])

    assert_agrees(PARTLY_AFFINE, fn, printer=True)


# --- cache_read of a block inside a scope block: a compact cache in the scope --------------------
SCOPED = """
@T.prim_func
def main(B: T.Buffer((32, 32), "float32"), C: T.Buffer((32, 32), "float32"),
         X: T.Buffer((32, 32), "float32")):
    A = T.alloc_buffer((32, 32))
    for i0, j0 in T.grid(4, 2):
        with T.block("scope"):
            i, j = T.axis.remap("SS", [i0, j0])
            for x, y in T.grid(8, 16):
                with T.block("A"):
                    vi = T.axis.spatial(32, i * 8 + x)
                    vj = T.axis.spatial(32, j * 16 + y)
                    A[vi, vj] = X[vi, vj] * T.float32(2)
            for x, y in T.grid(8, 16):
                with T.block("B"):
                    vi = T.axis.spatial(32, i * 8 + x)
                    vj = T.axis.spatial(32, j * 16 + y)
                    B[vi, vj] = A[vi, vj] + X[vi, vj]
    for i, j in T.grid(32, 32):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = A[vi, vj] * T.float32(3)
"""


@pytest.mark.parametrize("which", [("B", 0), ("B", 1), ("C", 0)])
@pytest.mark.parametrize("then_root", [False, True])
def test_cache_read_in_a_scope_block(which, then_root):
    def fn(s):
        s.cache_read(s.get_block(which[0]), which[1], "local")
        if then_root:
            s.cache_read(s.get_block("C"), 0, "global")

    assert_agrees(SCOPED, fn, printer=True)


@pytest.mark.parametrize("then_scope", [False, True])
def test_cache_write_in_a_scope_block(then_scope):
    def fn(s):
        s.cache_write(s.get_block("A"), 0, "local")
        s.cache_write(s.get_block("B"), 0, "global")
        if then_scope:
            s.cache_write(s.get_block("scope"), 0, "global")

    assert_agrees(SCOPED, fn, printer=True)


MM = matmul(32, k=8)


@pytest.mark.parametrize("how", ["read_A", "read_B"])
def test_cache_in_a_blockized_block(how):
    def fn(s):
        i, j, k = _loops(s, "C")
        io, ii = s.split(i, factors=[None, 8])
        jo, ji = s.split(j, factors=[None, 16])
        s.reorder(io, jo, ii, ji, k)
        s.blockize(ii)
        c = s.get_block("C")
        s.cache_read(c, 1 if how == "read_A" else 2, "shared")  # (read 0: C, the accumulator)

    # (read_B: the outer block's inferred T.reads list B first now, TVM keeps its order)
    assert_agrees(MM, fn, printer=how == "read_A")


# --- compute_at of a producer into the loops of a blockized consumer ---------------------------
BLOCKIZED_CONSUMER = """
@T.prim_func
def main(A: T.Buffer((32, 32), "float32"), C: T.Buffer((32, 32), "float32")):
    B = T.alloc_buffer((32, 32))
    for i, j in T.grid(32, 32):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for i, j in T.grid(4, 2):
        with T.block("C_outer"):
            vi_o, vj_o = T.axis.remap("SS", [i, j])
            for i_i, j_i in T.grid(8, 16):
                with T.block("C_inner"):
                    vi = T.axis.spatial(32, vi_o * 8 + i_i)
                    vj = T.axis.spatial(32, vj_o * 16 + j_i)
                    C[vi, vj] = B[vi, vj] + T.float32(1)
"""


@pytest.mark.parametrize("depth", [0, 1])
def test_compute_at_into_a_blockized_consumers_loops(depth):
    def fn(s):
        s.compute_at(s.get_block("B"), _loops(s, "C_outer")[depth])

    assert_agrees(BLOCKIZED_CONSUMER, fn, printer=True)


# --- transform_layout simplifies the new indices by the iter vars' ranges --------------------------
def test_transform_layout_simplifies_by_ranges():
    def fn(s):
        i, j = _loops(s, "C")
        io, ii = s.split(i, factors=[None, 4])
        jo, ji = s.split(j, factors=[None, 4])
        s.reorder(io, jo, ii, ji)
        outer = s.blockize(ii)
        b = s.cache_read(outer, 0, "global")
        s.transform_layout(b, ("write", 0), lambda i, j: (i // 4, j // 4, i % 4, j % 4))

    assert_agrees(GRID, fn, printer=True)


# --- compute_at: TVM's `start + loop` binding spelling; a non-affine read relaxes its dimension --
POOL = """
@T.prim_func
def main(X: T.Buffer((34, 16), "float32"), Y: T.Buffer((16, 16), "float32")):
    P = T.alloc_buffer((34, 16))
    for i, j in T.grid(34, 16):
        with T.block("P"):
            vi, vj = T.axis.remap("SS", [i, j])
            P[vi, vj] = X[vi, vj] + T.float32(1)
    for i, j, r in T.grid(16, 16, 3):
        with T.block("Y"):
            vi, vj, vr = T.axis.remap("SSR", [i, j, r])
            with T.init():
                Y[vi, vj] = T.float32(0)
            Y[vi, vj] = Y[vi, vj] + P[vi * 2 + vr, vj]
"""
GATHER = """
@T.prim_func
def main(X: T.Buffer((16, 16), "float32"), Y: T.Buffer((16, 8), "float32")):
    P = T.alloc_buffer((16, 16))
    for i, j in T.grid(16, 16):
        with T.block("P"):
            vi, vj = T.axis.remap("SS", [i, j])
            P[vi, vj] = X[vi, vj] * T.float32(2)
    for i, j in T.grid(16, 8):
        with T.block("Y"):
            vi, vj = T.axis.remap("SS", [i, j])
            Y[vi, vj] = P[vi, T.Cast("int32", T.floor(T.Cast("float32", vj) * T.float32(1.5)))]
"""


@pytest.mark.parametrize("src,depth", [(POOL, 0), (POOL, 1), (GATHER, 0), (GATHER, 1)])
def test_compute_at_spelling_and_non_affine_reads(src, depth):
    def fn(s):
        i = _loops(s, "Y")[0]
        io, _ = s.split(i, factors=[None, 4])
        s.compute_at(s.get_block("P"), _loops(s, "Y")[depth])

    assert_agrees(src, fn, printer=True)
