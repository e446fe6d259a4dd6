"""The ``dpkit`` command line: a thin Click layer over the library.

Command modules import only Click at module level (heavy libraries inside the command
functions) so that ``dpkit --help`` starts fast. :func:`main` is the error boundary:
a :class:`~dpkit.errors.DpkitError` becomes one line on stderr and its exit code, usage
errors exit 2, Ctrl-C exits 130 leaving no partial file, and a closed stdout (``| head``)
ends quietly. ``-v`` shows tracebacks.
"""

from __future__ import annotations

import os
import sys

import click

from dpkit import __version__
from dpkit.cli.options import CONTEXT_SETTINGS, State, global_options


@click.group(context_settings=CONTEXT_SETTINGS)
@click.version_option(__version__, "--version", prog_name="dpkit")
@global_options
def cli() -> None:
    """Privatize CSV data sets: differentially private releases, models and clusterings,
    and k-anonymous feature selection.

    \b
    Every privacy command writes a JSON report of the ε it spent. Run
    `dpkit COMMAND --help` for a command's options and an example.
    """


def _register() -> None:
    from dpkit.cli import budget, cluster, evaluate, forest, generalize, kanon, publish, taxonomy

    for module in (publish, generalize, forest, cluster, kanon, evaluate, taxonomy, budget):
        cli.add_command(module.command)


_register()


def main(argv: list[str] | None = None) -> None:
    """Console entry point (``dpkit``) and ``python -m dpkit``."""
    from dpkit.cli.boundary import run

    sys.exit(run(cli, argv))


__all__ = ["cli", "main", "State", "os"]
