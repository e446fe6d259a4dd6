"""`dpkit cluster` — differentially private k-means (DPQTk-means and two baselines)."""

from __future__ import annotations

import click

from dpkit.cli.options import (
    CONTEXT_SETTINGS,
    apply_config,
    engine_options,
    global_options,
    input_options,
    output_options,
    privacy_options,
)
from dpkit.cli.results import json_result_option


@click.command(name="cluster", context_settings=CONTEXT_SETTINGS)
@click.argument("data", type=click.Path(dir_okay=True, allow_dash=True))
@click.option("--columns", "-c", default=None, metavar="A,B",
              help="Numeric columns to cluster on [default: the numeric columns of --schema].")
@click.option("-k", "--clusters", "k", type=int, default=None, help="Number of clusters k (required).")
@click.option("--bounds", default=None, metavar="LO:HI,LO:HI",
              help="Public bounds of each column, in --columns order (or from --schema). "
              "Values outside are clipped.")
@click.option("--schema", type=click.Path(dir_okay=False), default=None,
              help="Schema YAML: the bounds of numeric columns (--bounds wins if both are given).")
@click.option("--algorithm", type=click.Choice(["dpqt", "dpkmeans", "eug"]), default="dpqt",
              show_default=True,
              help="dpqt = private quadtree + weighted k-means (Zhang & Cheng); dpkmeans = SuLQ "
              "noisy Lloyd (Blum et al.); eug = uniform grid (Su et al.).")
@click.option("--gamma", type=float, default=0.3, show_default=True,
              help="dpqt: share of ε for the tree (the rest: bucket counts).")
@click.option("--max-height", type=int, default=None, metavar="H",
              help="dpqt: tree height [default: from the noise level, see docs/cluster.md].")
@click.option("--threshold", type=float, default=None, metavar="T",
              help="dpqt: split a node while its noisy count > T [default: 1 sd of the level noise].")
@click.option("--allocation", type=click.Choice(["uniform", "geometric"]), default="uniform",
              show_default=True, help="dpqt: ε per tree level: equal, or growing 2^(1/3) per level.")
@click.option("--split", type=click.Choice(["auto", "all", "cycle"]), default="auto", show_default=True,
              help="dpqt: 'all' = 2^d children, 'cycle' = halve one dimension per level (kd-style); "
              "auto = all for d <= 4.")
@click.option("--n-estimate", type=int, default=None, metavar="N",
              help="dpqt/eug: a PUBLIC estimate of the row count (else a noisy N costs 5 % of ε).")
@click.option("--iterations", type=int, default=5, show_default=True, help="dpkmeans: Lloyd iterations.")
@click.option("--allow-data-bounds", is_flag=True,
              help="Without bounds, read them from the data. NOT private: the report, the ledger "
              "and every output say so (headers end in _not_private).")
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
@global_options
@click.pass_context
def command(ctx: click.Context, **params: object) -> None:
    """Differentially private k-means centroids of numeric columns.

    DPQTk-means builds a private quadtree over the public bounds, counts its buckets
    with noise and runs weighted k-means on them (Zhang & Cheng; see docs/cluster.md for
    dpkit's corrections). Bounds are public knowledge: give --bounds or a --schema;
    points outside are clipped (and counted in a warning). Writes one centroid per row
    (-o) and a JSON report of the ε spent.

    \b
    Example:
      dpkit cluster sample_data/clustering/s1.csv --columns x,y -k 15 --epsilon 1 \\
          --bounds 0:1e6,0:1e6 -o s1.centroids.csv
    """
    from dpkit.cli.options import default_report_path

    p = apply_config(ctx, dict(params), params.get("config"), "cluster")  # type: ignore[arg-type]
    _run(p, default_report_path(str(p["output"]), p["report"]))  # type: ignore[arg-type]


