"""`tir-mlir` command line: parse, schedule, lower, run, tune.

Conventions (mlir-opt's): an input PATH of `-` is stdin; errors are printed as
`FILE:LINE:COL: error: message` with the source line and a caret (coloured on a terminal,
plain when piped or NO_COLOR is set), exit status 1 and no Python traceback
(TIR_MLIR_TRACEBACK=1 shows one for internal errors). `--emit tir` is TVMScript and
`--emit mlir` the tir dialect in every subcommand.
"""

import contextlib
import os
import sys
import threading
import time
from typing import Callable

import click

import tir_mlir
from tir_mlir.errors import SourceLoc, TIRError

_SOURCES = {}  # input name -> text read by this command (for the caret display)
_INPUT = click.Path(exists=True, dir_okay=False, allow_dash=True)


def _fail(message, loc=None, notes=()):
    from tir_mlir.diagnostics import render, use_color

    click.echo(render(message, loc, _SOURCES, use_color(sys.stderr), notes=notes), err=True)
    sys.exit(1)


class _Group(click.Group):
    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except TIRError as e:
            _fail(e.message, e.loc, e.notes)
        except (click.exceptions.Exit, click.ClickException, click.exceptions.Abort):
            raise
        except OSError as e:
            _fail(f"{e.strerror or e}: {e.filename}" if e.filename else str(e))
        except RecursionError:
            _fail("the program is nested too deeply (RecursionError)")
        except MemoryError:
            _fail("out of memory: the program or its buffers are too large (MemoryError)")
        except Exception as e:  # noqa: BLE001 - the promise: no traceback, exit status 1
            if os.environ.get("TIR_MLIR_TRACEBACK"):
                raise
            _fail(
                f"internal error: {type(e).__name__}: {e} (set TIR_MLIR_TRACEBACK=1 for the "
                f"traceback, and please report it)"
            )


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(tir_mlir.__version__, "--version", prog_name="tir-mlir")
def main():
    """TVM's TensorIR on MLIR: parse, schedule, lower and run TVMScript programs.

    PATH may be `-` for stdin; `.mlir` files (and MLIR on stdin) are read as tir-dialect MLIR.
    """


def _write(text: str, out):
    if out:
        from pathlib import Path

        parent = Path(out).parent
        if not parent.is_dir():
            raise TIRError(f"cannot write {out}: directory {parent} does not exist")
        with open(out, "w") as f:
            f.write(text)
    else:
        click.echo(text, nl=not text.endswith("\n"))


def _read(path) -> str:
    """The text of input PATH (`-`: stdin), remembered for error display."""
    from tir_mlir.frontend.source import decode

    name = "<stdin>" if path == "-" else str(path)
    data = sys.stdin.buffer.read() if path == "-" else open(path, "rb").read()
    text = decode(data, name)
    _SOURCES[name] = text
    return text


@contextlib.contextmanager
def _progress(what: str):
    """Say on stderr what is running when it takes over a second (nothing otherwise)."""
    done = threading.Event()
    start = time.monotonic()

    def note():
        if not done.wait(1.0):
            click.echo(f"tir-mlir: {what}...", err=True)

    t = threading.Thread(target=note, daemon=True)
    t.start()
    try:
        yield
    finally:
        done.set()
        t.join()
        if time.monotonic() - start > 1.0:
            click.echo(f"tir-mlir: {what}: done in {time.monotonic() - start:.1f} s", err=True)


def _named(pairs, option, expected, convert: Callable[[str], object] = str):
    """NAME=VALUE pairs -> {NAME: convert(VALUE)}; a usage error names the bad one."""
    out = {}
    for p in pairs:
        name, sep, value = p.partition("=")
        try:
            if not (sep and name.strip() and value):
                raise ValueError
            out[name.strip()] = convert(value)
        except ValueError:
            raise click.UsageError(f"{option} {p}: expected {expected}") from None
    return out


def _number(text: str):
    try:
        return int(text)
    except ValueError:
        return float(text)


def _specialize_option(command):
    """`--specialize n=128` (repeatable): values of a program's symbolic vars."""
    return click.option(
        "--specialize",
        multiple=True,
        metavar="NAME=VALUE",
        callback=lambda ctx, param, pairs: _named(pairs, "--specialize", "NAME=NUMBER", _number),
        help="Value of a symbolic shape var or scalar parameter (`n = T.int32()`; repeatable).",
    )(command)


