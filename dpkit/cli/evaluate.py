"""`dpkit evaluate` — a group; each subcommand lives in its own module (evaluate_*.py)."""

from __future__ import annotations

import importlib

import click

from dpkit.cli.options import CONTEXT_SETTINGS, global_options


@click.group(name="evaluate", context_settings=CONTEXT_SETTINGS)
@global_options
def command() -> None:
    """Utility metrics of releases, models and clusterings, and experiment sweeps.

    \b
    Example:
      dpkit evaluate classify --train out/adult.released.csv \\
          --test out/adult.test.generalized.csv --target income
      dpkit evaluate sweep configs/experiments/maxgddp-adult.yaml -o results/maxgddp-adult
    """


# subcommand modules, each defining `command`; owned by different parts of dpkit
for _name in ("evaluate_classify", "evaluate_cluster", "evaluate_kanon", "evaluate_sweep"):
    command.add_command(importlib.import_module(f"dpkit.cli.{_name}").command)
