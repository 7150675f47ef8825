"""The layers of tir_mlir import downward only (docs/design.md, "Layers").

Each module belongs to the layer of its longest matching prefix in LAYERS. An import from a
lower layer of a higher one (at module level or inside a function, where it would hide a
cycle) is a violation. The ones that exist are listed in KNOWN with their counts: this test
fails on any new one, and on a count that grew; when one is removed, lower its count here.
"""
import ast
import collections
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
# Installed package name -> folder (pyproject.toml's package-dir).
PACKAGES = {"tir_mlir": ROOT / "tir_mlir", "tir_mlir.dialect": ROOT / "dialect",
            "tir_mlir.grammar": ROOT / "grammar", "tir_mlir.passes": ROOT / "passes"}

LAYERS = [
    ("ir", ["tir_mlir.errors", "tir_mlir.context", "tir_mlir.dtypes", "tir_mlir.diagnostics",
            "tir_mlir.suggest", "tir_mlir.dialect", "tir_mlir.grammar", "tir_mlir.ir",
            "tir_mlir.analysis", "tir_mlir.transforms"]),
    ("frontend", ["tir_mlir.frontend", "tir_mlir.script", "tir_mlir.module"]),
    ("printer", ["tir_mlir.printer", "tir_mlir.show"]),
    ("schedule", ["tir_mlir.passes.schedule", "tir_mlir.schedule", "tir_mlir.intrinsics"]),
    ("lowering", ["tir_mlir.passes.lowering", "tir_mlir.passes"]),
    ("runtime", ["tir_mlir.runtime", "tir_mlir.interpreter", "tir_mlir.te"]),
    ("tuner", ["tir_mlir.meta_schedule"]),
    ("cli", ["tir_mlir.cli", "tir_mlir.compat", "tir_mlir"]),
]
# `from tir_mlir import X` of the names the package root re-exports from low layers.
ROOT_EXPORTS = {"TIRError": "tir_mlir.errors", "TIRParseError": "tir_mlir.errors",
                "ScheduleError": "tir_mlir.errors", "BuildError": "tir_mlir.errors",
                "IRModule": "tir_mlir.module"}

# (importing layer prefix, imported layer prefix) -> count, as the code stands.
KNOWN = {
    ('tir_mlir.ir', 'tir_mlir.printer'): 1,
    ('tir_mlir.module', 'tir_mlir.printer'): 1,
    ('tir_mlir.module', 'tir_mlir.show'): 2,
    ('tir_mlir.passes.lowering', 'tir_mlir.runtime'): 1,
    ('tir_mlir.schedule', 'tir_mlir.passes.lowering'): 2,
}


def _modules():
    for package, folder in PACKAGES.items():
        for path in sorted(folder.rglob("*.py")):
            parts = [p for p in path.relative_to(folder).with_suffix("").parts if p != "__init__"]
            if package == "tir_mlir" and parts and f"tir_mlir.{parts[0]}" in PACKAGES:
                continue
            yield ".".join([package, *parts]), path


def _layer(module: str):
    """(layer index, matching prefix) of a module."""
    best = None
    for index, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and \
                    (best is None or len(prefix) > len(best[1])):
                best = (index, prefix)
    assert best is not None, module
    return best


def _imports(tree: ast.Module):
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module == "tir_mlir":
                yield from (ROOT_EXPORTS.get(a.name, f"tir_mlir.{a.name}") for a in node.names)
            else:
                yield node.module
        elif isinstance(node, ast.Import):
            yield from (a.name for a in node.names)


def upward_imports() -> collections.Counter:
    found = collections.Counter()
    for module, path in _modules():
        here, here_prefix = _layer(module)
        for target in _imports(ast.parse(path.read_text())):
            if target.split(".")[0] != "tir_mlir":
                continue
            there, there_prefix = _layer(target)
            if there > here:
                found[(here_prefix, there_prefix)] += 1
    return found


def test_every_module_has_a_layer():
    for module, _ in _modules():
        _layer(module)


def test_no_new_upward_imports():
    found = upward_imports()
    new = {k: v for k, v in found.items() if v > KNOWN.get(k, 0)}
    assert not new, ("imports from a lower layer of a higher one (move the shared code down, "
                     f"into tir_mlir/analysis or dialect/): {new}")
