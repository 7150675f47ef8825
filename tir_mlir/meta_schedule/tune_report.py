"""What `tir-mlir tune` leaves in its work directory besides the database:
`best_schedule.py` (the best trace as a schedule script `tir-mlir schedule --transform`
applies) and `tuning_curve.png` (best GFLOP/s over trials and over wall time)."""
import json
from pathlib import Path
from typing import Optional


def schedule_script(record, source: str, func_name: str, flops: Optional[int]) -> str:
    """The record's trace, printed in TVM's syntax, as `def schedule(sch):`."""
    trace_lines = str(record.trace).splitlines()
    body = [line for line in trace_lines if line.startswith("  ")] or ["  pass"]
    speed = f"{record.mean_sec * 1e3:.4f} ms"
    if flops:
        speed += f", {flops / record.mean_sec / 1e9:.2f} GFLOP/s"
    return "\n".join([
        (f"# The fastest schedule `tir-mlir tune` measured for {_line(func_name)} in "
         f"{_line(source)}"),
        f"# on {_line(record.target)}: {speed}.",
        f"# Apply it: tir-mlir schedule {_line(source)} --transform best_schedule.py",
        "def schedule(sch):",
        *body, ""])


def _line(text) -> str:
    """`text` for a comment line of the script: line breaks and every other control or
    non-ASCII character escaped (a record's target string is data; the script is run)."""
    return json.dumps(str(text))[1:-1]


def write_best_schedule(path, record, source, func_name, flops) -> None:
    tmp = Path(str(path) + ".tmp")
    tmp.write_text(schedule_script(record, source, func_name, flops))
    tmp.replace(path)


def plot_curve(path, records, flops: Optional[int], start: float) -> Optional[str]:
    """Draw the best speed so far over trials and over wall time since `start` (UNIX time),
    from the records in commit order (all sessions of a resumed run); returns a note instead
    when matplotlib is missing or nothing was measured."""
    points, best = [], None
    for k, r in enumerate(records, 1):
        if r.is_valid and (best is None or r.mean_sec < best):
            best = r.mean_sec
        if best is not None:
            points.append((k, r.timestamp - start,
                           flops / best / 1e9 if flops else best * 1e3))
    if not points:
        return "no valid measurement: no tuning curve drawn"
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return ("matplotlib is not installed (pip install 'tir-mlir[tune]'): "
                "no tuning curve drawn")
    n, t, y = zip(*points)
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for ax, x, label in zip(axes, (n, t), ("trials", "wall time (s)")):
        ax.step(x, y, where="post")
        ax.set_xlabel(label)
        ax.set_ylabel("best GFLOP/s" if flops else "best time (ms)")
        ax.grid(True, alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return None