@main.command()
@click.argument("path", type=_INPUT)
@click.option(
    "--emit",
    default="tir",
    show_default=True,
    type=click.Choice(["tir", "mlir"]),
    help="Print the program back as TVMScript, or as tir-dialect MLIR.",
)
@click.option("--debug-info", is_flag=True, help="With --emit mlir: print source locations.")
@click.option("-o", "out", type=click.Path(dir_okay=False), help="Output file (default: stdout).")
@_specialize_option
def parse(path, emit, debug_info, out, specialize):
    """Parse the program PATH (TVMScript or .mlir); print it as TVMScript or as MLIR."""
    if str(path).endswith(".py") and emit != "mlir" and not specialize:
        from tir_mlir.script.pyfile import script_python  # every definition of the file

        _write(script_python(_read(path), str(path)), out)
        return
    mod = _load_program(path, specialize=specialize)
    _write(mod.mlir(debug_info=debug_info) if emit == "mlir" else mod.script(), out)


@main.command("import")
@click.argument("path", type=_INPUT)
@click.option(
    "--emit",
    default="tir",
    show_default=True,
    type=click.Choice(["tir", "mlir"]),
    help="Print the imported program as TVMScript, or as tir-dialect MLIR.",
)
@click.option("-o", "out", type=click.Path(dir_okay=False), help="Output file (default: stdout).")
def import_(path, emit, out):
    """Import PATH, MLIR of linalg ops (torch-mlir, IREE, StableHLO), as a TensorIR program."""
    from tir_mlir.frontend.linalg_import import from_linalg

    name = "<stdin>" if path == "-" else str(path)
    mod = from_linalg(_read(path), name)
    _write(mod.mlir() if emit == "mlir" else mod.script(), out)


def _schedule_script(path):
    """A function sch -> None from a user's schedule: a Python file defining `schedule(sch)`
    (executed as is: it is the user's own script), a trace saved as JSON (`--trace`), or a
    `tir_schedule` MLIR script (`--print-trace --trace-format mlir`)."""
    if str(path).endswith(".json"):
        from tir_mlir.schedule.trace import Trace

        with open(path, "rb") as f, _located_in_script(path):
            trace = Trace.from_json(f.read())
        return trace.apply_to_schedule
    if str(path).endswith(".mlir"):
        from tir_mlir.schedule.mlir_script import trace_from_mlir

        with open(path, "rb") as f, _located_in_script(path):
            return trace_from_mlir(f.read().decode("utf-8", "replace"), str(path)).apply_to_schedule
    if not str(path).endswith(".py"):
        raise click.UsageError(
            f"--transform {path}: expected a schedule script (.py, defining "
            f"schedule(sch)), a trace (.json) or a tir_schedule script "
            f"(.mlir)"
        )
    import importlib.util

    spec = importlib.util.spec_from_file_location("tir_mlir_user_schedule", path)
    if spec is None or spec.loader is None:
        raise click.UsageError(f"--transform {path}: cannot be loaded as a Python module")
    module = importlib.util.module_from_spec(spec)
    # `print(sch.trace)` writes `def apply_trace(sch: tir.Schedule)` under a commented-out
    # `# from tvm import tir`: with `tir` predefined the printed trace runs as it is
    from tir_mlir.compat import tir as tir_names

    setattr(module, "tir", tir_names)
    with _located_in_script(path):
        spec.loader.exec_module(module)
    for entry in ("schedule", "apply_trace"):
        if callable(getattr(module, entry, None)):
            return getattr(module, entry)
    raise click.UsageError(
        f"{path} does not define a function `schedule(sch)` (or "
        f"`apply_trace(sch)`, as `print(sch.trace)` writes it)"
    )


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
        frames = [f for f in traceback.extract_tb(e.__traceback__) if _same_file(f.filename, path)]
        loc = (
            SourceLoc(str(path), frames[-1].lineno or 1, (getattr(frames[-1], "colno", 0) or 0) + 1)
            if frames
            else None
        )
        if loc is None and str(path).endswith(".json"):
            loc = SourceLoc(str(path), 1, 1)  # a trace: name the file
        if isinstance(e, TIRError):
            raise type(e)(e.message, loc or e.loc, notes=e.notes) from None
        raise TIRError(f"{type(e).__name__}: {e}{_import_hint(e)}", loc) from None


