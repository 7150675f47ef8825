"""`tir-mlir` command line: parse, schedule, lower, run, tune.

Errors from the library (TIRError) are printed as `FILE:LINE:COL: error: message` with exit
status 1 and no Python traceback.
"""
import contextlib
import os
import sys

import click

from tir_mlir.errors import SourceLoc, TIRError


class _Group(click.Group):
    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except TIRError as e:
            prefix = f"{e.loc}: " if e.loc else ""
            click.echo(f"{prefix}error: {e.message}", err=True)
            sys.exit(1)


@click.group(cls=_Group)
def main():
    """TVM's TensorIR on MLIR: parse, schedule, lower and run TVMScript programs."""


def _write(text: str, out):
    if out:
        with open(out, "w") as f:
            f.write(text)
    else:
        click.echo(text, nl=not text.endswith("\n"))


@main.command()
@click.argument("path", type=click.Path(exists=True, dir_okay=False))
@click.option("--emit", default="tir", show_default=True, type=click.Choice(["tir", "mlir"]),
              help="Print the program back as TVMScript, or as tir-dialect MLIR.")
@click.option("--debug-info", is_flag=True, help="With --emit mlir: print source locations.")
@click.option("-o", "out", type=click.Path(dir_okay=False), help="Output file (default: stdout).")
def parse(path, emit, debug_info, out):
    """Parse the TVMScript program PATH; print it as TVMScript or as MLIR."""
    from tir_mlir.frontend.parser import load
    mod = load(path)
    _write(mod.mlir(debug_info=debug_info) if emit == "mlir" else mod.script(), out)


def _schedule_script(path):
    """A function sch -> None from a user's schedule: a Python file defining `schedule(sch)`
    (executed as is: it is the user's own script), a trace saved as JSON (`--trace`), or a
    `tir_schedule` MLIR script (`--print-trace --trace-format mlir`)."""
    if str(path).endswith(".json"):
        from tir_mlir.schedule.trace import Trace
        with open(path) as f:
            trace = Trace.from_json(f.read())
        return trace.apply_to_schedule
    if str(path).endswith(".mlir"):
        from tir_mlir.schedule.mlir_script import trace_from_mlir
        with open(path) as f:
            return trace_from_mlir(f.read(), str(path)).apply_to_schedule
    import importlib.util
    spec = importlib.util.spec_from_file_location("tir_mlir_user_schedule", path)
    module = importlib.util.module_from_spec(spec)
    with _located_in_script(path):
        spec.loader.exec_module(module)
    if not callable(getattr(module, "schedule", None)):
        raise click.UsageError(f"{path} does not define a function `schedule(sch)`")
    return module.schedule


def _apply_schedule(mod, path):
    from tir_mlir.schedule.schedule import Schedule
    sch = Schedule(mod)
    script = _schedule_script(path)
    with _located_in_script(path):
        script(sch)
    return sch


@contextlib.contextmanager
def _located_in_script(path):
    """Report an error raised while running the user's schedule script at the script's line
    (the call that failed) instead of with a traceback."""
    try:
        yield
    except Exception as e:
        import traceback
        if isinstance(e, SyntaxError) and e.lineno:
            loc = SourceLoc(str(path), e.lineno, e.offset or 1)
            raise TIRError(f"SyntaxError: {e.msg}", loc) from None
        frames = [f for f in traceback.extract_tb(e.__traceback__)
                  if os.path.samefile(f.filename, path)] if os.path.exists(path) else []
        loc = SourceLoc(str(path), frames[-1].lineno, (frames[-1].colno or 0) + 1) if frames else None
        if isinstance(e, TIRError):
            raise type(e)(e.message, loc or e.loc) from None
        raise TIRError(f"{type(e).__name__}: {e}", loc) from None


def _transform_option(command):
    """`--transform S.py` for lower/run: schedule the program with S.py before the command."""
    def to_transform(ctx, param, value):
        return (lambda mod: _apply_schedule(mod, value).mod) if value else None
    return click.option("--transform", type=click.Path(exists=True, dir_okay=False),
                        callback=to_transform,
                        help="Schedule script (defines schedule(sch)) or trace JSON to apply "
                             "first.")(command)


@main.command()
@click.argument("path", type=click.Path(exists=True, dir_okay=False))
@click.option("--transform", "script", required=True, type=click.Path(exists=True, dir_okay=False),
              help="Python file defining schedule(sch), a trace JSON, or a tir_schedule "
                   ".mlir script to replay.")
@click.option("-o", "out", type=click.Path(dir_okay=False), help="Output file (default: stdout).")
@click.option("--print-trace", is_flag=True, help="Print the trace after the program.")
@click.option("--trace-format", default="python", show_default=True,
              type=click.Choice(["python", "json", "mlir"]),
              help="--print-trace as TVM's Python, JSON, or a tir_schedule MLIR script.")
@click.option("--trace", "trace_out", type=click.Path(dir_okay=False),
              help="Write the trace as JSON to this file.")
