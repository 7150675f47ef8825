"""The layers of tir_mlir import downward only (docs/design.md, "Layers").

Each module belongs to the layer of its longest matching prefix in LAYERS. An import from a
lower layer of a higher one, at module level or inside a function, is a violation: shared code
moves down (into tir_mlir/ir, tir_mlir/analysis or dialect/) instead.

A function-level import between tir_mlir modules is fine when it only defers loading (the CLI's
subcommands, optional CUDA and Dask support). One that hides an import cycle (the imported
module reaches the importing one through module-level imports) must be listed in CYCLE_DODGES
with the reason the two modules need each other; the test fails on an unlisted one and on a
listed one that no longer exists.
"""

import ast
import collections
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
# Installed package name -> folder (pyproject.toml's package-dir).
PACKAGES = {
    "tir_mlir": ROOT / "tir_mlir",
    "tir_mlir.dialect": ROOT / "dialect",
    "tir_mlir.grammar": ROOT / "grammar",
    "tir_mlir.passes": ROOT / "passes",
}

# Lowest first. The printer reads the IR only, so it sits below the frontend (whose IRModule
# prints itself).
LAYERS = [
    (
        "ir",
        [
            "tir_mlir.errors",
            "tir_mlir.context",
            "tir_mlir.dtypes",
            "tir_mlir.diagnostics",
            "tir_mlir.suggest",
            "tir_mlir.dialect",
            "tir_mlir.grammar",
            "tir_mlir.ir",
            "tir_mlir.analysis",
            "tir_mlir.transforms",
        ],
    ),
    ("printer", ["tir_mlir.printer", "tir_mlir.show"]),
    ("frontend", ["tir_mlir.frontend", "tir_mlir.script", "tir_mlir.module"]),
    ("schedule", ["tir_mlir.passes.schedule", "tir_mlir.schedule", "tir_mlir.intrinsics"]),
    ("lowering", ["tir_mlir.passes.lowering", "tir_mlir.passes"]),
    ("runtime", ["tir_mlir.runtime", "tir_mlir.interpreter", "tir_mlir.te"]),
    ("tuner", ["tir_mlir.meta_schedule"]),
    ("cli", ["tir_mlir.cli", "tir_mlir.compat", "tir_mlir"]),
]
# `from tir_mlir import X` of the names the package root re-exports from low layers.
ROOT_EXPORTS = {
    "TIRError": "tir_mlir.errors",
    "TIRParseError": "tir_mlir.errors",
    "ScheduleError": "tir_mlir.errors",
    "BuildError": "tir_mlir.errors",
    "IRModule": "tir_mlir.module",
}

# (importing module, imported module) -> why they need each other.
CYCLE_DODGES = {
    (
        "tir_mlir.analysis.structure",
        "tir_mlir.analysis.affine_binding",
    ): "check_affine_bindings is the affine-binding analysis, which walks loops with structure",
    (
        "tir_mlir.analysis.structure",
        "tir_mlir.analysis.buffer_util",
    ): "rewrite_binding_uses emits index ops with buffer_util, which erases through structure",
    (
        "tir_mlir.dialect.ops",
        "tir_mlir.ir.index_dtypes",
    ): "Block.create infers binding dtypes from the views index_dtypes reads",
    (
        "tir_mlir.frontend.extern_calls",
        "tir_mlir.frontend.exprs",
    ): "the expression builder dispatches T.call_extern to extern_calls, which builds operands",
    (
        "tir_mlir.frontend.parser",
        "tir_mlir.script.pyfile",
    ): "parse_file of a .py file runs the decorators, which call back into the parser",
    (
        "tir_mlir.meta_schedule.database.record",
        "tir_mlir.meta_schedule.database.json_database",
    ): "TuningRecord.as_json is the JSON database's record form; the database holds records",
    (
        "tir_mlir.meta_schedule.measure_callback.measure_callback",
        "tir_mlir.meta_schedule.measure_callback.add_to_database",
    ): "MeasureCallback.create builds the built-in callbacks, which subclass MeasureCallback",
    (
        "tir_mlir.meta_schedule.measure_callback.measure_callback",
        "tir_mlir.meta_schedule.measure_callback.remove_build_artifact",
    ): "MeasureCallback.create builds the built-in callbacks, which subclass MeasureCallback",
    (
        "tir_mlir.meta_schedule.measure_callback.measure_callback",
        "tir_mlir.meta_schedule.measure_callback.update_cost_model",
    ): "MeasureCallback.create builds the built-in callbacks, which subclass MeasureCallback",
    (
        "tir_mlir.meta_schedule.search_strategy.replay_jobs",
        "tir_mlir.meta_schedule.search_strategy.search_strategy",
    ): "the strategies run replay jobs, whose results are the strategies' MeasureCandidates",
    (
        "tir_mlir.meta_schedule.space_generator.space_generator",
        "tir_mlir.meta_schedule.space_generator.post_order_apply",
    ): "generate_design_space defaults to PostOrderApply, a SpaceGenerator subclass",
    (
        "tir_mlir.printer.extern_calls",
        "tir_mlir.printer.expr",
    ): "the expression printer prints a tir.extern through extern_calls, which prints operands",
    (
        "tir_mlir.runtime.build",
        "tir_mlir.runtime.cuda",
    ): "a CUDA build uses the CUDA JIT, which builds its host code with build",
    (
        "tir_mlir.runtime.cuda_library",
        "tir_mlir.runtime.cuda",
    ): "CUDA modules export through cuda_library; the driver is loaded only when one runs",
    (
        "tir_mlir.runtime.cuda_timer",
        "tir_mlir.runtime.cuda",
    ): "the CUDA module times kernels with cuda_timer, which calls its driver",
    (
        "tir_mlir.schedule.trace",
        "tir_mlir.schedule.schedule",
    ): "a Schedule records into a Trace; a Trace replays onto a Schedule",
    (
        "tir_mlir.schedule.trace",
        "tir_mlir.schedule.tvm_trace",
    ): "Trace reads TVM's JSON form, which converts to and from Traces",
    (
        "tir_mlir.script.captures",
        "tir_mlir.script.macro",
    ): "macros capture their environment through captures",
    (
        "tir_mlir.script.meta_var",
        "tir_mlir.script.pyfile",
    ): "meta_var evaluates with pyfile's constants; pyfile binds meta_vars",
}


