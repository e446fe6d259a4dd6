"""`dpkit generalize` — map a file onto a released cut (no privacy budget)."""

from __future__ import annotations

from typing import Any

import click

from dpkit.cli.options import dpkit_command, engine_options, input_options


@dpkit_command("generalize")
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
    import dpkit
    from dpkit.cli.options import output_delimiter, read_options

    dpkit.generalize(read_options(data, kwargs["encoding"], kwargs["delimiter"], resolved=False), cut_path,
                     schema=schema_path, output=output, output_delimiter=output_delimiter(),
                     engine=kwargs.get("engine"), spark_master=kwargs.get("spark_master"))
