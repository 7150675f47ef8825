"""Golden printed text for the programs in tests/data/programs: parse -> print.

Regenerate with `pytest tests/printer/test_golden.py --update-golden`, then review the diff by eye
(and with tests/differential/test_tvm_differential.py, which checks the text against TVM).
"""

from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent
PROGRAMS = sorted((ROOT / "data" / "programs").glob("*.tir"))
GOLDEN = ROOT / "golden"


@pytest.fixture(scope="module")
def parse():
    return pytest.importorskip("tir_mlir.frontend.parser").parse


@pytest.mark.parametrize("path", PROGRAMS, ids=lambda p: p.stem)
def test_golden(path, parse, request):
    text = parse(path.read_text()).script() + "\n"
    golden = GOLDEN / f"{path.stem}.tir"
    if request.config.getoption("--update-golden"):
        golden.write_text(text)
    assert golden.exists(), f"no golden file {golden}: run pytest with --update-golden"
    assert text == golden.read_text()


@pytest.mark.parametrize("path", PROGRAMS, ids=lambda p: p.stem)
def test_print_parse_print_is_a_fixed_point(path, parse):
    once = parse(path.read_text()).script()
    assert parse(once).script() == once