def _modules():
    for package, folder in PACKAGES.items():
        for path in sorted(folder.rglob("*.py")):
            parts = [p for p in path.relative_to(folder).with_suffix("").parts if p != "__init__"]
            if package == "tir_mlir" and parts and f"tir_mlir.{parts[0]}" in PACKAGES:
                continue
            yield ".".join([package, *parts]), path


MODULES = dict(_modules())


def _layer(module: str):
    """(layer index, matching prefix) of a module."""
    best = None
    for index, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and (
                best is None or len(prefix) > len(best[1])
            ):
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
    for module, path in MODULES.items():
        here, here_prefix = _layer(module)
        for target in _imports(ast.parse(path.read_text())):
            if target.split(".")[0] != "tir_mlir":
                continue
            there, there_prefix = _layer(target)
            if there > here:
                found[(here_prefix, there_prefix)] += 1
    return found


def _resolve(target: str):
    """The module an import names (`from a.b import c` names a.b.c when that is a module)."""
    while target not in MODULES and "." in target:
        target = target.rsplit(".", 1)[0]
    return target if target in MODULES else None


def _import_graph():
    """(module-level imports {module: {module}}, function-level [(module, module, line)])
    between tir_mlir modules."""
    top, inner = collections.defaultdict(set), []
    for module, path in MODULES.items():
        tree = ast.parse(path.read_text())
        in_function = {
            id(n)
            for f in ast.walk(tree)
            if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
            for n in ast.walk(f)
        }
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            else:
                continue
            for target in {_resolve(n) for n in names if n.startswith("tir_mlir")} - {None}:
                if target == module:
                    continue
                if id(node) in in_function:
                    inner.append((module, target, node.lineno))
                else:
                    top[module].add(target)
    # The root package's imports are its public surface, loaded before anything else.
    top.pop("tir_mlir", None)
    return top, inner


def _reaches(top, start: str) -> set:
    seen, stack = set(), [start]
    while stack:
        for nxt in top.get(stack.pop(), ()):
            if nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
    return seen


def cycle_dodges() -> dict:
    """(module, imported module) -> lines, for each function-level import whose target
    imports the importing module back (a package importing its own submodule only defers)."""
    top, inner = _import_graph()
    found = collections.defaultdict(list)
    for module, target, line in inner:
        if not target.startswith(module + ".") and module in _reaches(top, target):
            found[(module, target)].append(line)
    return dict(found)


def test_every_module_has_a_layer():
    for module in MODULES:
        _layer(module)


def test_no_upward_imports():
    found = upward_imports()
    assert not found, (
        "imports from a lower layer of a higher one (move the shared code down, "
        f"into tir_mlir/ir, tir_mlir/analysis or dialect/): {dict(found)}"
    )


def test_function_level_imports_do_not_hide_cycles():
    found = cycle_dodges()
    new = {k: v for k, v in found.items() if k not in CYCLE_DODGES}
    assert not new, (
        "function-level imports that hide an import cycle (move the shared code "
        f"into a module both can import, or list it with the reason): {new}"
    )
    stale = set(CYCLE_DODGES) - set(found)
    assert not stale, f"listed in CYCLE_DODGES but no longer there: {stale}"


def test_the_checks_see_what_they_check():
    """The graph finds the imports the checks rely on (a broken walk would pass vacuously)."""
    top, inner = _import_graph()
    assert "tir_mlir.analysis.structure" in top["tir_mlir.analysis.buffer_util"]
    assert ("tir_mlir.schedule.trace", "tir_mlir.schedule.schedule") in {
        (m, t) for m, t, _ in inner
    }
    assert _layer("tir_mlir.passes.schedule.split")[0] < _layer("tir_mlir.runtime.build")[0]
