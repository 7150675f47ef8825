"""Record TVM 0.21's result of every sweep step (sweep_steps.py) on every program of the
shared symbolic workload into sweep_goldens.json: {"<program> <step>": body text, or null
when TVM refuses it}. Run from the repository root:
python tests/data/symbolic/record_sweep_goldens.py"""
import json
import pathlib
import sys

import tvm

HERE = pathlib.Path(__file__).parent
sys.path.insert(0, str(HERE))
from sweep_steps import block_names, body, steps  # noqa: E402


def main():
    out = {}
    for path in sorted(HERE.glob("*.tir")):
        src = path.read_text()
        func = tvm.script.from_source(src)
        if isinstance(func, tvm.IRModule):
            func = func[func.get_global_vars()[0]]
        for name, fn in steps(block_names(src)):
            sch = tvm.tir.Schedule(func)
            try:
                fn(sch)
                out[f"{path.stem} {name}"] = body(sch.mod["main"].script())
            except Exception:          # noqa: BLE001 - any refusal of TVM's
                out[f"{path.stem} {name}"] = None
    (HERE / "sweep_goldens.json").write_text(json.dumps(out, indent=0, sort_keys=True) + "\n")
    print(f"{len(out)} steps, {sum(v is not None for v in out.values())} accepted by TVM")


if __name__ == "__main__":
    main()
