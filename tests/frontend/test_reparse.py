"""Printed output parses back to the same program: TVM's spellings of special floats, an empty
module, deep expressions."""

import pytest

import tir_mlir
from tir_mlir import TIRParseError

PROGRAM = """# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
    for i in range(4):
        with T.block("B"):
            vi = T.axis.spatial(4, i)
            B[vi] = T.max(T.min(A[vi], {hi}), {lo}) + {nan}
"""


def test_special_floats_round_trip():
    src = PROGRAM.format(hi='T.float32("inf")', lo='T.float32("-inf")', nan="T.float32(1e999)")
    text = tir_mlir.parse(src).script()
    assert 'T.min(A[vi], T.float32("inf")), T.float32("-inf")) + T.float32("inf")' in text
    assert tir_mlir.parse(text).script() == text
    nan = tir_mlir.parse(PROGRAM.format(hi="A[vi]", lo="A[vi]", nan='T.float32("nan")'))
    assert tir_mlir.parse(nan.script()).script() == nan.script()
    with pytest.raises(TIRParseError, match='takes "inf", "-inf" or "nan"'):
        tir_mlir.parse(PROGRAM.format(hi='T.float32("big")', lo="A[vi]", nan="A[vi]"))


def test_empty_module_prints_as_tvm_and_reparses():
    text = (
        "# from tvm.script import ir as I\n# from tvm.script import tir as T\n\n"
        "@I.ir_module\nclass Module:\n    pass"
    )
    mod = tir_mlir.parse(text)
    assert len(mod) == 0 and mod.script() == text


def test_deep_expressions_print_and_reparse():
    for body in (
        " + ".join(f"A[{k % 4}]" for k in range(3000)),
        "T.max(" * 300 + "A[vi]" + ", A[0])" * 300,
    ):
        mod = tir_mlir.parse(PROGRAM.format(hi="A[vi]", lo="A[vi]", nan=body))
        text = mod.script()
        assert tir_mlir.parse(text).script() == text


STRINGS = [
    'a"b',
    "line\nbreak",
    "tab\there",
    "back\\slash",
    "nul\0",
    "ünï",
    "\x7f\u2028",
    "emoji \U0001f600",
]


@pytest.mark.parametrize("value", STRINGS + [2**40, -(2**63), 1.5e38, [1, 'x"y', {"k\n": 2}]])
def test_annotation_values_round_trip(value):
    """Strings are escaped as Python would, so any annotation value prints and parses back."""
    for on_loop in (True, False):
        sch = tir_mlir.Schedule(tir_mlir.parse(PROGRAM.format(hi="A[vi]", lo="A[vi]", nan="1")))
        block = sch.get_block("B")
        sch.annotate(sch.get_loops(block)[0] if on_loop else block, "key", value)
        text = sch.mod.script()
        assert tir_mlir.parse(text).script() == text


@pytest.mark.parametrize(
    "value, match",
    [
        (float("inf"), "float inf is not a finite float32"),
        (float("nan"), "float nan is not a finite float32"),
        (1e39, "float 1e\\+39 is not a finite float32"),
        (2**70, "integer 1180591620717411303424 does not fit in 64 bits"),
        ([1, None], "unsupported annotation value None"),
    ],
)
def test_annotation_values_that_cannot_print_are_refused(value, match):
    mod = tir_mlir.parse(PROGRAM.format(hi="A[vi]", lo="A[vi]", nan="1"))
    sch = tir_mlir.Schedule(mod)
    with pytest.raises(tir_mlir.ScheduleError, match=match):
        sch.annotate(sch.get_block("B"), "key", value)
    assert sch.mod.script() == mod.script()


def test_block_names_are_strings_with_escapes():
    text = tir_mlir.parse(
        PROGRAM.format(hi="A[vi]", lo="A[vi]", nan="1").replace(
            'T.block("B")', r'T.block("B\"\n\x41\u00e9\N{BULLET}")'
        )
    ).script()
    assert r'with T.block("B\"\nAé•"):' in text
    assert tir_mlir.parse(text).script() == text


@pytest.mark.parametrize(
    "literal, match",
    [
        (r'"\x4"', r"truncated \\x escape"),
        (r'"\N{NO SUCH CHAR}"', "unknown character name"),
        (r'"\U00110000"', "is not a Unicode character"),
    ],
)
def test_malformed_string_escapes_are_errors(literal, match):
    src = PROGRAM.format(hi="A[vi]", lo="A[vi]", nan="1").replace('"B"', literal)
    with pytest.raises(TIRParseError, match=match) as e:
        tir_mlir.parse(src, "esc.tir")
    assert str(e.value.loc) == "esc.tir:6:22"


def test_split_names_must_be_identifiers():
    mod = tir_mlir.parse(PROGRAM.format(hi="A[vi]", lo="A[vi]", nan="1"))
    sch = tir_mlir.Schedule(mod)
    with pytest.raises(tir_mlir.ScheduleError, match="loop name 'a b' is not a Python identifier"):
        sch.split(sch.get_loops(sch.get_block("B"))[0], factors=[2, 2], names=["a b", "c"])
    assert sch.mod.script() == mod.script()


@pytest.mark.parametrize("newline", ["\r\n", "\r"])
def test_windows_and_old_mac_line_endings_read_as_in_python(newline):
    src = PROGRAM.format(hi="A[vi]", lo="A[vi]", nan="1")
    assert tir_mlir.parse(src.replace("\n", newline)).script() == tir_mlir.parse(src).script()
    with pytest.raises(TIRParseError) as e:
        tir_mlir.parse(src.replace("A[vi]", "A[vi // 0]", 1).replace("\n", newline), "nl.tir")
    assert str(e.value.loc) == "nl.tir:8:35"


def test_bitwise_not_of_a_bool_is_logical_not():
    """`~M[i]` on a bool buffer: TVM's bitwise not of one bit (numpy's ~ on bools)."""
    import numpy as np

    src = """@T.prim_func
def main(M: T.Buffer((4,), "bool"), B: T.Buffer((4,), "int32")):
    for i in range(4):
        with T.block("B"):
            vi = T.axis.spatial(4, i)
            B[vi] = T.Select(~M[vi], 1, 2)
"""
    mod = tir_mlir.parse(src)
    m, b = np.array([True, False, True, False]), np.zeros(4, "int32")
    tir_mlir.build(mod)["main"](m, b)
    np.testing.assert_array_equal(b, np.where(~m, 1, 2))
    assert tir_mlir.parse(mod.script()).script() == mod.script()


def test_u_prefixed_and_adjacent_strings_as_in_python():
    src = PROGRAM.format(hi="A[vi]", lo="A[vi]", nan="1").replace(
        'T.block("B")', """T.block("B" u'x' U"y")"""
    )
    assert 'with T.block("Bxy"):' in tir_mlir.parse(src).script()