def _columns_and_bounds(p: dict) -> tuple[list[str], object, str, object]:
    """(columns, (lows, highs) or None, where the bounds come from, schema or None)."""
    from dpkit.cluster.common import check_bounds, parse_bounds
    from dpkit.errors import DpkitUsageError

    schema = None
    if p["schema"]:
        from dpkit.data.schema import NumericColumn, load_schema

        schema = load_schema(p["schema"])
    if p["columns"]:
        columns = [c.strip() for c in str(p["columns"]).split(",") if c.strip()]
    elif schema is not None:
        columns = [n for n, c in schema.columns.items() if isinstance(c, NumericColumn) and n != schema.target]
    else:
        raise DpkitUsageError("--columns is required (or give --schema to use its numeric columns)")
    if not columns:
        raise DpkitUsageError("no columns to cluster on: give --columns A,B")
    if len(set(columns)) != len(columns):
        raise DpkitUsageError(f"--columns names a column twice: {p['columns']}")
    if p["bounds"]:
        lows, highs = parse_bounds(str(p["bounds"]))
        if len(lows) != len(columns):
            raise DpkitUsageError(
                f"--bounds has {len(lows)} lo:hi pair(s) but --columns names {len(columns)} column(s)"
            )
        return columns, check_bounds(lows, highs), "--bounds", schema
    if schema is not None:
        lows, highs = [], []
        for c in columns:
            col = schema.column(c)
            if not isinstance(col, NumericColumn):
                raise DpkitUsageError(f"column {c!r} is {col.kind} in {schema.path}; dpkit cluster needs numeric columns")
            lows.append(col.lo)
            highs.append(col.hi)
        return columns, check_bounds(lows, highs), str(schema.path), schema
    if p["allow_data_bounds"]:
        return columns, None, "data", schema
    raise DpkitUsageError(
        "bounds are required (public knowledge, not read from the data): give --bounds lo:hi,... "
        "or --schema S.yaml; --allow-data-bounds reads them from the data (not private)"
    )


#: appended to the header of every output's marker column when the release is not private
NOT_PRIVATE_SUFFIX = "_not_private"


def _load(p: dict, columns: list[str], bounds: object, source: str, data_schema: object = None):  # noqa: ANN202
    """(raw DataFrame, points clipped to the bounds, kept rows), honouring the missing-value
    token and policy of ``data_schema`` (a --schema) when one was given.

    The points are an ``(n, d)`` float array only where they are needed as one (--assign,
    --allow-data-bounds); otherwise the loaded columns as a numpy frame, which the models
    count from without a copy (the same counts: at 100M rows the array took 1.6 GB)."""
    import numpy as np

    from dpkit.cli.options import read_options
    from dpkit.data.table import column_names, encode, first_line, load, read_table

    opts = read_options(p["data"], p["encoding"], p["delimiter"])
    # the strings are needed only for --assign (and stdin, which can be read once)
    df = read_table(opts) if p.get("assign_out") or p["data"] == "-" else None
    names = list(df.columns) if df is not None else column_names(opts)
    src = opts.name
    absent = [c for c in columns if c not in names]
    if absent and p["columns"]:
        from dpkit.errors import DataError

        # named by --columns (not by a schema): say so, rather than "from schema --bounds"
        header = ", ".join(map(str, names[:8])) + (", ..." if len(names) > 8 else "")
        hint = " — the header is one column: wrong --delimiter?" if len(names) == 1 else ""
        raise DataError(f"{src}: --columns {', '.join(map(repr, absent))} not found in the header ({header}){hint}")
    if bounds is None:
        lows, highs = [-np.inf] * len(columns), [np.inf] * len(columns)
    else:
        lows, highs = bounds  # type: ignore[misc]
    schema = _points_schema(columns, lows, highs, source, data_schema)
    if df is not None:
        table = encode(df, schema, columns, source=src, first_line=first_line(opts))
    else:
        table = load(opts, schema, columns)
    if df is None and bounds is not None:
        from dpkit.engine.numpy_frame import NumpyFrame

        return None, NumpyFrame(table), None
    points = np.stack([np.asarray(table.columns[c], dtype=float) for c in columns], axis=1)
    kept = None  # for --assign (df read): the rows encode() kept under the schema's policy
    if df is not None:
        kept = np.ones(len(df), dtype=bool)
        for c in columns:
            kept &= ~np.isin(df[c].to_numpy(), list(schema.missing_tokens))
    return df, points, kept


