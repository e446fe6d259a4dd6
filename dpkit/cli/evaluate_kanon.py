"""`dpkit evaluate kanon` — k, ℓ, class sizes and discernibility of a released table."""

from __future__ import annotations

import click

from dpkit.cli.options import CONTEXT_SETTINGS, global_options, input_options, json_option


@click.command(name="kanon", context_settings=CONTEXT_SETTINGS)
@click.argument("data", type=click.Path(dir_okay=False, allow_dash=True))
@click.option("--quasi-identifiers", "--qi", "quasi_identifiers", default=None, metavar="A,B,...",
              help="The quasi-identifier columns (default: the 'selected' list of --from-report).")
@click.option("--from-report", "from_report", type=click.Path(dir_okay=False), default=None,
              help="A kanon-select report: take the quasi-identifiers, k, sensitive column and ℓ from it.")
@click.option("-k", "k", type=int, default=None, help="Count the classes and records below this k.")
@click.option("--sensitive", default=None, metavar="COL", help="Report distinct ℓ-diversity of this column.")
@click.option("-l", "--l", "l_div", type=int, default=None, metavar="L",
              help="With --sensitive: count the classes below this ℓ.")
@json_option
@input_options
@global_options
def command(
    data: str, quasi_identifiers: str | None, from_report: str | None, k: int | None,
    sensitive: str | None, l_div: int | None, as_json: bool, encoding: str, delimiter: str,
) -> None:
    """k-anonymity metrics of a table: k, ℓ, class-size histogram, discernibility.

    k is the smallest equivalence class (records equal on every quasi-identifier); ℓ the
    smallest number of distinct --sensitive values in a class; discernibility is Σ |class|²
    (lower is finer); C_AVG = (records / classes) / k (1 is ideal). Always exits 0 when the
    metrics can be computed (use `dpkit kanon-select --check-only` to fail on a k).

    \b
    Example:
      dpkit kanon-select sample_data/adult/train.csv --schema taxonomies/adult.yaml \\
          --target income -k 10 -o adult.k10.csv
      dpkit evaluate kanon adult.k10.csv --from-report adult.k10.report.json --json
    """
    from dpkit.anonymity.checks import check_table
    from dpkit.anonymity.frame import parse_columns, require_columns
    from dpkit.cli.options import read_options
    from dpkit.data.table import read_table
    from dpkit.errors import DataError, DpkitUsageError

    qis = parse_columns(quasi_identifiers, "--quasi-identifiers")
    if k is not None and k < 1:
        raise DpkitUsageError(f"-k must be ≥ 1, got {k}")
    if l_div is not None and l_div < 1:
        raise DpkitUsageError(f"--l must be ≥ 1, got {l_div}")
    if from_report is not None:
        from dpkit.report import read_report

        rep = read_report(from_report)
        if rep.get("privacy", {}).get("model") != "k-anonymity":
            raise DataError(f"{from_report}: not a kanon-select report (privacy model is not k-anonymity)")
        release = rep.get("release", {})
        params = rep.get("parameters", {})
        if qis is None:
            qis = list(release.get("selected", []))
        k = k if k is not None else rep["privacy"].get("k")
        sensitive = sensitive or params.get("sensitive")
        l_div = l_div if l_div is not None else params.get("l")
    if qis is None:
        raise DpkitUsageError("give --quasi-identifiers A,B,... or --from-report REPORT.json")
    if l_div is not None and sensitive is None:
        raise DpkitUsageError("--l needs --sensitive COLUMN")
    source = "<stdin>" if data == "-" else data
    df = read_table(read_options(data, encoding, delimiter))
    require_columns(df, qis, "--quasi-identifiers", source)
    if sensitive is not None:
        require_columns(df, [sensitive], "--sensitive", source)
    result = check_table(df, qis, k=k, sensitive=sensitive, l=l_div)
    if as_json:
        import json

        click.echo(json.dumps(result.to_dict(), indent=2, ensure_ascii=False))
    else:
        click.echo("\n".join(result.lines()))
