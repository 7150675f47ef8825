"""`tir-mlir` command line: parse, schedule, lower, run.

Errors from the library (TIRError) are printed as `FILE:LINE:COL: error: message` with exit
status 1 and no Python traceback.
"""
import sys

import click

from tir_mlir.errors import TIRError


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


# Subcommands live in this file, one function each, below this line.
