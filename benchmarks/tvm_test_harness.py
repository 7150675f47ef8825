"""What tvm_schedule_tests.py and tvm_ms_tests.py share: TVM's own unit tests run twice under
pytest in a subprocess ("tvm": as written, "adapter": TVM's pieces replaced by ours), the
plugin of each writing one JSON line per test, and the table of how many of the tests that
pass under TVM pass adapted."""

import json
import os
import subprocess
import sys
import tempfile

MODE = "TIR_MLIR_ADAPTER_MODE"  # "tvm" | "adapter": set in the pytest subprocess
OUT = "TIR_MLIR_ADAPTER_OUT"  # where the subprocess writes its results (JSON lines)


def files_in(root: str, prefixes) -> list:
    """The test files of folder `root` whose names start with one of `prefixes`, or [root]."""
    if not os.path.isdir(root):
        return [root]
    return sorted(
        os.path.join(root, f)
        for f in os.listdir(root)
        if f.startswith(tuple(prefixes)) and f.endswith(".py")
    )


def record(report, **extra) -> None:
    """The plugin's pytest_runtest_logreport: a test's outcome (and `extra`) as a JSON line."""
    if report.when == "call" or (report.when == "setup" and not report.passed):
        line = {"test": report.nodeid, "passed": report.passed, **extra, "why": why(report)}
        with open(os.environ[OUT], "a") as f:
            f.write(json.dumps(line) + "\n")


def why(report) -> str:
    """The last line of a failure's report that names an error (what --show prints)."""
    if report.passed:
        return ""
    lines = [ln for ln in report.longreprtext.splitlines() if ln.startswith("E ")]
    return lines[0][1:].strip()[:300] if lines else report.longreprtext.splitlines()[-1:][0]


def run(plugin: str, mode: str, files, extra, pytest_args=()) -> dict:
    """Run `files` under pytest with the `plugin` module in `mode`: "file.py::test" -> its
    JSON line (keys without the folder, so results of one folder compare with another's)."""
    with tempfile.NamedTemporaryFile("r", suffix=".jsonl") as out:
        env = dict(os.environ, **{MODE: mode, OUT: out.name})
        env["PYTHONPATH"] = os.pathsep.join(
            [os.path.dirname(os.path.abspath(__file__)), env.get("PYTHONPATH", "")]
        )
        subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", plugin, "-p", "no:cacheprovider"]
            + [*pytest_args, *extra, *files],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        records = map(json.loads, out.read().splitlines())
        return {
            os.path.basename(r["test"].split("::")[0]) + "::" + r["test"].split("::", 1)[1]: r
            for r in records
        }


def print_table(files, theirs: dict, adapted: dict, show: bool, counts=lambda r: r["passed"]):
    """Per file, the tests of `theirs` that `counts` (they pass under TVM) and how many of them
    pass adapted; `show`: each failing one with its error line."""
    width = max([len("total")] + [len(os.path.basename(f)) for f in files]) + 2
    total = passed = 0
    print(f"{'file':<{width}} {'TVM passes':>10} {'adapted':>8}")
    for f in files:
        name = os.path.basename(f)
        base = [t for t, r in theirs.items() if t.split("::")[0] == name and counts(r)]
        ok = [t for t in base if adapted.get(t, {}).get("passed")]
        total, passed = total + len(base), passed + len(ok)
        print(f"{name:<{width}} {len(base):>10} {len(ok):>8}")
        if show:
            for t in base:
                if t not in ok:
                    why = adapted.get(t, {}).get("why", "not run")
                    print(f"    FAIL {t.split('::', 1)[1]}: {why}")
    pct = 100.0 * passed / total if total else 0.0
    print(f"{'total':<{width}} {total:>10} {passed:>8}  ({pct:.1f}%)")