def _points_schema(columns: list[str], lows: object, highs: object, source: str, data_schema: object):  # noqa: ANN202
    """The numeric schema of the points: the bounds, and the missing tokens and policy of
    the data's own --schema when one was given."""
    from dpkit.data.schema import NumericColumn, Schema

    return Schema(
        columns={c: NumericColumn(c, float(lo), float(hi)) for c, lo, hi in zip(columns, lows, highs, strict=True)},
        path=source,
        missing_tokens=tuple(getattr(data_schema, "missing_tokens", ()) or ()),
        missing_policy=getattr(data_schema, "missing_policy", "error"),
    )


def _load_spark(p: dict, columns: list[str], bounds: object, source: str, data_schema: object = None):  # noqa: ANN202
    """The points as a Spark frame (read, checked and clipped on the cluster); without
    bounds (--allow-data-bounds) they are not clipped, as on the numpy engine."""
    import numpy as np

    from dpkit.cli.options import read_options, spark_args
    from dpkit.engine import load

    if bounds is None:
        lows, highs = [-np.inf] * len(columns), [np.inf] * len(columns)
    else:
        lows, highs = bounds  # type: ignore[misc]
    schema = _points_schema(columns, lows, highs, source, data_schema)
    return load(read_options(p["data"], p["encoding"], p["delimiter"]), schema, columns, engine="spark",
                **spark_args(p))


def _assign_spark(p: dict, frame: object, centres: object, column: str) -> None:
    """--assign on Spark: every input row with its nearest centre, computed on the executors
    with the numpy engine's function and written by Spark (docs/spark.md)."""
    from dpkit.cli.options import output_delimiter, read_options
    from dpkit.engine.spark_rows import assign_rows
    from dpkit.run import private_rows_mode

    assign_rows(frame, read_options(p["data"], p["encoding"], p["delimiter"]), centres, column,
                p["assign_out"], delimiter=output_delimiter(), mode=private_rows_mode(p["data"]))


def _parameters(p: dict, k: int, columns: list[str], bounds: tuple, source: str) -> dict:
    params = {
        "columns": columns, "k": k, "bounds": [[float(a), float(b)] for a, b in zip(*bounds, strict=True)],
        "bounds_source": source, "algorithm": p["algorithm"],
    }
    if p["algorithm"] == "dpqt":
        params.update({n: p[n] for n in ("gamma", "max_height", "threshold", "allocation", "split", "n_estimate")})
    elif p["algorithm"] == "eug":
        params["n_estimate"] = p["n_estimate"]
    else:
        params["iterations"] = p["iterations"]
    return params


