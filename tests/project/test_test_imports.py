"""Test modules do not import each other: what two test files share (programs, schedules,
checks) lives in tests/support/, one module per idea, so that collecting or changing one test
file never runs or breaks another. A module may import itself (a child process reaching a
helper by the module's name)."""

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parent.parent
SKIP = {TESTS / "data", TESTS / "golden"}


def _python_files():
    for path in sorted(TESTS.rglob("*.py")):
        if not any(folder in path.parents for folder in SKIP):
            yield path


def _imported(tree: ast.Module):
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            yield node.lineno, node.module


def test_no_test_module_imports_another():
    found = []
    for path in _python_files():
        for line, module in _imported(ast.parse(path.read_text(), str(path))):
            top = module.split(".")[0]
            if (top.startswith("test_") or top == "tests") and top != path.stem:
                found.append(f"{path.relative_to(TESTS.parent)}:{line}: imports {module}")
    assert not found, "move what is shared into tests/support/:\n" + "\n".join(found)


def test_the_check_sees_an_import_of_a_test_module():
    tree = ast.parse("def f():\n    from test_other import X\nimport tests.x\n")
    assert sorted(m for _, m in _imported(tree)) == ["test_other", "tests.x"]
