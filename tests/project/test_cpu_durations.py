"""`pytest --cpu-durations=FILE` (tests/support/cpu_durations.py) counts a test's own CPU time
and that of the children it waited for, dearest test first."""

from cpu_durations import CpuDurations

pytest_plugins = ["pytester"]

INNER = """
import subprocess
import sys


def test_child():
    subprocess.run([sys.executable, "-c", "sum(range(10**7))"], check=True)


def test_own():
    sum(range(10**7))


def test_idle():
    pass
"""


def test_children_and_own_cpu_are_counted(pytester, tmp_path):
    pytester.makepyfile(test_inner=INNER)
    out = tmp_path / "cpu.tsv"
    pytester.runpytest_inprocess(
        "-p", "no:randomly", plugins=[CpuDurations(str(out))]
    ).assert_outcomes(passed=3)
    rows = [line.split("\t") for line in out.read_text().splitlines()]
    by_name = {r[3].split("::")[1]: (float(r[0]), float(r[2])) for r in rows}
    assert set(by_name) == {"test_child", "test_own", "test_idle"}
    assert by_name["test_child"][1] > 0.1  # the child's CPU, counted as the test's
    assert by_name["test_own"][0] > 0.1 and by_name["test_own"][1] < 0.05
    assert by_name["test_idle"][0] < 0.05
    assert [float(r[0]) for r in rows] == sorted((float(r[0]) for r in rows), reverse=True)
