"""`dpkit generalize` — map a file onto a released cut (no privacy budget)."""

from __future__ import annotations

from typing import Any

import click

from dpkit.cli.options import CONTEXT_SETTINGS, engine_options, global_options, input_options


@click.command(name="generalize", context_settings=CONTEXT_SETTINGS)
@click.argument("data", type=click.Path(dir_okay=True, allow_dash=True))
@click.option("--cut", "cut_path", required=True, type=click.Path(dir_okay=False),
              help="The report of a `dpkit publish` or `dpkit kanon-select --generalize` run (its cut is applied).")
@click.option("--schema", "schema_path", default=None, type=click.Path(dir_okay=False),
              help="Schema YAML (default: the schema named in the report).")
@click.option("-o", "--output", "output", default="-", type=click.Path(dir_okay=False, allow_dash=True),
              help="Output file [default: '-', stdout]. --engine spark: also DIR/ or a URI (a directory "
              "of part files) and .parquet (docs/spark.md).")
@input_options
@engine_options
@global_options
def command(data: str, cut_path: str, schema_path: str | None, output: str, **kwargs: Any) -> None:
    """Map DATA onto the generalization released by `dpkit publish` or `kanon-select --generalize`.

    Every predictor value becomes the taxonomy node or interval of the released cut that
    contains it, so a test split (or new records to score) matches the released table's
    columns. The class column is kept as it is when present. Rows with missing values follow
    the schema's policy. This reads only DATA and the public report: it is not a release of
    the training data and spends no ε. With a `kanon-select --generalize` report, DATA is
    projected on the kept quasi-identifiers (+ the target), each generalized to its chosen
    level; no record is suppressed (a test split is not released).

    \b
    Example:
      dpkit generalize sample_data/adult/test.csv --cut out/adult.released.report.json \\
          -o out/adult.test.generalized.csv
    """
    from pathlib import Path

    from dpkit.cli.options import engine_of, output_delimiter, read_options
    from dpkit.data.schema import load_schema
    from dpkit.data.table import column_names, load, write_csv
    from dpkit.errors import DataError
    from dpkit.release.cut import Cut
    from dpkit.release.generalized import Generalizer
    from dpkit.report import read_report
    from dpkit.run import check_distinct_paths

    spark = engine_of(kwargs) == "spark"
    # a URI output (hdfs://, s3a://) is Spark's to check when it writes
    check_distinct_paths([data, cut_path, schema_path], [None if spark and "://" in output else output])
    report = read_report(cut_path)
    release = report.get("release") or {}
    params = report.get("parameters") or {}
    if report.get("command") == "kanon-select" and params.get("generalize"):
        if spark:
            from dpkit.errors import DpkitUsageError

            # apply_release works on the raw strings of a whole table: not built for Spark yet
            raise DpkitUsageError("generalize with a kanon-select --generalize report runs on --engine numpy "
                                  "only for now (docs/spark.md)")
        _kanon(report, cut_path, schema_path, data, output, kwargs)
        return
    if report.get("command") != "publish" or "cut" not in release:
        raise DataError(
            f"{cut_path}: not a `dpkit publish` report (no release.cut), nor a `kanon-select --generalize` one"
        )
    schema_file = schema_path or params.get("schema")
    if not schema_file:
        raise DataError(f"{cut_path}: the report names no schema; pass --schema")
    if not schema_path and not Path(schema_file).is_file():
        raise DataError(f"{cut_path}: the schema it names, {schema_file}, is not found from here; pass --schema")
    schema = load_schema(schema_file, allow_draft=True)
    target = release.get("target") or params.get("target") or schema.target
    cut = Cut.from_json(schema, target, release["cut"], source=cut_path)
    opts = read_options(data, kwargs["encoding"], kwargs["delimiter"])
    if spark:
        _spark(opts, schema, cut, release, target, output, kwargs)
        return
    header = column_names(opts)
    order = [c for c in release.get("columns", cut.columns + [target]) if c in cut.attributes or c == target]
    wanted = [c for c in order if c in cut.attributes or (c == target and c in header)]
    table = load(opts, schema, wanted)
    rows = Generalizer.of(cut, schema, wanted)(table.columns)
    write_csv(rows, output, delimiter=output_delimiter())


def _spark(opts: Any, schema: Any, cut: Any, release: dict, target: str, output: str, kwargs: dict) -> None:
    """The generalized rows computed on the executors and written by Spark (docs/spark.md)."""
    from dpkit.cli.options import output_delimiter
    from dpkit.engine.spark_frame import load_spark, session
    from dpkit.engine.spark_rows import raw_input
    from dpkit.engine.spark_write import check_output, write_rows
    from dpkit.errors import DpkitUsageError
    from dpkit.release.generalized import Generalizer

    if opts.path == "-":
        raise DpkitUsageError("--engine spark reads files or URIs, not stdin ('-')")
    spark = session(kwargs.get("spark_master"))
    check_output(spark, output)
    header = raw_input(spark, opts)[1]
    order = [c for c in release.get("columns", cut.columns + [target]) if c in cut.attributes or c == target]
    wanted = [c for c in order if c in cut.attributes or (c == target and c in header)]
    frame = load_spark(opts, schema, wanted, spark=spark)
    labeller = Generalizer.of(cut, schema, wanted)

    def render(batch: Any) -> Any:
        return labeller({c: batch.column(i).to_numpy(zero_copy_only=False) for i, c in enumerate(wanted)})

    df = frame.df.select(*[frame.fields[c] for c in wanted])
    write_rows(spark, df, render, wanted, output, delimiter=output_delimiter())


def _kanon(report: dict, cut_path: str, schema_path: str | None, data: str, output: str, kwargs: dict) -> None:
    """A `kanon-select --generalize` report: its kept columns at their chosen levels."""
    from pathlib import Path

    from dpkit.anonymity.apply import apply_release
    from dpkit.cli.options import output_delimiter, read_options
    from dpkit.data.schema import load_schema
    from dpkit.data.table import read_table, write_csv
    from dpkit.errors import DataError

    params = report.get("parameters") or {}
    schema_file = schema_path or params.get("schema")
    if not schema_file or (not schema_path and not Path(schema_file).is_file()):
        raise DataError(f"{cut_path}: the schema it names, {schema_file}, is not found from here; pass --schema")
    schema = load_schema(schema_file, allow_draft=True)
    df = read_table(read_options(data, kwargs["encoding"], kwargs["delimiter"]))
    src = "<stdin>" if data == "-" else data
    out = apply_release(df, report.get("release") or {}, schema, params.get("target"), source=src)
    write_csv(out, output, delimiter=output_delimiter())
