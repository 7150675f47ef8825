"""Meta schedule: TVM 0.21's auto-tuner (`import tir_mlir.meta_schedule as ms`).

A schedule with random choices (sampling instructions) is a design space; schedule rules
build it block by block (`space_generator.PostOrderApply`), a search strategy explores it
guided by a cost model, candidates are built and measured (`builder`, `runner`), and the
best traces land in a `database`; `tune_tir` drives it all and `tir_integration.compile_tir`
builds the best schedule found. Submodules load on first use.
"""

import importlib

_SUBMODULES = (
    "arg_info",
    "builder",
    "cost_model",
    "database",
    "feature_extractor",
    "measure_callback",
    "mutator",
    "postproc",
    "runner",
    "schedule_rule",
    "search_strategy",
    "space_generator",
    "task_scheduler",
    "tir_integration",
    "tune",
    "tune_context",
    "target",
    "utils",
)
_NAMES = {
    "tune_tir": "tune",
    "TuneContext": "tune_context",
    "generate_design_space": "space_generator",
    "derived_object": "utils",
    "extract_tasks": "extracted_task",
    "ExtractedTask": "extracted_task",
    "tune_tasks": "task_tuning",
    "extracted_tasks_to_tune_contexts": "task_tuning",
    "replay_space_point": "space_point",
}

__all__ = [*_SUBMODULES, *_NAMES]


def __getattr__(name):
    if name in _SUBMODULES:
        return importlib.import_module(f"{__name__}.{name}")
    if name in _NAMES:
        return getattr(importlib.import_module(f"{__name__}.{_NAMES[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