def _run(p: dict, report_path: str | None) -> None:
    import warnings

    import numpy as np
    import pandas as pd

    from dpkit.cli.options import output_delimiter
    from dpkit.cluster.assign import assigned_rows
    from dpkit.cluster.common import check_k, data_bounds
    from dpkit.data.table import write_csv
    from dpkit.errors import DpkitUsageError, PrivacyLeakWarning
    from dpkit.report import write_report
    from dpkit.run import PrivateRun, private_rows_mode

    if p["k"] is None:
        raise DpkitUsageError("-k (the number of clusters) is required")
    k = check_k(p["k"])
    if p["histogram"] and p["algorithm"] == "dpkmeans":
        raise DpkitUsageError("--histogram needs --algorithm dpqt or eug (dpkmeans releases no buckets)")
    outs = [p["output"], report_path, p["histogram"], p["assign_out"]]
    if sum(o == "-" for o in outs) > 1:
        raise DpkitUsageError("only one output can go to stdout ('-')")
    columns, bounds, source, schema = _columns_and_bounds(p)
    from dpkit.cli.options import engine_of

    spark_uri = engine_of(p) == "spark" and "://" in str(p["assign_out"] or "")  # Spark checks it
    run = PrivateRun(
        "cluster", p["algorithm"], p["epsilon"], p["seed"], inputs=[p["data"], p["schema"], p["config"]],
        outputs=[o for o in outs if not (spark_uri and o == p["assign_out"])], ledger=p["ledger"],
    )
    if engine_of(p) == "spark":
        if p["assign_out"]:
            from dpkit.engine.spark_frame import session
            from dpkit.engine.spark_write import check_output

            check_output(session(p.get("spark_master")), p["assign_out"])  # before any ε is spent
        frame = _load_spark(p, columns, bounds, source, schema)
        df = points = kept = None
    else:
        df, points, kept = _load(p, columns, bounds, source, schema)
        frame = None
        if not isinstance(points, np.ndarray):  # a numpy frame of the loaded columns
            frame, points = points, None
    guarantee = None
    if bounds is None:
        if frame is None:
            bounds = data_bounds(points)
        else:
            from dpkit.engine.spark_rows import extremes

            # the same min and max as the numpy engine's (one Spark aggregation): NOT private
            bounds = data_bounds(extremes(frame, columns))
        guarantee = "none: domain read from data"
        run.not_private.append("--allow-data-bounds (domain read from data)")
        warnings.warn(
            "--allow-data-bounds: the bounds were read from the data, so the release is NOT "
            "differentially private (the report says so); give public --bounds instead",
            PrivacyLeakWarning, stacklevel=2,
        )
    from dpkit.cluster import make_model

    model = make_model(p["algorithm"], k, run.epsilon, bounds, p)
    with run:
        model.fit(points if frame is None else frame, accountant=run.accountant, rng=run.rng, columns=columns)
        centres = np.asarray(model.cluster_centers_, dtype=float)
        # --allow-data-bounds: every output is marked in its header (a CSV stays a CSV) and
        # listed in the report's release.not_private_outputs (docs/cluster.md)
        mark = NOT_PRIVATE_SUFFIX if guarantee else ""
        out = pd.DataFrame(centres, columns=columns)
        out.insert(0, "cluster" + mark, np.arange(len(centres)))
        release: dict = {"centroids": centres.tolist()}
        if p["algorithm"] in ("dpqt", "eug"):
            release["n_estimate"] = int(model.n_estimate_)
            release["buckets"] = len(model.buckets_.counts)
        if p["algorithm"] == "dpqt":
            release.update({
                "height": int(model.height_), "split": model.split_,
                "level_epsilons": model.level_epsilons_.tolist(),
                "thresholds": model.threshold_.tolist(),
                "epsilon_parts": model.epsilons_,
            })
        elif p["algorithm"] == "eug":
            release["grid"] = int(model.grid_)
        else:
            release["iteration_epsilons"] = model.iteration_epsilons_.tolist()
        if model.note_:
            release["note"] = model.note_
        write_csv(out, p["output"])
        if p["histogram"]:
            b = model.buckets_
            hist = {}
            for j, c in enumerate(columns):
                hist[f"{c}_lo"] = b.lows[:, j]
                hist[f"{c}_hi"] = b.highs[:, j]
            hist["count" + mark] = np.clip(b.counts, 0, None)
            write_csv(pd.DataFrame(hist), p["histogram"])
        if p["assign_out"] and frame is not None:
            _assign_spark(p, frame, centres, "cluster" + mark)
        elif p["assign_out"]:
            # post-processing of the release, for the data owner: holds the private rows
            # (rows dropped for a missing value get an empty label)
            assigned = assigned_rows(df, points, kept, centres, "cluster" + mark)
            write_csv(assigned, p["assign_out"], delimiter=output_delimiter(), mode=private_rows_mode(p["data"]))
        if report_path:
            params = _parameters(p, k, columns, bounds, source)
            if guarantee:
                params["bounds"] = "read from the data (not reported)"
                release["not_private_outputs"] = [o for o in (p["output"], p["histogram"], p["assign_out"]) if o]
            report = run.report(params, release, guarantee=guarantee)
            write_report(report, report_path)
    if p.get("as_json"):
        from dpkit.cli.results import emit_run_result

        emit_run_result(report, p["output"], report=report_path, histogram=p["histogram"],
                        assign=p["assign_out"])
