"""compile_tir: the best schedule a database holds for a module (TVM 0.21's
`ms.tir_integration.compile_tir`, which also returns a Schedule: build its `.mod`)."""
from typing import Optional

from tir_mlir.meta_schedule.tune import extract_tasks
from tir_mlir.module import IRModule
from tir_mlir.schedule.schedule import Schedule


def compile_tir(database, mod: IRModule, target) -> Optional[Schedule]:
    """`mod` scheduled by the best measured trace of each of its functions (a function with
    no record stays unscheduled); None when the database knows none of them."""
    from tir_mlir.meta_schedule.target import Target
    target = str(Target(target))
    sch, found = Schedule(mod), False
    for name, task_mod in extract_tasks(mod):
        best = database.query_tuning_record(task_mod, target, name)
        if best is None:
            continue
        best.trace.apply_to_schedule(sch, remove_postproc=False)
        found = True
    return sch if found else None
