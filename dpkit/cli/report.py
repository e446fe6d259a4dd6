"""`dpkit report` — a run's release card: one self-contained HTML page of its JSON report."""

from __future__ import annotations

from typing import Any

import click

import dpkit
from dpkit.cli.options import dpkit_command, say


@dpkit_command("report")
@click.argument("report", type=click.Path(dir_okay=False))
@click.option("-o", "--output", "output", type=click.Path(dir_okay=False, allow_dash=True), required=True,
              help="Where to write the card (HTML; '-' is stdout).")
@click.option("--test", type=click.Path(dir_okay=False), default=None, metavar="TEST.csv",
              help="The owner's test rows: adds the release's test metrics, a ROC curve and per-column "
              "distributions — exact statistics of private data, under a banner (not for shipping).")
@click.option("--target", default=None, metavar="COL",
              help="With --test: the class column (a clustering: the labels to score against) "
              "[default: the report's target].")
@click.option("--release", "release", type=click.Path(dir_okay=False), default=None,
              help="The released file for --test (rows, model or table) [default: the one beside REPORT]; for a "
              "clustering, the --histogram buckets, which size its centroids.")
@click.option("--baseline", type=click.Path(dir_okay=False), default=None, metavar="TRAIN.csv",
              help="With --test: the raw training rows, for the raw-data baseline.")
@click.option("--schema", type=click.Path(dir_okay=False), default=None,
              help="The schema [default: the one the report names, if found from here].")
@click.option("--ledger", type=click.Path(dir_okay=False), default=None,
              help="A privacy ledger: show the ε spent on the data set across runs.")
@click.option("--dataset", default=None, metavar="NAME",
              help="With --ledger: the data set's name (needed when the ledger holds several).")
def command(**p: Any) -> None:
    """Write the release card of a run: its guarantee, the ε spent by step against the budget,
    the domain of each column, what was released — one HTML file with inline charts that
    loads nothing from the network (docs/report.md).

    \b
    Example:
      dpkit report out/adult.released.report.json -o out/adult.card.html
      dpkit report out/adult.released.report.json -o out/adult.owner.html \\
          --test sample_data/adult/test.csv --baseline sample_data/adult/train.csv
    """
    dpkit.report_card(p["report"], p["output"], test=p["test"], target=p["target"], release=p["release"],
                      baseline=p["baseline"], schema=p["schema"], ledger=p["ledger"], dataset=p["dataset"])
    if p["output"] != "-":
        say(f"dpkit: card {p['output']}" + (" (owner only: it holds the test rows' statistics)" if p["test"] else ""))
