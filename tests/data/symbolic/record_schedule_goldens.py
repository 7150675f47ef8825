"""Record TVM 0.21's printed result of each case of schedule_cases.py into golden/<case>.py
(run from the repository root: python tests/data/symbolic/record_schedule_goldens.py)."""
import importlib.util
import pathlib
import sys

import tvm

HERE = pathlib.Path(__file__).parent


def load(name: str):
    spec = importlib.util.spec_from_file_location(name, HERE / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def tvm_result(program, fn) -> str:
    sch = tvm.tir.Schedule(program)
    fn(sch)
    return sch.mod["main"].script()


def main():
    programs, cases = load("schedule_programs"), load("schedule_cases").CASES
    out = HERE / "golden"
    out.mkdir(exist_ok=True)
    for case, (prog, fn) in cases.items():
        (out / f"{case}.py").write_text(tvm_result(getattr(programs, prog), fn) + "\n")
        print(case, file=sys.stderr)


if __name__ == "__main__":
    main()
