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
    from dpkit import evaluate_clustering
    from dpkit.cli.options import columns_of, read_options
    from dpkit.cli.results import emit

    result = evaluate_clustering(read_options(data, encoding, delimiter), centroids, columns=columns_of(columns), labels=labels,
                                 compare=compare, reference=not no_reference)
    cells = [(k, f"{v:.6g}" if isinstance(v, float) else str(v)) for k, v in result.items()]
    emit(as_json, result, [("clustering metrics", ("metric", "value"), cells)], [f"{k}: {v}" for k, v in cells])
