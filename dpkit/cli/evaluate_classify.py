"""`dpkit evaluate classify` — train on one table, score on another."""

from __future__ import annotations

from typing import Any

import click

from dpkit.cli.options import CONTEXT_SETTINGS, global_options, input_options, json_option


@click.command(name="classify", context_settings=CONTEXT_SETTINGS,
               short_help="Classifier accuracy, balanced accuracy, P/R/F1, ROC AUC: train on A, test on B.")
@click.option("--train", "train", type=click.Path(dir_okay=False, allow_dash=True), default=None,
              help="Training table: a released table (one row per record), a --counts table, or raw data.")
@click.option("--test", "test", type=click.Path(dir_okay=False, allow_dash=True), required=True,
              help="Test table with the true labels (generalized with the release's cut if the training table is a release).")
@click.option("--target", required=True, help="The class column.")
@click.option("--schema", type=click.Path(dir_okay=False), default=None,
              help="Schema YAML: column kinds, ignored columns, the missing-value token.")
@click.option("--model", type=click.Choice(["tree", "svm", "forest"]), default="tree", show_default=True,
              help="tree = entropy decision tree (C4.5-like), svm = linear SVM, forest = random forest (non-private).")
@click.option("--positive", default=None, metavar="CLASS",
              help="Class scored by precision/recall/F1 [default: binary -> the rarer test class; more classes -> macro average].")
@click.option("--baseline", type=click.Path(dir_okay=False), default=None, metavar="RAW_TRAIN.csv",
              help="Also train the same classifier on this raw table (the non-private baseline) and report the majority-class floor.")
@click.option("--baseline-test", type=click.Path(dir_okay=False), default=None, metavar="RAW_TEST.csv",
              help="Raw test table for the baseline (required with --baseline: --test is usually generalized).")
@click.option("--predictions", type=click.Path(dir_okay=False), default=None, metavar="P.csv",
              help="Score these predictions (column 'prediction' or the target's name, aligned with --test) instead of training.")
@click.option("--dpkit-model", type=click.Path(dir_okay=False), default=None, metavar="model.json",
              help="Score a dpkit forest model (from `dpkit forest train`) on --test.")
@click.option("--weight-column", default=None, metavar="COLUMN",
              help="Training rows carry this many records [default: 'count' if --train has such a column].")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the classifier (tree ties, forest).")
@click.option("--delimiter-for", "delimiter_for", multiple=True, metavar="INPUT=CHAR",
              help="Delimiter of one input (train, test, baseline, baseline-test, predictions), "
              "e.g. --delimiter-for test=';'; the others use --delimiter. Repeatable.")
@input_options
@json_option
@global_options
def command(train, test, target, schema, model, positive, baseline, baseline_test, predictions,
            dpkit_model, weight_column, seed, delimiter_for, encoding, delimiter, as_json) -> None:
    """Accuracy, balanced accuracy, precision, recall, F1 (per class and macro), ROC AUC and
    confusion matrix of a classifier trained on --train (e.g. a released table) and tested on
    --test. ROC AUC comes from the classifier's probabilities, or from the p_<class> columns
    of --predictions (`forest predict --proba`). Warns when 99 % of the predictions are one
    class.

    Binary targets score the --positive class (default: the rarer class of --test);
    targets with more classes report macro averages. A 'count' column in --train
    (a `publish --counts` table) weighs its rows. Without --schema a column is numeric
    when every value is a number; with it, interval labels such as [15,37) in a numeric
    column are taken as categories. Results go to stdout: a table on a terminal,
    `key: value` lines otherwise, JSON with --json.

    \b
    Example:
      dpkit evaluate classify --train out/adult.released.csv \\
          --test out/adult.test.generalized.csv --target income \\
          --schema taxonomies/adult.yaml \\
          --baseline sample_data/adult/train.csv --baseline-test sample_data/adult/test.csv
    """
    from dpkit import evaluate_classifier
    from dpkit.errors import DpkitUsageError

    if sum(p == "-" for p in (train, test, predictions)) > 1:
        raise DpkitUsageError("only one input can be read from stdin ('-')")
    sources = _read_options(delimiter_for, encoding=encoding, delimiter=delimiter, train=train, test=test,
                            baseline=baseline, baseline_test=baseline_test, predictions=predictions)
    result = evaluate_classifier(
        sources["test"], target=target, train=sources.get("train"), predictions=sources.get("predictions"),
        dpkit_model=dpkit_model, baseline=sources.get("baseline"), baseline_test=sources.get("baseline-test"),
        schema=schema, model=model, positive=positive, weight_column=weight_column, random_state=seed)
    if as_json:
        import json

        click.echo(json.dumps(result, indent=2, default=str))
    else:
        from dpkit.cli.results import show

        show(classify_tables(result), classify_lines(result))


