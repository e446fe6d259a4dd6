"""`dpkit budget` — not built yet."""

from __future__ import annotations

import click

from dpkit.cli.options import CONTEXT_SETTINGS, global_options


@click.command(
    name="budget", context_settings={**CONTEXT_SETTINGS, "ignore_unknown_options": True})
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
@global_options
def command(args: tuple[str, ...]) -> None:
    """The privacy ledger: ε spent on each data set across runs. (Not built yet.)"""
    raise click.UsageError("'dpkit budget' is not built yet in this version of dpkit")
