"""docs/tvmscript.md cannot rot: its programs parse, its error examples fail as shown, the
examples in its tables occur in those programs, and it lists every intrinsic the front end knows.

Fences: ```python tvmscript (must parse) and ```python tvmscript-error (first line
`# error: LINE:COL: message`, must fail there with a message starting with that text).
"""

import re
from pathlib import Path

import pytest

from tir_mlir.dtypes import is_dtype
from tir_mlir.errors import TIRParseError
from tir_mlir.frontend import intrinsics
from tir_mlir.frontend.parser import parse

DOC = Path(__file__).parent.parent.parent / "docs" / "tvmscript.md"
TEXT = DOC.read_text()
FENCE = re.compile(r"^```python (tvmscript(?:-error)?)\n(.*?)^```$", re.M | re.S)
BLOCKS = [(m[1], m[2], TEXT.count("\n", 0, m.start()) + 2) for m in FENCE.finditer(TEXT)]
PROGRAMS = [(src, line) for tag, src, line in BLOCKS if tag == "tvmscript"]
ERRORS = [(src, line) for tag, src, line in BLOCKS if tag == "tvmscript-error"]
SUPPORTED = TEXT.split("## Not supported")[0]


def _cells(row):
    """Cells of a markdown table row; `\\|` is a literal bar."""
    return [c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", row.strip())[1:-1]]


def _table_examples():
    """(example code, doc line) for each code span in a table column headed `example`."""
    out, col = [], None
    for n, line in enumerate(TEXT.splitlines(), 1):
        if not line.startswith("|"):
            col = None
            continue
        cells = _cells(line)
        if col is None:
            col = cells.index("example") if "example" in cells else -1
        elif col >= 0 and not set(cells[col]) <= set("- "):
            out += [(code, n) for code in re.findall(r"`([^`]+)`", cells[col])]
    return out


def test_doc_has_examples():
    assert len(PROGRAMS) >= 10 and len(ERRORS) >= 8
    assert len(_table_examples()) >= 60


@pytest.mark.parametrize("src,line", PROGRAMS, ids=[f"line{l}" for _, l in PROGRAMS])
def test_program_parses(src, line):
    mod = parse(src, f"tvmscript.md:{line}")
    assert len(mod) >= 1


@pytest.mark.parametrize("src,line", ERRORS, ids=[f"line{l}" for _, l in ERRORS])
def test_error_example(src, line):
    m = re.match(r"# error: (\d+):(\d+): (.+)\n", src)
    assert m, f"tvmscript.md:{line}: an error example starts with '# error: LINE:COL: message'"
    with pytest.raises(TIRParseError) as e:
        parse(src, "doc.tir")
    assert (e.value.loc.line, e.value.loc.col) == (int(m[1]), int(m[2]))
    assert e.value.message.startswith(m[3]), e.value.message


def test_error_table_matches_examples():
    """Each error example's message is quoted in the 'Not supported' table."""
    table = TEXT.split("## Not supported")[1]
    for src, line in ERRORS:
        msg = re.match(r"# error: \d+:\d+: (.+)\n", src)[1]
        assert msg in table.replace("\\|", "|"), f"tvmscript.md:{line}: {msg!r} not in the table"


@pytest.mark.parametrize("code,line", _table_examples(), ids=lambda x: str(x))
def test_table_example_is_in_a_program(code, line):
    assert any(code in src for src, _ in PROGRAMS), (
        f"tvmscript.md:{line}: example {code!r} is in no tvmscript program of the doc"
    )


@pytest.mark.parametrize("name", sorted(intrinsics.all_names()))
def test_every_intrinsic_is_documented(name):
    assert re.search(rf"[`.]{re.escape(name)}(?![\w.])", SUPPORTED), (
        f"T.{name} is accepted by the front end but not in docs/tvmscript.md"
    )


def test_documented_names_are_known():
    """Every `T.name` the supported part mentions is one the front end dispatches."""
    known = intrinsics.all_names()
    for name in set(re.findall(r"(?<![\w.])T\.([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)", SUPPORTED)):
        assert name in known or is_dtype(name), (
            f"docs/tvmscript.md names T.{name}, which the front end rejects"
        )


# docs/dialect.md: each ```python tvmscript program is followed by a ```mlir excerpt of its output.
DIALECT = (DOC.parent / "dialect.md").read_text()
PAIRS = re.findall(r"^```python tvmscript\n(.*?)^```\n```mlir\n(.*?)^```$", DIALECT, re.M | re.S)


def test_dialect_doc_has_examples():
    assert len(PAIRS) >= 4
    assert len(PAIRS) == DIALECT.count("```python tvmscript")


@pytest.mark.parametrize("src,excerpt", PAIRS, ids=[f"example{i}" for i in range(len(PAIRS))])
def test_dialect_example_is_real_output(src, excerpt):
    """Every line shown is a line of `tir-mlir parse --emit mlir` output, in the same order."""
    out = [line.strip() for line in parse(src).mlir().splitlines()]
    pos = 0
    for line in excerpt.strip().splitlines():
        assert line.strip() in out[pos:], f"not in the output (in order): {line.strip()!r}"
        pos = out.index(line.strip(), pos) + 1
