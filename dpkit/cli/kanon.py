"""`dpkit kanon-select` — not built yet."""

from __future__ import annotations

import click

from dpkit.cli.options import CONTEXT_SETTINGS, global_options


@click.command(
    name="kanon-select", context_settings={**CONTEXT_SETTINGS, "ignore_unknown_options": True})
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
@global_options
def command(args: tuple[str, ...]) -> None:
    """k-anonymity by feature selection (XGB-KA). (Not built yet.)"""
    raise click.UsageError("'dpkit kanon-select' is not built yet in this version of dpkit")
