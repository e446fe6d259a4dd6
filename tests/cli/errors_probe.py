"""A stand-in privacy command built only from dpkit's shared machinery, for the bad-input tests.

It reads a CSV against a schema (the loaders), runs inside :class:`PrivateRun` (ε, seed,
output checks, ledger), releases a noisy histogram through a mechanism and writes it with
``write_csv`` — everything a real command does around its algorithm. The catalogue in
``test_errors.py`` runs against it as well as against every real command, so the shared
layer is tested even before a command lands. ``--rows N`` repeats the release N times so
that ``| head`` and Ctrl-C have something long to interrupt.

Run as ``python tests/cli/errors_probe.py ARGS`` (goes through dpkit's error boundary).
"""

from __future__ import annotations

import sys

import click

from dpkit.cli.options import (
    CONTEXT_SETTINGS,
    global_options,
    input_options,
    output_options,
    privacy_options,
)


@click.command(name="probe", context_settings=CONTEXT_SETTINGS)
@click.argument("data", type=click.Path(dir_okay=False, allow_dash=True))
@click.option("--schema", required=True, type=click.Path(dir_okay=False))
@click.option("--rows", type=int, default=1)
@input_options
@privacy_options
@output_options
@global_options
def probe(data, schema, rows, encoding, delimiter, epsilon, config, seed, ledger, output, report):  # noqa: ANN001
    import numpy as np
    import pandas as pd

    from dpkit.cli.options import default_report_path, read_options
    from dpkit.io.output import write_csv
    from dpkit.io.table import load
    from dpkit.privacy import discrete_laplace
    from dpkit.report import write_report
    from dpkit.run import PrivateRun
    from dpkit.schema.parse import CategoricalColumn, load_schema

    report = default_report_path(output, report)
    run = PrivateRun("probe", "histogram", epsilon, seed, inputs=[data, schema],
                     outputs=[output, report], ledger=ledger, data_path=data)
    s = load_schema(schema)
    with run:
        table = load(read_options(data, encoding, delimiter), s)
        cat = next(n for n, c in s.columns.items() if isinstance(c, CategoricalColumn))
        leaves = s.columns[cat].leaves
        counts = np.bincount(table.columns[cat], minlength=len(leaves))
        noisy = discrete_laplace(counts, epsilon=run.epsilon, rng=run.rng,
                                 accountant=run.accountant, step="histogram")
        df = pd.DataFrame({cat: list(leaves) * rows, "count": np.tile(noisy, rows)})
        write_csv(df, output)
        if report:
            write_report(run.report({"rows": rows}), report)


if __name__ == "__main__":
    from dpkit.cli.boundary import run as boundary_run

    sys.exit(boundary_run(probe))
