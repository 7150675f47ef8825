"""What `tir-mlir tune` leaves in its work directory besides the database:
`best_schedule.py` (the best trace as a schedule script `tir-mlir schedule --transform`
applies) and `tuning_curve.png` (every trial and the best so far, over trials and over wall
time, against the unscheduled program's time)."""

import json
import os
import platform
from pathlib import Path
from typing import Optional

import numpy as np


def schedule_script(
    record, source: str, func_name: str, flops: Optional[int], script_path: str = "best_schedule.py"
) -> str:
    """The record's trace, printed in TVM's syntax, as `def schedule(sch):`. `script_path`:
    where the script is written, as the command that applies it names it (from the folder
    tuning ran in, as `source` is)."""
    trace_lines = str(record.trace).splitlines()
    body = [line for line in trace_lines if line.startswith("  ") and line != "  pass"]
    if not body:  # the empty trace: nothing tried beat the program as given
        body = ["  # the unscheduled program was the fastest: it is left unscheduled", "  pass"]
    speed = f"{record.mean_sec * 1e3:.4f} ms"
    if flops:
        speed += f", {flops / record.mean_sec / 1e9:.2f} GFLOP/s"
    return "\n".join(
        [
            (
                f"# The fastest schedule `tir-mlir tune` measured for {_line(func_name)} in "
                f"{_line(source)}"
            ),
            f"# on {_line(record.target)}: {speed}.",
            (
                f"# Apply it (from the folder tuning ran in): tir-mlir schedule {_line(source)} "
                f"--transform {_line(script_path)}"
            ),
            "def schedule(sch):",
            *body,
            "",
        ]
    )


def _line(text) -> str:
    """`text` for a comment line of the script: line breaks and every other control or
    non-ASCII character escaped (a record's target string is data; the script is run)."""
    return json.dumps(str(text))[1:-1]


def write_best_schedule(path, record, source, func_name, flops) -> None:
    tmp = Path(str(path) + ".tmp")
    tmp.write_text(schedule_script(record, source, func_name, flops, str(path)))
    tmp.replace(path)


def baseline_of(reference: Optional[str]) -> Optional[float]:
    """The unscheduled program's time (s) stored with the reference outputs, if any."""
    if reference is None:
        return None
    try:
        with np.load(reference) as ref:
            return float(ref["baseline_sec"]) if "baseline_sec" in ref else None
    except (OSError, ValueError):
        return None


def machine() -> str:
    """This machine, for the curve's title: its CPU model and core count."""
    model = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{model}, {os.cpu_count()} cores"


def plot_curve(
    path,
    records,
    flops: Optional[int],
    start: float,
    title: str = "",
    baseline: Optional[float] = None,
) -> Optional[str]:
    """Write `curve_figure` to `path` (PNG); returns a note instead when matplotlib is missing
    or nothing was measured."""
    if not any(r.is_valid for r in records):
        return "no valid measurement: no tuning curve drawn"
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "matplotlib is not installed (pip install 'tir-mlir[tune]'): no tuning curve drawn"
    fig = curve_figure(records, flops, start, title, baseline)
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return None


def curve_figure(
    records, flops: Optional[int], start: float, title: str = "", baseline: Optional[float] = None
):
    """Every trial (a dot; failures as red crosses along the bottom) and the best so far (a
    step line), over trials and over wall time since `start` (UNIX time), with the
    unscheduled program's time `baseline` (s) as a dashed line, from the records in commit
    order (all sessions of a resumed run); titled with `title` (the function and target) and
    the machine. Both axes start at 0."""
    import matplotlib.pyplot as plt

    def speed(sec):
        return flops / sec / 1e9 if flops else sec * 1e3

    trials, times, values, failed, best_line = [], [], [], [], []
    best = None
    for k, r in enumerate(records, 1):
        t = max(0.0, r.timestamp - start)
        if r.is_valid:
            trials.append(k)
            times.append(t)
            values.append(speed(r.mean_sec))
            if best is None or r.mean_sec < best:
                best = r.mean_sec
        else:
            failed.append((k, t))
        best_line.append((k, t, None if best is None else speed(best)))
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.4))
    label = "GFLOP/s" if flops else "time (ms)"
    for ax, column, xs, xlabel in (
        (axes[0], 0, trials, "trial"),
        (axes[1], 1, times, "wall time (s)"),
    ):
        ax.scatter(xs, values, s=12, alpha=0.55, label="trial")
        if failed:
            ax.scatter(
                [f[column] for f in failed],
                [0] * len(failed),
                marker="x",
                s=18,
                color="tab:red",
                label=f"failed ({len(failed)})",
            )
        steps = [(b[column], b[2]) for b in best_line if b[2] is not None]
        ax.step(
            [x for x, _ in steps],
            [y for _, y in steps],
            where="post",
            color="tab:green",
            label="best so far",
        )
        if baseline:
            ax.axhline(
                speed(baseline),
                linestyle="--",
                color="tab:gray",
                label=f"unscheduled ({speed(baseline):.3g})",
            )
        ax.set_xlabel(xlabel)
        ax.set_ylabel(label)
        ax.set_xlim(left=0)
        ax.set_ylim(bottom=0)
        ax.grid(True, alpha=0.3)
    axes[0].legend(loc="best", fontsize="small")
    fig.suptitle(f"{title}\n{machine()}" if title else machine(), fontsize="medium")
    fig.tight_layout()
    return fig
