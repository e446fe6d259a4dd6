"""`dpkit cluster` — differentially private k-means (DPQTk-means and two baselines)."""

from __future__ import annotations

import click

from dpkit.cli.options import (
    dpkit_command,
    engine_options,
    input_options,
    json_result_option,
    output_options,
    privacy_options,
)

#: the algorithm options among the flags below, passed on only when given (tests/cli/test_public_imports.py)
ALGORITHM_OPTIONS = ("allocation", "gamma", "iterations", "max_height", "n_estimate", "split", "threshold")


@dpkit_command("cluster", config=True)
@click.argument("data", type=click.Path(dir_okay=True, allow_dash=True))
@click.option("--columns", "-c", default=None, metavar="A,B",
              help="Numeric columns to cluster on [default: the numeric columns of --schema].")
@click.option("-k", "--clusters", "k", type=int, default=None, help="Number of clusters k (required).")
@click.option("--bounds", default=None, metavar="LO:HI,LO:HI",
              help="Public bounds of each column, in --columns order (or from --schema). "
              "Values outside are clipped.")
@click.option("--schema", type=click.Path(dir_okay=False), default=None,
              help="Schema YAML: the bounds of numeric columns (--bounds wins if both are given).")
@click.option("--algorithm", type=click.Choice(["dpqt", "dpkmeans", "eug"]), default=None,
              help="[default: dpqt] dpqt = private quadtree + weighted k-means (Zhang & Cheng); dpkmeans = SuLQ "
              "noisy Lloyd (Blum et al.); eug = uniform grid (Su et al.).")
@click.option("--gamma", type=float, default=None,
              help="dpqt: share of ε for the tree (the rest: bucket counts) [default: 0.3].")
@click.option("--max-height", type=int, default=None, metavar="H",
              help="dpqt: tree height [default: from the noise level, see docs/cluster.md].")
@click.option("--threshold", type=float, default=None, metavar="T",
              help="dpqt: split a node while its noisy count > T [default: 1 sd of the level noise].")
@click.option("--allocation", type=click.Choice(["uniform", "geometric"]), default=None,
              help="dpqt: ε per tree level: equal, or growing 2^(1/3) per level [default: uniform].")
@click.option("--split", type=click.Choice(["auto", "all", "cycle"]), default=None,
              help="[default: auto] dpqt: 'all' = 2^d children, 'cycle' = halve one dimension per level (kd-style); "
              "auto = all for d <= 4.")
@click.option("--n-estimate", type=int, default=None, metavar="N",
              help="dpqt/eug: a PUBLIC estimate of the row count (else a noisy N costs 5 % of ε).")
@click.option("--iterations", type=int, default=None, help="dpkmeans: Lloyd iterations [default: 5].")
@click.option("--allow-data-bounds", is_flag=True,
              help="Without bounds, read them from the data. NOT private: the report, the ledger "
              "and every output say so (headers end in _not_private).")
@click.option("--domain-share", default=None, metavar="S",
              help="With no --bounds and no --schema: the share of ε that learns the bounds under DP "
              "[default: 0.1].")
@click.option("--integer", default=None, metavar="A,B",
              help="With learned bounds: columns of whole numbers (their bounds on the integer grid).")
@click.option("--missing", default=None, metavar="TOKENS",
              help="With learned bounds: the missing-value token(s), comma-separated; any value that is not "
              "a number is read as missing (its row dropped) either way.")
@click.option("--date", default=None, metavar="A,B",
              help="With learned bounds: columns of ISO dates (YYYY-MM-DD), clustered as day numbers; "
              "centroids written as dates.")
@click.option("--histogram", type=click.Path(dir_okay=False, allow_dash=True), default=None, metavar="OUT.csv",
              help="dpqt/eug: also write the noisy buckets (box and count) — part of the DP release.")
@click.option("--assign", "assign_out", type=click.Path(dir_okay=False, allow_dash=True), default=None,
              metavar="OUT.csv",
              help="Write every input row with its nearest released centroid. Post-processing for "
              "the data owner's own use: this file holds the private rows — do not publish it.")
@privacy_options
@output_options
@json_result_option
@input_options
@engine_options
@click.pass_context
def command(ctx: click.Context, **params: object) -> None:
    """Differentially private k-means centroids of numeric columns.

    DPQTk-means builds a private quadtree over the public bounds, counts its buckets
    with noise and runs weighted k-means on them (Zhang & Cheng; see docs/cluster.md for
    dpkit's corrections). Bounds are public knowledge: give --bounds or a --schema;
    points outside are clipped (and counted in a warning). With neither, a share of ε
    (--domain-share, 0.1) learns them under DP first (docs/domain.md). Writes one centroid per row
    (-o) and a JSON report of the ε spent.

    \b
    Example:
      dpkit cluster sample_data/clustering/s1.csv --columns x,y -k 15 --epsilon 1 \\
          --bounds 0:1e6,0:1e6 -o s1.centroids.csv
    """
    import dpkit
    from dpkit.cli.options import columns_of, output_delimiter, run_private

    p: dict = params
    files = {"histogram": p["histogram"], "assign": p["assign_out"]}
    run_private(dpkit.cluster, p, ALGORITHM_OPTIONS, files=files,
                n_clusters=p["k"], columns=columns_of(p["columns"]), bounds=p["bounds"], schema=p["schema"],
                algorithm=p.get("algorithm") or "dpqt", allow_data_bounds=bool(p["allow_data_bounds"]),
                domain_share=p.get("domain_share"), integer=p.get("integer"), missing=p.get("missing"),
                date=p.get("date"),
                histogram=p["histogram"], assign=p["assign_out"],
                config=p["config"], output_delimiter=output_delimiter())
