"""compile_tir: the best schedule a database holds for a module (TVM 0.21's
`ms.tir_integration.compile_tir`, which also returns a Schedule: build its `.mod`)."""

from typing import Optional

from tir_mlir.meta_schedule.extracted_task import task_module
from tir_mlir.meta_schedule.tune import function_modules
from tir_mlir.module import IRModule
from tir_mlir.schedule.schedule import Schedule


def compile_tir(database, mod: IRModule, target) -> Optional[Schedule]:
    """`mod` scheduled by the best measured trace of each of its functions (a function with
    no record stays unscheduled); None when the database knows none of them. A function is
    looked up as tune_tir stores it (its trace replayed on `mod`), else as an extracted task
    (`extract_tasks`: alone, as `main`): then the task's program, scheduled by the record,
    takes the function's place under its name (an identical function's records name the
    blocks and caches of the function that was tuned), and the returned schedule starts from
    the assembled module."""
    from tir_mlir.meta_schedule.target import Target

    target = str(Target(target))
    sch, found, tasks = Schedule(mod), False, {}
    for name, task_mod in function_modules(mod):
        best = database.query_tuning_record(task_mod, target, name)
        if best is not None:
            best.trace.apply_to_schedule(sch, remove_postproc=False)
            found = True
            continue
        best = database.query_tuning_record(task_module(mod, name), target, "main")
        if best is not None and best.workload.mod is not None:
            tuned = Schedule(best.workload.mod)
            best.trace.apply_to_schedule(tuned, remove_postproc=False)
            tasks[name] = tuned.mod
    if tasks:
        return Schedule(
            IRModule(
                {
                    name: tasks[name]["main"] if name in tasks else sch.mod[name]
                    for name in sch.mod.functions
                }
            )
        )
    return sch if found else None