def schedule(path, script, out, print_trace, trace_format, trace_out):
    """Schedule PATH with a TVM-style schedule script and print the result as TVMScript."""
    import json
    sch = _apply_schedule(_load_program(path), script)
    _write(sch.mod.script(), out)
    if print_trace:
        if trace_format == "mlir":
            from tir_mlir.schedule.mlir_script import trace_to_mlir
            click.echo(trace_to_mlir(sch.trace), nl=False)
        else:
            click.echo(json.dumps(sch.trace.as_json(), indent=1) if trace_format == "json"
                       else str(sch.trace))
    if trace_out:
        with open(trace_out, "w") as f:
            json.dump(sch.trace.as_json(), f, indent=1)


def _load_program(path, transform=None):
    """The program in `path` (TVMScript, or tir-dialect MLIR for `.mlir`), then `transform`
    (a function IRModule -> IRModule, e.g. a schedule script) when given."""
    if str(path).endswith(".mlir"):
        from mlir import ir

        from tir_mlir.context import get_context
        from tir_mlir.module import IRModule
        with get_context():
            with open(path) as f:
                mod = IRModule(ir.Module.parse(f.read()))
    else:
        import tir_mlir
        mod = tir_mlir.load(path)
    return transform(mod) if transform else mod


@main.command()
@click.argument("path", type=click.Path(exists=True, dir_okay=False))
@click.option("--target", default="cpu", show_default=True, help="Lowering target.")
@click.option("--emit", default="llvm-ir", show_default=True,
              type=click.Choice(["tir", "affine", "scf", "gpu", "gpu-binary", "ptx", "llvm-dialect",
                                 "llvm-ir", "asm"]),
              help="Stop after this stage and print the program there (gpu, gpu-binary, ptx: "
                   "--target cuda only).")
@click.option("--debug", is_flag=True, help="Insert bounds checks on every buffer access.")
@click.option("-o", "out", type=click.Path(dir_okay=False), help="Output file (default: stdout).")
@_transform_option
def lower(path, target, emit, debug, out, transform=None):
    """Lower PATH to stage EMIT (tir -> affine -> scf -> llvm-dialect -> llvm-ir -> asm)."""
    from tir_mlir.passes.lowering.pipeline import emit_text
    mod = _load_program(path, transform)
    _write(emit_text(mod.module, emit, target, debug), out)


@main.command()
@click.argument("path", type=click.Path(exists=True, dir_okay=False))
@click.option("--func", "func_name", default=None, help="Function to run (default: the first).")
@click.option("--check", is_flag=True, help="Compare with the reference interpreter.")
@click.option("--bench", is_flag=True, help="Print the median time (and GFLOP/s).")
@click.option("--seed", default=0, show_default=True, help="Seed of the random inputs.")
@click.option("--debug", is_flag=True, help="Bounds-check every buffer access.")
@_transform_option
def run(path, func_name, check, bench, seed, debug, transform=None):
    """Build PATH, run a function on random inputs; optionally check it and time it."""
    from tir_mlir.runtime.run_program import run_program
    mod = _load_program(path, transform)
    for line in run_program(mod, func_name, check=check, bench=bench, seed=seed, debug=debug):
        click.echo(line)


@main.command()
@click.argument("path", type=click.Path(exists=True, dir_okay=False))
@click.option("--target", default="llvm", show_default=True, help="Target to tune for.")
@click.option("--trials", default=256, show_default=True, help="Candidates to measure in all "
              "(those already in the database count with --resume).")
@click.option("--work-dir", required=True, type=click.Path(file_okay=False),
              help="Holds database.sqlite, best_schedule.py and tuning_curve.png.")
@click.option("--func", "func_name", default=None, help="Function to tune (default: main or "
              "the only one).")
@click.option("--resume", is_flag=True, help="Continue the tuning recorded in --work-dir.")
@click.option("--runner", default="local", show_default=True, type=click.Choice(["local", "dask"]),
              help="Measure here, or on a Dask cluster (--address).")
@click.option("--address", default=None, help="The Dask scheduler (tcp://HOST:8786).")
@click.option("--check/--no-check", default=True, show_default=True,
              help="Reject candidates whose outputs differ from the unscheduled program's.")
@click.option("--timeout", default=30.0, show_default=True,
              help="Seconds one candidate may take to build, and to run.")
@click.option("--seed", default=None, type=int, help="Seed of the search.")
@click.option("--strategy", default="evolutionary", show_default=True,
              type=click.Choice(["evolutionary", "replay-trace", "replay-func"]),
              help="Search strategy (replay-*: random sampling of the design space).")
@click.option("--trials-per-iter", default=64, show_default=True,
              help="Candidates per round: built, measured and committed together.")
def tune(path, target, trials, work_dir, func_name, resume, runner, address, check, timeout,
         seed, strategy, trials_per_iter):
    """Tune a function of PATH: search schedules, measure them, keep the fastest."""
    from tir_mlir.meta_schedule.tune_command import tune as run_tune
    run_tune(path, _load_program(path), target, trials, work_dir, func_name, resume, runner,
             address, check, timeout, seed, strategy, trials_per_iter, echo=click.echo)


if __name__ == "__main__":
    main()
