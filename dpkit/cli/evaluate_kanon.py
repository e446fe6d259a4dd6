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
    rep = None
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
    extra: dict = {}
    if rep is not None and "suppression" in rep.get("release", {}):
        extra["suppression"] = rep["release"]["suppression"]
    extra["average_class_size"] = result.records / result.classes
    if test_path is not None:
        extra["classifier"] = _utility(df, qis, test_path, rep, target, positive, schema_path, encoding, delimiter)
    if as_json:
        import json

        click.echo(json.dumps(result.to_dict() | extra, indent=2, ensure_ascii=False))
    else:
        lines = result.lines()
        if "suppression" in extra:
            sup = extra["suppression"]
            lines.insert(2, f"suppressed: {sup['records']} records ({100 * sup['fraction']:.2f}%, "
                            f"at most {100 * sup['max_fraction']:g}% allowed)")
        lines.insert(3, f"average class size: {extra['average_class_size']:.4g}")
        if "classifier" in extra:
            u = extra["classifier"]
            pos = f" (positive class {u['positive']!r})" if u.get("positive") is not None else " (macro)"
            lines.append(f"classifier utility on {u['test_records']} test records{pos}; "
                         f"majority class alone: accuracy {u['majority_accuracy']:.4f}")
            for name in ("svm", "entropy_tree"):
                m = u[name]
                lines.append(f"  {name:>12}: accuracy {m['accuracy']:.4f}   precision {m['precision']:.4f}   "
                             f"recall {m['recall']:.4f}")
        click.echo("\n".join(lines))


def _utility(df, qis, test_path, rep, target, positive, schema_path, encoding, delimiter) -> dict:
    """Train on the release, test on TEST mapped through the report's generalization."""
    from pathlib import Path

    from dpkit.anonymity.apply import apply_release
    from dpkit.anonymity.frame import require_columns
    from dpkit.anonymity.utility import classifier_utility
    from dpkit.data.table import read_csv
    from dpkit.errors import DataError, DpkitUsageError

    params = (rep or {}).get("parameters", {})
    target = target or params.get("target")
    if target is None:
        raise DpkitUsageError("--test needs --target COLUMN (or --from-report naming one)")
    require_columns(df, [target], "--target", "DATA")
    test = read_csv(test_path, encoding=encoding, delimiter=delimiter)
    require_columns(test, [*qis, target], "--test", test_path)
    if rep is not None and params.get("generalize"):
        schema = None
        schema_file = schema_path or params.get("schema")
        if schema_file:
            if not Path(schema_file).is_file():
                raise DataError(f"the schema {schema_file} named by the report is not found from here; pass --schema")
            from dpkit.data.schema import load_schema

            schema = load_schema(schema_file, allow_draft=True)
        release = dict(rep.get("release", {}))
        release["selected"] = list(qis)
        test = apply_release(test, release, schema, target, source=test_path)
    return classifier_utility(df, test, list(qis), target, positive=positive)
