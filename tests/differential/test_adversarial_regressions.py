"""Inputs found by the adversarial run (tests/support/parse_differential.py, seeds 21-24): each used
to crash tir-mlir or to be accepted where TVM 0.21 rejects it. Each is now a located error;
where TVM is installed, the test also checks that TVM rejects it (and accepts the fixed
program), so that the two parsers keep deciding alike."""

import pytest
import tvm_oracle
from click.testing import CliRunner

import tir_mlir
from tir_mlir import TIRParseError
from tir_mlir.cli import main

HEAD = """@T.prim_func
def f(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32"),
      I: T.Buffer((16,), "int32")):
{attrs}    for i in range(16):
        with T.block("B"):
            vi = T.axis.spatial(16, i)
            T.writes({region})
            B[vi] = A[vi]
"""


def prog(region="B[vi]", attrs=""):
    return HEAD.format(region=region, attrs=attrs)


def tvm_decides(text, accepts: bool):
    """TVM 0.21 accepts (or rejects) `text` too. An extra oracle: without TVM it returns, and
    the caller's own assertions still count."""
    if not tvm_oracle.installed():
        return
    import tvm

    try:
        tvm.script.from_source(text)
        accepted = True
    except Exception:  # noqa: BLE001 - TVM raises several kinds of errors
        accepted = False
    assert accepted == accepts, f"TVM {'rejects' if accepts else 'accepts'} it"


@pytest.mark.parametrize(
    "region, message, col",
    [
        ("B[vi + vhA[-1]]", "undefined variable 'vhA' in T.writes", 29),  # was an AttributeError
        (
            "B[A[0]]",
            "T.writes: a region index must be an integer expression, got a load of the "
            "float32 buffer 'A'",
            24,
        ),
        ("B[vi * T.bool(2)]", "literal 2 does not fit in bool", 29),
        ("B[T.int8(300)]", "literal 300 does not fit in int8", 24),
        ("B[vi + I]", "T.writes: buffer 'I' is not an index", 29),
        (
            "B[vi + i]",
            "T.writes is not well-formed: it uses loop variable 'i' defined outside the "
            "block; use a block iterator",
            29,
        ),
        (
            "B[T.float16(7)]",
            "T.writes: a region index must be an integer expression, got T.float16(...)",
            24,
        ),
        ("B[I[0, 1]]", "buffer 'I' has 1 dimensions but is indexed with 2", 24),
        ("B[T.if_then_else(1, 2)]", "T.if_then_else takes 3 arguments, got 2", 24),
        (
            "B[T.Cast('float32', vi)]",
            "T.writes: a region index must be an integer expression, got T.Cast('float32', ...)",
            24,
        ),
        ("B[T.exp(vi, 2)]", "T.exp takes 1 argument, got 2", 24),
        ("B[T.pow(vi, 2)]", "T.writes: T.pow is not an integer expression", 24),
    ],
)
def test_bad_region_indices_are_located_errors(region, message, col):
    with pytest.raises(TIRParseError) as e:
        tir_mlir.parse(prog(region), "r.tir")
    assert e.value.message == message and str(e.value.loc) == f"r.tir:7:{col}"
    tvm_decides(prog(region), accepts=False)


@pytest.mark.parametrize(
    "region",
    [
        "B[I[vi]]",
        "B[vi * T.bool(1)]",
        "B[T.int8(3)]",
        "B[T.int64(2**40) - T.int64(2**40) + vi]",
        "B[T.int32(T.float32(3)) + vi]",
        "B[T.int32(A[0])]",
        "B[I[I[vi]]]",
        "B[T.Cast('int32', A[vi])]",
        "B[T.if_then_else(vi > 1, 2, vi)]",
        "B[T.exp(1)]",
        "B[T.sigmoid(vi)]",
    ],
)
def test_good_region_indices_stay_legal(region):
    tir_mlir.parse(prog(region))
    tvm_decides(prog(region), accepts=True)


@pytest.mark.parametrize("value", ['"x"', "1.5", "[1]"])
def test_noalias_of_the_wrong_kind_is_refused_at_parse_time(value):
    """It used to be accepted, then crash the build (a cast to BoolAttr). TVM accepts it at
    parse time and fails in its build; here the parser reports it."""
    text = prog(attrs=f'    T.func_attr({{"tir.noalias": {value}}})\n')
    with pytest.raises(TIRParseError, match="'tir.noalias' must be True, False or an integer"):
        tir_mlir.parse(text)


