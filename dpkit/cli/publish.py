"""`dpkit publish` — not built yet."""

from __future__ import annotations

import click

from dpkit.cli.options import CONTEXT_SETTINGS, global_options


@click.command(
    name="publish", context_settings={**CONTEXT_SETTINGS, "ignore_unknown_options": True})
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
@global_options
def command(args: tuple[str, ...]) -> None:
    """Release a differentially private generalized table (MAXGDDP). (Not built yet.)"""
    raise click.UsageError("'dpkit publish' is not built yet in this version of dpkit")