def _same_file(name: str, path) -> bool:
    """Whether a traceback frame's file is `path` (frames of frozen or generated code, such
    as `<frozen importlib._bootstrap_external>`, name no file)."""
    try:
        return os.path.samefile(name, path)
    except OSError:
        return False


def _import_hint(e: Exception) -> str:
    """What to write instead of a TVM import that fails (a script ported from TVM)."""
    if isinstance(e, ImportError) and (e.name or "").split(".")[0] == "tvm":
        return (
            "; import tir_mlir's equivalents instead (`import tir_mlir as tvm`, "
            "`from tir_mlir import tir`, `from tir_mlir.script import tir as T`)"
        )
    return ""


def _transform_option(command):
    """`--transform S.py` for lower/run: schedule the program with S.py before the command."""

    def to_transform(ctx, param, value):
        return (lambda mod: _apply_schedule(mod, value).mod) if value else None

    return click.option(
        "--transform",
        type=click.Path(exists=True, dir_okay=False),
        callback=to_transform,
        help="Schedule script (defines schedule(sch)) or trace JSON to apply first.",
    )(command)


@main.command()
@click.argument("path", type=_INPUT)
@click.option(
    "--transform",
    "script",
    required=True,
    type=click.Path(exists=True, dir_okay=False),
    help="Python file defining schedule(sch), a trace JSON, or a tir_schedule "
    ".mlir script to replay.",
)
@click.option("-o", "out", type=click.Path(dir_okay=False), help="Output file (default: stdout).")
@click.option("--print-trace", is_flag=True, help="Print the trace after the program.")
@click.option(
    "--trace-format",
    default="python",
    show_default=True,
    type=click.Choice(["python", "json", "mlir"]),
    help="--print-trace as TVM's Python, JSON, or a tir_schedule MLIR script.",
)
@click.option(
    "--trace",
    "trace_out",
    type=click.Path(dir_okay=False),
    help="Write the trace as JSON to this file (replay it with --transform T.json).",
)
@_specialize_option
def schedule(path, script, out, print_trace, trace_format, trace_out, specialize):
    """Schedule PATH with a TVM-style schedule script and print the result as TVMScript
    (a symbolic program is scheduled at a probe size and printed symbolically, as TVM does)."""
    import json

    sch = _apply_schedule(_load_program(path, specialize=specialize), script)
    _write(sch.mod.script(), out)
    if print_trace:
        if trace_format == "mlir":
            from tir_mlir.schedule.mlir_script import trace_to_mlir

            click.echo(trace_to_mlir(sch.trace), nl=False)
        else:
            click.echo(
                json.dumps(sch.trace.as_json(), indent=1)
                if trace_format == "json"
                else str(sch.trace)
            )
    if trace_out:
        _write(json.dumps(sch.trace.as_json(), indent=1) + "\n", trace_out)


def _load_program(path, transform=None, specialize=None):
    """The program in `path` (TVMScript; the TVMScript definitions of a `.py` file; tir-dialect
    MLIR for `.mlir`): an IRModule, or a symbolic program (`n = T.int32()`) unless
    `specialize` binds its vars; then `transform` (a function module -> module, e.g. a schedule
    script) when given."""
    from tir_mlir.frontend.mlir_input import looks_like_mlir, parse_mlir
    from tir_mlir.frontend.parser import parse as parse_tvmscript

    text = _read(path)
    name = "<stdin>" if path == "-" else str(path)
    if str(path).endswith(".mlir") and _looks_like_linalg(text):
        from tir_mlir.frontend.linalg_import import from_linalg  # as `tir-mlir import`

        mod = from_linalg(text, name)
    elif str(path).endswith(".mlir") or (path == "-" and looks_like_mlir(text)):
        mod = parse_mlir(text, name)
    elif str(path).endswith(".py"):  # the decorated definitions only, never run
        from tir_mlir.script.pyfile import parse_python

        mod = parse_python(text, name)
    else:
        mod = parse_tvmscript(text, name)
    if specialize:
        try:
            mod = mod.specialize(specialize)
        except (KeyError, TypeError, ValueError) as e:
            raise click.UsageError(f"--specialize: {e.args[0]}") from None
    return transform(mod) if transform else mod