@pytest.mark.parametrize(
    "value, marked", [("True", True), ("1", True), ("False", False), ("0", False)]
)
def test_noalias_integers_build_like_booleans(value, marked):
    mod = tir_mlir.parse(prog(attrs=f'    T.func_attr({{"tir.noalias": {value}}})\n'))
    from tir_mlir.passes.lowering.pipeline import emit_text

    assert ("llvm.noalias" in emit_text(mod.module, "llvm-dialect")) == marked
    tir_mlir.build(mod)


MATCH_LATE = """@T.prim_func
def f(a: T.handle, b: T.handle):
    A = T.match_buffer(a, (16,))
    for i in range(16):
        with T.block("B"):
            vi = T.axis.spatial(16, i)
            B[vi] = A[vi]
    B = T.match_buffer(b, (16,))
"""


def test_buffer_used_before_its_match_buffer_line(tmp_path):
    with pytest.raises(TIRParseError) as e:
        tir_mlir.parse(MATCH_LATE, "m.tir")
    assert e.value.message == "buffer 'B' is used before its T.match_buffer line"
    assert str(e.value.loc) == "m.tir:7:13"
    assert [(m, str(loc)) for m, loc in e.value.notes] == [
        ("buffer 'B' is matched here", "m.tir:8:5")
    ]
    tvm_decides(MATCH_LATE, accepts=False)
    path = tmp_path / "m.tir"
    path.write_text(MATCH_LATE)
    r = CliRunner().invoke(main, ["parse", str(path)])
    assert r.exit_code == 1 and f"{path}:7:13: error: buffer 'B' is used before" in r.output


TWO_STAGES = """@T.prim_func
def f(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32")):
    X = T.alloc_buffer((16, 16))
    for i, j in T.grid(16, 16):
        with T.block("X"):
            vi, vj = T.axis.remap("SS", [i, j])
            X[vi, vj] = A[vi, vj]
    for i, j in T.grid(16, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = X[vi, vj]
"""


@pytest.mark.parametrize(
    "factor, offset, ok",
    [(2**40, 1, False), (2**31, 1, False), (16, 2**31, False), (2**31 - 1, 1, True)],
)
def test_storage_align_arguments_beyond_int32(factor, offset, ok):
    """TVM truncates them to int32 (2**40 becomes 0, 2**31 negative) and refuses the result;
    here the error says so. The module is unchanged."""
    sch = tir_mlir.Schedule(tir_mlir.parse(TWO_STAGES))
    before = sch.mod.script()
    if ok:
        sch.storage_align(sch.get_block("X"), 0, 0, factor, offset)
        assert (
            f'T.block_attr({{"buffer_dim_align": [[0, 0, {factor}, {offset}]]}})'
            in sch.mod.script()
        )
        return
    with pytest.raises(
        tir_mlir.ScheduleError,
        match=f"storage_align: factor={factor} and offset={offset} must fit in int32",
    ):
        sch.storage_align(sch.get_block("X"), 0, 0, factor, offset)
    assert sch.mod.script() == before


def test_opaque_block_regions_may_name_loop_variables():
    text = prog().replace("            vi = T.axis.spatial(16, i)\n", "").replace("vi", "i")
    tir_mlir.parse(text)
    tvm_decides(text, accepts=True)


FORM_FEED = prog().replace("        with T.block", "        \fwith T.block")


def test_form_feed_in_indentation_resets_the_column_as_in_python():
    """CPython's tokenizer counts a form feed in the leading whitespace as column 0."""
    import ast

    with pytest.raises(SyntaxError):
        ast.parse(FORM_FEED)
    with pytest.raises(TIRParseError, match="expected an indented block"):
        tir_mlir.parse(FORM_FEED)
    tvm_decides(FORM_FEED, accepts=False)
    tir_mlir.parse(prog().replace("        with T.block", "\f        with T.block"))


BODY = """@T.prim_func
def f(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
    for i in range(4):
        with T.block("B"):
            vi = T.axis.spatial(4, i)
            {stmt}
"""


