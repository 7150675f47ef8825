"""`tir-mlir opt F.mlir -p STAGES`: run lowering stages by name on an MLIR module and print the
result, as `mlir-opt`/`xdsl-opt` do with passes, so each stage can be tried and tested on a
small hand-written input (tests/lowering/filecheck/).

STAGES is a comma-separated list of
- stage names from the registry (stages.py), run in the order given: `tir-to-affine,affine-to-scf`;
- `TARGET:STAGE`, a pipeline prefix: what `tir-mlir lower --emit STAGE --target TARGET` runs
  (its checks, then the target's stages up to and including STAGE, an emit name or a stage
  name): `cpu:scf`, `cpu:vectorize-loops`.
The module is verified after every stage; a stage that leaves invalid IR is an error naming it.
"""

from mlir import ir

from tir_mlir.ir.mlir_error import MLIRError
from tir_mlir.context import get_context, serialized
from tir_mlir.errors import BuildError, SourceLoc, TIRError, TIRParseError
from tir_mlir.passes.lowering.pipeline import STAGE_NAMES, TARGET_ALIASES, _target
from tir_mlir.passes.lowering.stages import instance, names
from tir_mlir.suggest import did_you_mean


def expand(spec: str, target: str = "cpu") -> list:
    """The stage names `spec` stands for, in order (a BuildError for an unknown one)."""
    out = []
    for item in [s.strip() for s in spec.split(",")]:
        if not item:
            raise BuildError(f"empty stage name in {spec!r}")
        if ":" in item:
            out += _prefix(*item.split(":", 1))
        else:
            out.append(item)
    known = set(names())
    for name in out:
        if name not in known:
            raise BuildError(
                f"unknown lowering stage {name!r}{did_you_mean(name, known)} "
                f"(tir-mlir opt --list-stages lists them)"
            )
    return out


def _prefix(target: str, until: str) -> list:
    t = _target(target)
    checks = ["static-bounds"] + (["indirect-mark"] if t == "cpu" else [])
    stages = STAGE_NAMES[t]
    for k, (emit, name) in enumerate(stages):
        if until in (emit, name):
            return checks + [n for _, n in stages[: k + 1]]
    choices = [e for e, _ in stages if e] + [n for _, n in stages]
    raise BuildError(f"no stage {until!r} in the {t} pipeline; one of: {', '.join(choices)}")


def describe() -> str:
    """What `--list-stages` prints: each target's stages in pipeline order (with the `--emit`
    names), then the checks the pipelines run first."""
    lines = []
    for t, stages in STAGE_NAMES.items():
        aliases = [a for a, to in TARGET_ALIASES.items() if to == t]
        lines.append(
            f"{t} pipeline ({', '.join([t] + aliases)}); -p {t}:STAGE runs it up to "
            f"STAGE; [--emit name]:"
        )
        lines += [f"  {name}" + (f"  [{emit}]" if emit else "") for emit, name in stages]
    in_pipelines = {n for stages in STAGE_NAMES.values() for _, n in stages}
    lines.append("checks, run before the first stage (bounds-check: --bounds-check builds):")
    lines += [f"  {n}" for n in names() if n not in in_pipelines]
    return "\n".join(lines) + "\n"


@serialized
def run(text: str, spec: str, filename: str = "<stdin>", target: str = "cpu") -> str:
    """The module in `text` after the stages of `spec`, printed."""
    stages = expand(spec, target)
    with get_context():
        try:
            module = ir.Module.parse(text)
            module.operation.verify()
        except MLIRError as e:
            raise _parse_error(e, filename) from None
        for name in stages:
            try:
                with module.operation.location:  # (stages rely on an ambient location)
                    instance(name, target)(module)
                module.operation.verify()
            except TIRError as e:
                raise type(e)(
                    f"{e.message} (in stage {name})", _in_file(e.loc, filename), notes=e.notes
                ) from None
            except MLIRError as e:
                raise BuildError(
                    f"stage {name} produced invalid IR: {_first(e)}",
                    _in_file(_diag_loc(e), filename),
                ) from None
        return str(module)


def _in_file(loc, filename):
    """MLIR names the text it parses "-": the op came from `filename`."""
    if loc is not None and loc.file == "-":
        return SourceLoc(filename, loc.line, loc.col)
    return loc


def _diag_loc(e: MLIRError):
    diags = getattr(e, "error_diagnostics", None) or []
    return SourceLoc.of(diags[0].location) if diags else None


def _first(e: MLIRError) -> str:
    diags = getattr(e, "error_diagnostics", None) or []
    return diags[0].message if diags else str(e)


def _parse_error(e: MLIRError, filename) -> TIRParseError:
    return TIRParseError(_first(e), _in_file(_diag_loc(e), filename) or SourceLoc(filename, 1, 1))