def _looks_like_linalg(text: str) -> bool:
    """Whether MLIR text is a linalg program to import rather than the `tir` dialect."""
    import re

    return (
        re.search(r"\b(linalg|tensor)\.[a-z_]+", text) is not None
        and re.search(r"\btir\.[a-z_]+", text) is None
    )


def _unbound(func_op) -> list:
    """The symbolic sizes and scalar parameters of a function (docs/symbolic.md)."""
    from tir_mlir.dialect.buffers import arg_attrs
    from tir_mlir.dialect.ops import str_attr

    return [
        str_attr(d, "tir.name", "?")
        for a, d in zip(func_op.regions[0].blocks[0].arguments, arg_attrs(func_op))
        if not str(a.type).startswith("memref")
    ]


def _concrete(mod):
    """`mod`, which must have concrete shapes to be run or tuned with generated inputs."""
    for f in mod.functions.values():
        names = _unbound(f)
        if names:
            loc = SourceLoc.of(f.location)
            raise TIRError(
                f"the program has symbolic shapes or scalar parameters "
                f"({', '.join(names)}): give their values with --specialize "
                f"NAME=VALUE",
                loc,
            )
    return mod


_GPU_STAGES = ("gpu", "gpu-binary", "ptx")


def _bounds_check_option(command):
    return click.option(
        "--bounds-check",
        "--debug",
        "bounds_check",
        is_flag=True,
        help="Check every buffer access (--debug is an alias).",
    )(command)


@main.command()
@click.argument("path", type=_INPUT)
@click.option("--target", default="cpu", show_default=True, help="Lowering target (cpu, cuda).")
@click.option(
    "--emit",
    default="llvm-ir",
    show_default=True,
    type=click.Choice(
        [
            "tir",
            "mlir",
            "affine",
            "scf",
            "gpu",
            "gpu-binary",
            "ptx",
            "llvm-dialect",
            "llvm-ir",
            "asm",
        ]
    ),
    help="Stop after this stage and print the program there (tir: TVMScript, mlir: "
    "the tir dialect; affine, scf, llvm-dialect: for upstream MLIR tools, "
    "canonicalized, docs/handoff.md; gpu, gpu-binary, ptx: --target cuda only).",
)
@_bounds_check_option
@click.option(
    "--print-ir-after-all",
    is_flag=True,
    help="Print the module after every lowering stage on stderr.",
)
@click.option("-o", "out", type=click.Path(dir_okay=False), help="Output file (default: stdout).")
@_specialize_option
@_transform_option
def lower(path, target, emit, bounds_check, print_ir_after_all, out, specialize, transform=None):
    """Lower PATH to stage EMIT (tir -> affine -> scf -> llvm-dialect -> llvm-ir -> asm)."""
    from tir_mlir.passes.lowering.handoff import handoff_text
    from tir_mlir.passes.lowering.pipeline import _target

    if emit in _GPU_STAGES and _target(target) != "cuda":
        raise click.UsageError(f"--emit {emit} is a GPU stage: add --target cuda")
    mod = _load_program(path, transform, specialize)  # symbolic: one kernel
    if emit == "tir":
        return _write(mod.script(), out)
    if emit == "mlir":
        return _write(mod.mlir(), out)

    def dump(stage, module):
        click.echo(f"// -----// IR Dump After {stage} //----- //\n{module}", err=True)

    with _progress(f"lowering to {emit}"):
        text = handoff_text(
            mod.module, emit, target, bounds_check, on_stage=dump if print_ir_after_all else None
        )
    _write(text, out)


@main.command()
@click.argument("path", type=_INPUT, required=False)
@click.option(
    "-p",
    "--passes",
    "stages",
    metavar="STAGES",
    help="Lowering stages to run, comma-separated (tir-to-affine,affine-to-scf), "
    "or a target's pipeline up to a stage (cpu:scf).",
)
@click.option(
    "--target",
    default="cpu",
    show_default=True,
    help="Target whose options stages take (scf-to-llvm: the CPU).",
)
@click.option("--list-stages", is_flag=True, help="List the stages and pipelines, then exit.")
@click.option("-o", "out", type=click.Path(dir_okay=False), help="Output file (default: stdout).")
def opt(path, stages, target, list_stages, out):
    """Run lowering stages by name on the MLIR module PATH and print it (like mlir-opt -p)."""
    from tir_mlir.passes.lowering import opt as stage_driver

    if list_stages:
        return _write(stage_driver.describe(), out)
    if path is None or not stages:
        raise click.UsageError("expected an MLIR file and -p STAGES (or --list-stages)")
    name = "<stdin>" if path == "-" else str(path)
    _write(stage_driver.run(_read(path), stages, name, target), out)