@pytest.mark.parametrize(
    "stmt, message, col",
    [
        ('B[vi] = A[f"{vi}"]', "an f-string or bytes literal is Python, not TVMScript", 24),
        ('B[vi] = A[b"x"]', "an f-string or bytes literal is Python, not TVMScript", 24),
        (
            "B[vi] = T.max(*[A[vi], A[vi]])",
            "argument unpacking (*x, **x) is Python, not TVMScript",
            27,
        ),
        (
            "T.reads(A[T.axis.spatial(4, i)])\n            B[vi] = A[vi]",
            "T.axis.spatial cannot be used inside an expression",
            23,
        ),
        ("B[__import__('os').getpid()] = A[vi]", "only T.* functions can be called", 15),
    ],
)
def test_python_that_tvm_would_evaluate_is_a_located_error(stmt, message, col):
    _check_python_only(BODY.format(stmt=stmt), message, 6, col)


def test_decorator_expression_is_python():
    text = BODY.format(stmt="B[vi] = A[vi]").replace("@T.prim_func", "@T.prim_func@tvm.script")
    _check_python_only(text, "a decorator that is an expression is Python, not TVMScript", 1, 13)


def _check_python_only(text, message, line, col):
    """TVM's parser evaluates these (Python syntax); here they are refused, classified by the
    adversarial run as the documented difference 'Python that is not TVMScript'."""
    import parse_differential as PD

    with pytest.raises(TIRParseError) as e:
        tir_mlir.parse(text, "p.tir")
    assert message in e.value.message and str(e.value.loc) == f"p.tir:{line}:{col}"
    assert any(p.search(e.value.message) for p in PD.WE_REJECT.values())


def test_an_unknown_thread_tag_is_refused_where_it_is_written():
    """TVM parses any string as a thread tag (its build refuses it later); the dialect's
    #tir.thread declares the ten tags there are, so the parser refuses the others at the
    `thread=` argument, a difference the adversarial run recognises."""
    import parse_differential as PD

    text = BODY.format(stmt="B[vi] = A[vi]").replace(
        "range(4)", 'T.thread_binding(4, thread="a\\"b")'
    )
    with pytest.raises(TIRParseError) as e:
        tir_mlir.parse(text)
    assert e.value.message.startswith("unknown thread tag 'a\"b' (expected one of blockIdx.x")
    line = text.splitlines()[e.value.loc.line - 1]
    assert line[e.value.loc.col - 1 :].startswith('thread="a\\"b"')
    assert PD.WE_REJECT["checks TVM leaves to later passes"].search(e.value.message)


def test_thread_tags_print_as_strings():
    text = BODY.format(stmt="B[vi] = A[vi]").replace(
        "range(4)", 'T.thread_binding(4, thread="threadIdx.x")'
    )
    printed = tir_mlir.parse(text).script()
    assert 'T.thread_binding(4, thread="threadIdx.x")' in printed
    assert tir_mlir.parse(printed).script() == printed


def test_an_expression_as_a_region_is_a_documented_difference():
    """TVM evaluates `B[i] - 0.0` and accepts it as a region (seed 51 #29); here regions must
    be buffer regions, a difference the adversarial run recognises."""
    import parse_differential as PD

    text = prog().replace("T.writes(B[vi])", "T.writes(B[vi] - 0.0)")
    with pytest.raises(TIRParseError) as e:
        tir_mlir.parse(text)
    assert e.value.message == "T.writes expects buffer regions like A[i, 0:128]"
    assert PD.WE_REJECT["values of the wrong kind (a string index, a float shape)"].search(
        e.value.message
    )


@pytest.mark.parametrize(
    "call",
    [
        lambda s, b: s.set_store_predicate(b, lambda vi: vi < 2**70),
        lambda s, b: s.transform_layout(b, ("write", 0), lambda i, j: (i + 2**64, j)),
    ],
)
def test_lambda_integers_beyond_64_bits_are_refused(call):
    """They used to reach MLIR's constant builder (an 'incompatible function arguments'
    message); the module is unchanged."""
    sch = tir_mlir.Schedule(tir_mlir.parse(TWO_STAGES))
    before = sch.mod.script()
    with pytest.raises(tir_mlir.ScheduleError, match=r"integer \d+ does not fit in 64 bits"):
        call(sch, sch.get_block("X"))
    assert sch.mod.script() == before
