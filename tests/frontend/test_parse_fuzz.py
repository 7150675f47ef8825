"""Random input never crashes the parser: a module or one TIRParseError, nothing else.

Mutations of the seed programs (characters and tokens deleted, duplicated, swapped; truncation),
token soups, and random valid elementwise/reduction programs that must parse.
"""

import re
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tir_mlir
from tir_mlir import TIRParseError

DATA = Path(__file__).parent.parent / "data"
SEEDS = [p.read_text() for p in sorted(DATA.glob("*.tir"))]
SEEDS.append((DATA / "frontend" / "constructs.tir").read_text())
TOKEN = re.compile(r"\s+|\w+|.", re.S)
SOUP = [
    "T.",
    "block",
    "(",
    ")",
    "[",
    "]",
    ":",
    ",",
    "=",
    "+",
    "*",
    "//",
    "%",
    "for",
    "in",
    "with",
    "if",
    "else",
    "\n",
    "    ",
    "A",
    "vi",
    "i",
    "0",
    "1.0",
    '"Y"',
    "T.grid",
    "T.axis.remap",
    '"SR"',
    "T.float32",
    "range",
    "@T.prim_func",
    "def",
    "f",
    "->",
    "None",
    "and",
    "not",
    "T.Buffer",
    "(128,)",
    '"float32"',
    "T.init()",
    "+=",
    "T.where",
    "-",
    "**",
    "1e309",
]

FUZZ = settings(
    max_examples=150, deadline=2000, derandomize=True, suppress_health_check=list(HealthCheck)
)


def parse_or_error(text):
    try:
        mod = tir_mlir.parse(text, filename="fuzz.tir")
    except TIRParseError as e:
        assert e.loc is not None and e.loc.file == "fuzz.tir" and e.message
        return None
    assert mod.module.operation.verify()
    return mod


@st.composite
def mutated(draw):
    toks = TOKEN.findall(draw(st.sampled_from(SEEDS)))
    for _ in range(draw(st.integers(1, 4))):
        if not toks:
            break
        i = draw(st.integers(0, len(toks) - 1))
        op = draw(st.sampled_from(["delete", "duplicate", "swap", "replace", "truncate", "char"]))
        if op == "delete":
            del toks[i]
        elif op == "duplicate":
            toks.insert(i, toks[i])
        elif op == "swap":
            j = draw(st.integers(0, len(toks) - 1))
            toks[i], toks[j] = toks[j], toks[i]
        elif op == "replace":
            toks[i] = draw(st.sampled_from(SOUP))
        elif op == "truncate":
            toks = toks[:i]
        else:
            t = toks[i]
            k = draw(st.integers(0, len(t)))
            toks[i] = t[:k] + draw(st.characters(max_codepoint=0x7F)) + t[k:]
    return "".join(toks)


@FUZZ
@given(mutated())
def test_mutated_programs_parse_or_fail_cleanly(text):
    parse_or_error(text)


@FUZZ
@given(st.lists(st.sampled_from(SOUP), max_size=60))
def test_token_soup_parses_or_fails_cleanly(tokens):
    parse_or_error("".join(tokens))


DTYPES = ["float32", "float16", "float64", "int32", "int8", "int64", "uint8", "bfloat16"]


@st.composite
def valid_program(draw):
    """Elementwise (op on two inputs) or a reduction over the last axis, random shape/dtype."""
    rank = draw(st.integers(1, 3))
    shape = [draw(st.integers(1, 64)) for _ in range(rank)]
    dtype = draw(st.sampled_from(DTYPES))
    names = [f"i{k}" for k in range(rank)]
    vs = [f"v{k}" for k in range(rank)]
    shp = ", ".join(map(str, shape)) + ("," if rank == 1 else "")
    idx = ", ".join(vs)
    grid = ", ".join(map(str, shape))
    floaty = dtype.startswith(("float", "bfloat"))
    if draw(st.booleans()):
        op = draw(st.sampled_from(["+", "-", "*"] + (["/"] if floaty else ["//", "%"])))
        extra = draw(st.sampled_from(["", " + 1", " * 2"] + ([" + 1.5"] if floaty else [])))
        body = (
            f'        with T.block("C"):\n'
            f'            {", ".join(vs)} = T.axis.remap("{"S" * rank}", [{", ".join(names)}])\n'
            f"            C[{idx}] = A[{idx}] {op} B[{idx}]{extra}\n"
        )
        out_shape, kinds = shp, "S" * rank
    else:
        out = shape[:-1] or [1]
        out_idx = ", ".join(vs[:-1]) if rank > 1 else "0"
        out_shape = ", ".join(map(str, out)) + ("," if len(out) == 1 else "")
        kinds = "S" * (rank - 1) + "R"
        body = (
            f'        with T.block("C"):\n'
            f'            {", ".join(vs)} = T.axis.remap("{kinds}", [{", ".join(names)}])\n'
            f"            with T.init():\n"
            f"                C[{out_idx}] = T.{dtype}(0)\n"
            f"            C[{out_idx}] = T.max(C[{out_idx}], A[{idx}] * B[{idx}])\n"
        )
    return (
        f"@T.prim_func\n"
        f'def f(A: T.Buffer(({shp}), "{dtype}"), B: T.Buffer(({shp}), "{dtype}"), '
        f'C: T.Buffer(({out_shape}), "{dtype}")):\n'
        f"    for {', '.join(names)} in T.grid({grid}):\n" + body
    ), kinds


@settings(max_examples=60, deadline=2000, derandomize=True, suppress_health_check=list(HealthCheck))
@given(valid_program())
def test_generated_programs_parse(case):
    text, kinds = case
    mod = parse_or_error(text)
    assert mod is not None, text
    assert f"iter_types = [{', '.join(f'{chr(34)}{k}{chr(34)}' for k in kinds)}]" in mod.mlir()
