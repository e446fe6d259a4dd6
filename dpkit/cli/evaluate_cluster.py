"""`dpkit evaluate cluster` — NICV, F-measure and RCP of released centroids."""

from __future__ import annotations

import click

from dpkit.cli.options import CONTEXT_SETTINGS, global_options, input_options, json_option


@click.command(name="cluster", context_settings=CONTEXT_SETTINGS)
@click.argument("data", type=click.Path(dir_okay=False, allow_dash=True))
@click.option("--centroids", required=True, type=click.Path(dir_okay=False),
              help="Centroids CSV (from `dpkit cluster -o`; UTF-8, commas): one row per centroid.")
@click.option("--columns", "-c", default=None, metavar="A,B",
              help="Data columns, named as in the centroids file [default: its columns but 'cluster'].")
@click.option("--labels", default=None, metavar="COLUMN", help="Ground-truth cluster column (for the F-measure).")
@click.option("--compare", default=None, type=click.Path(dir_okay=False), metavar="OTHER.csv",
              help="Another centroids file: also report its NICV and RCP = (NICV_other − NICV)/NICV_other.")
@click.option("--no-reference", is_flag=True, help="Skip the non-private k-means reference (faster).")
@input_options
@json_option
@global_options
def command(data, centroids, columns, labels, compare, no_reference, encoding, delimiter, as_json) -> None:
    """Quality of a clustering: NICV (mean squared distance to the nearest centroid),
    the NICV of non-private k-means with the same k (scikit-learn, 10 restarts) and their
    ratio, the F-measure against --labels, and RCP against --compare.

    Reads the raw data: this is for the data owner, not a private release. Results go to
    stdout: a table on a terminal, `key: value` lines otherwise, JSON with --json.

    \b
    Example:
      dpkit evaluate cluster sample_data/clustering/s1.csv --centroids s1.centroids.csv \\
          --labels label --compare s1.eug.csv
    """
    from dpkit.cli.options import read_options
    from dpkit.data.table import read_csv, read_table
    from dpkit.errors import DpkitUsageError
    from dpkit.evaluate.clustering import evaluate_centroids

    opts = {"encoding": encoding, "delimiter": delimiter}
    # --encoding/--delimiter describe DATA; centroid files are read as `dpkit cluster` writes
    # them (UTF-8, commas), so a TSV or Latin-1 DATA still pairs with dpkit's own output
    cdf = read_csv(centroids)
    cols = [c.strip() for c in columns.split(",") if c.strip()] if columns else [c for c in cdf.columns if c != "cluster"]
    if not cols:
        raise DpkitUsageError("no columns to evaluate: give --columns A,B")
    df = read_table(read_options(data, **opts))
    points = _numeric(df, cols, data)
    cents = _numeric(cdf, cols, centroids)
    other = _numeric(read_csv(compare), cols, compare) if compare else None
    if labels is not None and labels not in df.columns:
        raise DpkitUsageError(f"--labels: column {labels!r} is not in {data} (columns: {', '.join(df.columns)})")
    result = evaluate_centroids(
        points, cents, labels=df[labels].to_numpy() if labels else None, other=other,
        reference=not no_reference,
    )
    _print(result, as_json)


def _numeric(df, columns: list[str], name: str):  # noqa: ANN001, ANN202
    """The columns of ``df`` as an (n, d) float array; one-line errors naming file/line/column."""
    import numpy as np
    import pandas as pd

    from dpkit.errors import DataError

    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise DataError(f"{name}: column(s) {', '.join(map(repr, missing))} not in the header ({', '.join(df.columns)})")
    out = np.empty((len(df), len(columns)))
    for j, c in enumerate(columns):
        v = pd.to_numeric(df[c], errors="coerce").to_numpy(dtype=float)
        bad = ~np.isfinite(v)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            from dpkit.console import private

            raise DataError(private(f"{name}:{i + 2}: column {c!r} has {df[c].iloc[i]!r}, not a finite number",
                                    f"{name}: column {c!r} has a value that is not a finite number"))
        out[:, j] = v
    return out


def _print(result: dict, as_json: bool) -> None:
    import json
    import sys

    if as_json:
        click.echo(json.dumps(result, indent=2))
        return
    if sys.stdout.isatty():
        from rich.console import Console
        from rich.table import Table

        t = Table(title="clustering metrics")
        t.add_column("metric")
        t.add_column("value", justify="right")
        for k, v in result.items():
            t.add_row(k, f"{v:.6g}" if isinstance(v, float) else str(v))
        Console().print(t)
        return
    for k, v in result.items():
        click.echo(f"{k}: {v:.6g}" if isinstance(v, float) else f"{k}: {v}")