class _CheckValueCommand(click.Command):
    """A command whose `--check` flag also takes an attached value, `--check=interp`: a click
    flag takes none, so that form is passed on as `--check --check-with interp`."""

    def parse_args(self, ctx, args):
        out = []
        for k, a in enumerate(args):
            if a == "--":
                out += args[k:]
                break
            if a.startswith("--check="):
                if a != "--check=interp":
                    raise click.UsageError(f"{a}: expected --check, or --check=interp", ctx)
                out += ["--check", "--check-with", "interp"]
            else:
                out.append(a)
        return super().parse_args(ctx, out)


@main.command(cls=_CheckValueCommand)
@click.argument("path", type=_INPUT)
@click.option("--func", "func_name", default=None, help="Function to run (default: the first).")
@click.option("--target", default="llvm", show_default=True, help="Target to build for.")
@click.option(
    "--check",
    is_flag=True,
    help="Compare the outputs with the unscheduled program, compiled (with "
    "--transform), else with the reference interpreter; --check=interp: with "
    "the interpreter always (slow on large programs).",
)
@click.option("--check-with", type=click.Choice(["interp"]), default=None, hidden=True)
@click.option("--bench", is_flag=True, help="Print the median time (and GFLOP/s).")
@click.option(
    "--number",
    default=3,
    show_default=True,
    type=click.IntRange(1),
    help="With --bench: calls per measurement.",
)
@click.option(
    "--repeat",
    default=5,
    show_default=True,
    type=click.IntRange(1),
    help="With --bench: measurements.",
)
@click.option("--seed", default=0, show_default=True, help="Seed of the random inputs.")
@click.option(
    "-i",
    "--input",
    "inputs",
    multiple=True,
    metavar="NAME=FILE.npy",
    help="Take buffer NAME from a .npy file instead of random values (repeatable).",
)
@click.option(
    "-O",
    "--output",
    "outputs",
    multiple=True,
    metavar="NAME=FILE.npy",
    help="Save buffer NAME after the run to a .npy file (repeatable).",
)
@click.option(
    "--extern-lib",
    "extern_libs",
    multiple=True,
    metavar="FILE",
    help="Link the code T.call_extern calls (.c, .o, .a, .so, .ll; repeatable).",
)
@_bounds_check_option
@_specialize_option
@_transform_option
def run(
    path,
    func_name,
    target,
    check,
    check_with,
    bench,
    number,
    repeat,
    seed,
    inputs,
    outputs,
    extern_libs,
    bounds_check,
    specialize,
    transform=None,
):
    """Build PATH, run a function on random inputs; optionally check it and time it."""
    from tir_mlir.runtime.run_program import run_program

    unscheduled = _concrete(_load_program(path, specialize=specialize))
    mod = transform(unscheduled) if transform else unscheduled
    check = (check_with or True) if check else False
    with_ = "the interpreter" if check_with or not transform else "the unscheduled program"
    lines = run_program(
        mod,
        func_name,
        check=check,
        bench=bench,
        seed=seed,
        debug=bounds_check,
        reference=unscheduled if transform else None,
        target=target,
        number=number,
        repeat=repeat,
        inputs=_named(inputs, "--input", "NAME=FILE.npy"),
        outputs=_named(outputs, "--output", "NAME=FILE.npy"),
        extern_libs=extern_libs,
    )
    if not len(mod):  # about the program as a whole: name its file
        raise TIRError(
            "the program has no function to run",
            SourceLoc("<stdin>" if path == "-" else str(path), 1, 1),
        )
    while True:
        with _progress("building, running" + (f" and checking against {with_}" if check else "")):
            line = next(lines, None)
        if line is None:
            break
        click.echo(line)


