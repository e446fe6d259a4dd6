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
@click.option("--test", "test_path", type=click.Path(dir_okay=False), default=None,
              help="A held-out split: train a linear SVM and an entropy tree on DATA, report their "
              "accuracy/precision/recall on it (mapped through --from-report's generalization).")
@click.option("--target", default=None, help="Class column for --test (default: the report's target).")
@click.option("--positive", default=None, help="Positive class for precision/recall (default: the rarer class).")
@click.option("--schema", "schema_path", type=click.Path(dir_okay=False), default=None,
              help="Schema for mapping --test (default: the one the report names).")
@json_option
@input_options
@global_options
def command(
    data: str, quasi_identifiers: str | None, from_report: str | None, k: int | None,
    sensitive: str | None, l_div: int | None, test_path: str | None, target: str | None,
    positive: str | None, schema_path: str | None, as_json: bool, encoding: str, delimiter: str,
) -> None:
    """k-anonymity metrics of a table: k, ℓ, suppression, class sizes, discernibility, utility.

    k is the smallest equivalence class (records equal on every quasi-identifier); ℓ the
    smallest number of distinct --sensitive values in a class; discernibility is Σ |class|²
    (lower is finer); C_AVG = (records / classes) / k (1 is ideal). Always exits 0 when the
    metrics can be computed (use `dpkit kanon-select --check-only` to fail on a k). With
    --from-report, the records the release suppressed are reported too. With --test, the
    classifier utility: a linear SVM (one-hot) and an entropy decision tree trained on DATA,
    accuracy, precision and recall on TEST (generalized like DATA when the report did so).

    \b
    Example:
      dpkit kanon-select sample_data/adult/train.csv --schema taxonomies/adult.yaml \\
          --target income -k 10 -o adult.k10.csv
      dpkit evaluate kanon adult.k10.csv --from-report adult.k10.report.json --json
      dpkit evaluate kanon adult.k10.csv --from-report adult.k10.report.json \\
          --test sample_data/adult/test.csv
    """
    from dpkit import evaluate_kanon
    from dpkit.cli.options import parse_columns, read_options
    from dpkit.cli.results import emit

    result = evaluate_kanon(read_options(data, encoding, delimiter), quasi_identifiers=parse_columns(
        quasi_identifiers, "--quasi-identifiers"), from_report=from_report, k=k, sensitive=sensitive, l=l_div,
        test=test_path, target=target, positive=positive, schema=schema_path, encoding=encoding, delimiter=delimiter)
    emit(as_json, result.to_dict(), lines=result.lines(), ascii=False)
