"""The Schedule methods' docstrings: parameters, returns and an example, and every example
runs as written: `Before:` parsed, the `With sch = tir.Schedule(main)` code applied (its own
asserts checked), the result printed exactly as `After:` shows it (which parses)."""

import inspect
import re

import pytest

import tir_mlir

DOCUMENTED = [
    "get_block",
    "get_loops",
    "get_child_blocks",
    "get_producers",
    "get_consumers",
    "parallel",
    "vectorize",
    "unroll",
    "bind",
    "annotate",
    "unannotate",
    "storage_align",
    "rfactor",
    "decompose_reduction",
    "blockize",
    "tensorize",
]


def _examples():
    for name, member in inspect.getmembers(tir_mlir.Schedule, callable):
        doc = inspect.getdoc(member) or ""
        if not name.startswith("_") and "\nExamples\n--------\n" in doc:
            yield name, doc


def _blocks(doc):
    """(label, code) of every ```python block of the Examples section."""
    examples = doc.split("\nExamples\n--------\n", 1)[1]
    return re.findall(r"^([^\n]*):\n\n```python\n(.*?)^```$", examples, re.MULTILINE | re.DOTALL)


@pytest.mark.parametrize("name", DOCUMENTED)
def test_docstring_has_parameters_returns_and_an_example(name):
    doc = inspect.getdoc(getattr(tir_mlir.Schedule, name))
    for section in ("Parameters\n----------\n", "Returns\n-------\n", "Examples\n--------\n"):
        assert section in doc, f"{name}: no {section.splitlines()[0]}"
    params = list(inspect.signature(getattr(tir_mlir.Schedule, name)).parameters)[1:]
    described = re.findall(r"^(\w+) : ", doc.split("Returns\n")[0], re.MULTILINE)
    assert described == params


EXAMPLES = dict(_examples())


def test_every_listed_method_has_a_checked_example():
    assert set(DOCUMENTED) <= set(EXAMPLES)


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_example_runs_as_written(name):
    blocks = dict(_blocks(EXAMPLES[name]))
    before = blocks.get("Before") or blocks["On"]
    sch = tir_mlir.Schedule(tir_mlir.parse(before))
    exec(blocks["With `sch = tir.Schedule(main)`"], {"sch": sch, "tir": tir_mlir.tir})  # noqa: S102
    if "After" in blocks:
        assert sch.mod.script().split("\n", 2)[2].rstrip() == blocks["After"].rstrip()
        tir_mlir.parse(blocks["After"])
