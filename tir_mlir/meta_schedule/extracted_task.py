"""Task extraction (TVM 0.21's `ms.relax_integration.extract_tasks` / `ExtractedTask`, here
over an IRModule of PrimFuncs, e.g. a model imported function by function): one task per
distinct function, identical functions (the same program under another name) de-duplicated
by structural hash, the task's weight the number of functions it stands for (each is called
once by the model). Each task's module holds its function as `main`, as TVM's do, so records
of one function serve every function equal to it (`tir_integration.compile_tir`)."""

from collections.abc import Sequence

from tir_mlir.printer.equality import structural_hash
from tir_mlir.meta_schedule.target import Target
from tir_mlir.module import IRModule


class ExtractedTask:
    """`task_name` (the first function's name), `mod` (the function as `main`), `target`,
    `dispatched` ([mod]), `weight`; tir-mlir adds `func_names`, the functions it stands for."""

    def __init__(
        self,
        task_name: str,
        mod: IRModule,
        target,
        dispatched: Sequence[IRModule],
        weight: int,
        func_names: Sequence[str] = (),
    ):
        self.task_name, self.mod, self.target = task_name, mod, Target(target)
        self.dispatched, self.weight = list(dispatched), weight
        self.func_names = list(func_names)

    def __repr__(self):
        return f"ExtractedTask({self.task_name!r}, weight={self.weight})"


def task_module(mod: IRModule, name: str) -> IRModule:
    """Function `name` of `mod` alone, named `main` (what a task tunes and a database keys)."""
    return IRModule({"main": mod[name]})


def extract_tasks(mod: IRModule, target="llvm") -> list[ExtractedTask]:
    """The tasks of `mod`'s functions, in the order of their first function."""
    tasks: dict[str, ExtractedTask] = {}
    for name in mod.functions:
        tmod = task_module(mod, name)
        key = structural_hash(tmod)
        if key in tasks:
            tasks[key].weight += 1
            tasks[key].func_names.append(name)
        else:
            tasks[key] = ExtractedTask(name, tmod, target, [tmod], 1, [name])
    return list(tasks.values())