@main.command()
@click.argument("path", type=click.Path(exists=True, dir_okay=False))
@click.option("--target", default="llvm", show_default=True, help="Target to tune for.")
@click.option(
    "--trials",
    default=256,
    show_default=True,
    type=click.IntRange(min=1),
    help="Candidates to measure in all (those already in the database count with --resume).",
)
@click.option(
    "--work-dir",
    required=True,
    type=click.Path(file_okay=False),
    help="Holds database.sqlite, best_schedule.py and tuning_curve.png.",
)
@click.option(
    "--func", "func_name", default=None, help="Function to tune (default: main or the only one)."
)
@click.option("--resume", is_flag=True, help="Continue the tuning recorded in --work-dir.")
@click.option(
    "--runner",
    default="local",
    show_default=True,
    type=click.Choice(["local", "dask"]),
    help="Measure here, or on a Dask cluster (--address).",
)
@click.option("--address", default=None, help="The Dask scheduler (tcp://HOST:8786).")
@click.option(
    "--tls-ca-file",
    default=None,
    type=click.Path(exists=True, dir_okay=False),
    help="With --tls-cert and --tls-key: connect to the Dask cluster over mutual TLS "
    "(--address tls://HOST:8786; docs/security.md).",
)
@click.option(
    "--tls-cert",
    default=None,
    type=click.Path(exists=True, dir_okay=False),
    help="This client's certificate, signed by the --tls-ca-file authority.",
)
@click.option(
    "--tls-key",
    default=None,
    type=click.Path(exists=True, dir_okay=False),
    help="The key of --tls-cert.",
)
@click.option(
    "--check/--no-check",
    default=True,
    show_default=True,
    help="Reject candidates whose outputs differ from the unscheduled program's.",
)
@click.option(
    "--timeout",
    default=30.0,
    show_default=True,
    type=click.FloatRange(min=0, min_open=True),
    help="Seconds one candidate may take to build, and to run.",
)
@click.option("--seed", default=None, type=int, help="Seed of the search.")
@click.option(
    "--strategy",
    default="evolutionary",
    show_default=True,
    type=click.Choice(["evolutionary", "replay-trace", "replay-func"]),
    help="Search strategy (replay-*: random sampling of the design space).",
)
@click.option(
    "--trials-per-iter",
    default=64,
    show_default=True,
    type=click.IntRange(min=1),
    help="Candidates per round: built, measured and committed together.",
)
@click.option(
    "--sizes",
    multiple=True,
    metavar="NAME=V1,V2,...",
    help="Tune a symbolic function at these sizes (n=128,1024,4096): one kernel for "
    "all sizes, its cost the geometric mean of its times at each.",
)
@click.option(
    "--weights",
    default=None,
    metavar="W1,W2,...",
    help="Weights of the --sizes in the geometric mean (default: equal).",
)
@_specialize_option
def tune(
    path,
    target,
    trials,
    work_dir,
    func_name,
    resume,
    runner,
    address,
    tls_ca_file,
    tls_cert,
    tls_key,
    check,
    timeout,
    seed,
    strategy,
    trials_per_iter,
    sizes,
    weights,
    specialize,
):
    """Tune a function of PATH: search schedules, measure them, keep the fastest. A model
    (several functions and no --func, or a linalg .mlir) is tuned end to end: a task per
    distinct function, one table for the model, a best_schedule.py for all its functions."""
    from tir_mlir.meta_schedule.sizes import parse_sizes, parse_weights
    from tir_mlir.meta_schedule.tune_command import tune as run_tune

    tls = (tls_ca_file, tls_cert, tls_key)
    if any(tls) and not all(tls):
        raise click.UsageError("--tls-ca-file, --tls-cert and --tls-key go together")
    mod = _load_program(path, specialize=specialize)
    if (
        func_name is None
        and not sizes
        and (len(mod) > 1 or (str(path).endswith(".mlir") and _looks_like_linalg(_read(path))))
    ):
        from tir_mlir.meta_schedule.tune_model import tune_model

        tune_model(
            path,
            _concrete(mod),
            target,
            trials,
            work_dir,
            resume,
            runner,
            address,
            check,
            timeout,
            seed,
            strategy,
            trials_per_iter,
            echo=click.echo,
            tls=tls if all(tls) else None,
        )
        return
    if not sizes:
        mod = _concrete(mod)
    elif weights is not None:
        weights = parse_weights(weights, len(parse_sizes(sizes)))
    run_tune(
        path,
        mod,
        target,
        trials,
        work_dir,
        func_name,
        resume,
        runner,
        address,
        check,
        timeout,
        seed,
        strategy,
        trials_per_iter,
        echo=click.echo,
        sizes=parse_sizes(sizes) if sizes else None,
        weights=weights,
        tls=tls if all(tls) else None,
    )


if __name__ == "__main__":
    main()