def _read_options(delimiter_for: tuple[str, ...], *, encoding: str, delimiter: str | None,
                  **paths: str | None) -> dict:
    """One ReadOptions per input: --delimiter, or the input's own --delimiter-for
    (``delimiter=None`` lets the reader sniff each file on its own)."""
    from dpkit.cli.options import _delimiter, read_options
    from dpkit.errors import DpkitUsageError

    names = {k.replace("_", "-"): v for k, v in paths.items()}
    own: dict[str, str] = {}
    for item in delimiter_for:
        name, sep, char = item.partition("=")
        if not sep or name not in names:
            raise DpkitUsageError(f"--delimiter-for {item!r}: expected INPUT=CHAR with INPUT one of "
                                  f"{', '.join(names)}")
        if not names[name]:
            raise DpkitUsageError(f"--delimiter-for {item!r}: no --{name} input was given")
        own[name] = _delimiter(None, None, char)  # type: ignore[arg-type]  # '\t', tab
    return {name: read_options(path, encoding, own.get(name, delimiter))
            for name, path in names.items() if path}


def classify_tables(result: dict[str, Any]) -> list[tuple[str, tuple[str, ...], list[tuple[str, ...]]]]:
    """:func:`dpkit.evaluate_classifier`'s result as (title, header, rows) tables: the metrics, the
    confusion matrix, the per-class scores."""
    labels = [str(v) for v in result["labels"]]
    return [
        ("classification metrics", ("metric", "value"),
         [(k, f"{v:.4f}" if isinstance(v, float) else ("-" if v is None else str(v))) for k, v in _scalars(result)]),
        ("confusion matrix", ("true ↓  predicted →", *labels),
         [(label, *(str(x) for x in row)) for label, row in zip(labels, result["confusion_matrix"], strict=True)]),
        ("per class", ("class", "precision", "recall", "f1", "support"),
         [(label, *(f"{v[k]:.4f}" for k in ("precision", "recall", "f1")), f"{v['support']:g}")
          for label, v in result.get("per_class", {}).items()]),
    ]


def classify_lines(result: dict[str, Any]) -> list[str]:
    """:func:`dpkit.evaluate_classifier`'s result as ``key: value`` lines (for scripts)."""
    labels = [str(v) for v in result["labels"]]
    out = [f"{k}: {v:.6g}" if isinstance(v, float) else f"{k}: {'-' if v is None else v}" for k, v in _scalars(result)]
    out.append(f"labels: {', '.join(labels)}")
    out += [f"confusion[{label}]: {' '.join(str(x) for x in row)}"
            for label, row in zip(labels, result["confusion_matrix"], strict=True)]
    out += [f"class[{label}]: precision={v['precision']:.6g} recall={v['recall']:.6g} f1={v['f1']:.6g} "
            f"support={v['support']:g}" for label, v in result.get("per_class", {}).items()]
    return out


def _scalars(result: dict[str, Any]) -> list[tuple[str, Any]]:
    return [(k, v) for k, v in result.items() if k not in ("labels", "confusion_matrix", "per_class")]
