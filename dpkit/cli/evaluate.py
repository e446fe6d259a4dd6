"""`dpkit evaluate classify|cluster|kanon|sweep` — utility metrics of releases, models and
clusterings (:mod:`dpkit.api.evaluate`), and experiment sweeps (:mod:`dpkit.sweep`)."""

from __future__ import annotations

from typing import Any

import click

import dpkit
from dpkit.cli.options import dpkit_command, emit, input_options, json_option, say


@dpkit_command("evaluate", cls=click.Group)
def command() -> None:
    """Utility metrics of releases, models and clusterings, and experiment sweeps.

    \b
    Example:
      dpkit evaluate classify --train out/adult.released.csv \\
          --test out/adult.test.generalized.csv --target income
      dpkit evaluate sweep configs/experiments/maxgddp-adult.yaml -o results/maxgddp-adult
    """


@dpkit_command("classify", command, config=True,
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
def classify(train, test, target, schema, model, positive, baseline, baseline_test, predictions,
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
    if sum(p == "-" for p in (train, test, predictions)) > 1:
        raise dpkit.DpkitUsageError("only one input can be read from stdin ('-')")
    sources = _read_options(delimiter_for, encoding=encoding, delimiter=delimiter, train=train, test=test,
                            baseline=baseline, baseline_test=baseline_test, predictions=predictions)
    result = dpkit.evaluate_classifier(
        sources["test"], target=target, train=sources.get("train"), predictions=sources.get("predictions"),
        dpkit_model=dpkit_model, baseline=sources.get("baseline"), baseline_test=sources.get("baseline-test"),
        schema=schema, model=model, positive=positive, weight_column=weight_column, random_state=seed)
    emit(as_json, result, classify_tables(result), classify_lines(result))


def _read_options(delimiter_for: tuple[str, ...], *, encoding: str, delimiter: str | None,
                  **paths: str | None) -> dict:
    """One ReadOptions per input: --delimiter, or the input's own --delimiter-for
    (``delimiter=None`` lets the reader sniff each file on its own)."""
    from dpkit.cli.options import _delimiter, read_options

    names = {k.replace("_", "-"): v for k, v in paths.items()}
    own: dict[str, str] = {}
    for item in delimiter_for:
        name, sep, char = item.partition("=")
        if not sep or name not in names:
            raise dpkit.DpkitUsageError(f"--delimiter-for {item!r}: expected INPUT=CHAR with INPUT one of "
                                  f"{', '.join(names)}")
        if not names[name]:
            raise dpkit.DpkitUsageError(f"--delimiter-for {item!r}: no --{name} input was given")
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


@dpkit_command("cluster", command, config=True)
@click.argument("data", type=click.Path(dir_okay=False, allow_dash=True))
@click.option("--centroids", required=True, type=click.Path(dir_okay=False),
              help="Centroids CSV (from `dpkit cluster -o`; UTF-8, commas): one row per centroid; a column of "
              "ISO dates makes the data's column a date (read as day numbers).")
@click.option("--columns", "-c", default=None, metavar="A,B",
              help="Data columns, named as in the centroids file [default: its columns but 'cluster'].")
@click.option("--labels", default=None, metavar="COLUMN", help="Ground-truth cluster column (for the F-measure).")
@click.option("--compare", default=None, type=click.Path(dir_okay=False), metavar="OTHER.csv",
              help="Another centroids file: also report its NICV and RCP = (NICV_other − NICV)/NICV_other.")
@click.option("--no-reference", is_flag=True, help="Skip the non-private k-means reference (faster).")
@input_options
@json_option
def cluster(data, centroids, columns, labels, compare, no_reference, encoding, delimiter, as_json) -> None:
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
    from dpkit.cli.options import columns_of, read_options

    result = dpkit.evaluate_clustering(read_options(data, encoding, delimiter), centroids, columns=columns_of(columns), labels=labels,
                                 compare=compare, reference=not no_reference)
    cells = [(k, f"{v:.6g}" if isinstance(v, float) else str(v)) for k, v in result.items()]
    emit(as_json, result, [("clustering metrics", ("metric", "value"), cells)], [f"{k}: {v}" for k, v in cells])


@dpkit_command("kanon", command, config=True)
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
def kanon(data: str, quasi_identifiers: str | None, l_div: int | None, test_path: str | None,
          schema_path: str | None, as_json: bool, encoding: str, delimiter: str, **p: Any) -> None:
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
    from dpkit.cli.options import parse_columns, read_options

    result = dpkit.evaluate_kanon(read_options(data, encoding, delimiter), quasi_identifiers=parse_columns(
        quasi_identifiers, "--quasi-identifiers"), l=l_div, test=test_path, schema=schema_path, encoding=encoding,
        delimiter=delimiter, **p)
    emit(as_json, result.to_dict(), lines=result.lines(), ascii=False)


@dpkit_command("sweep", command,
               short_help="Run an experiment YAML into results, summary tables and plots.")
@click.argument("experiment", type=click.Path(dir_okay=False))
@click.option("-o", "--output", "output", type=click.Path(file_okay=False), required=True, metavar="DIR",
              help="Directory for results.csv, summary.csv, summary.md and the PNG plots (created if missing).")
@click.option("-j", "--jobs", type=click.IntRange(min=1), default=None, metavar="N",
              help="Worker processes [default: the number of CPUs].")
@click.option("--repeats", type=click.IntRange(min=1), default=None, metavar="N",
              help="Runs per grid point, overriding the YAML's repeats.")
@click.option("--dry-run", is_flag=True,
              help="Print the runs per sweep (and how many are already done) on stdout; run nothing.")
@click.option("--json", "as_json", is_flag=True,
              help="Print the outcome (or the --dry-run plan) as one JSON object on stdout.")
def sweep(experiment: str, output: str, jobs: int | None, repeats: int | None, dry_run: bool, as_json: bool) -> None:
    """Run every cell of an experiment (sweeps × grid points × repeats), each an in-process
    dpkit run with a seed derived from the experiment, sweep, grid point and repeat.

    Writes DIR/results.csv (one row per run, appended as runs finish), DIR/summary.csv
    (mean, sd, n per grid point and metric), DIR/*.png and DIR/summary.md (tables, the
    paper's numbers beside ours, the plots). results.csv is a journal: rerunning the same
    command skips the runs already in it, so an interrupted sweep resumes where it
    stopped; so does one ended by Ctrl-C or SIGTERM (exit 130/143; the worker processes
    are stopped with it). Progress goes to stderr (a bar on a terminal); -q for cron;
    --json prints the outcome on stdout. The YAML format is in docs/formats.md.

    \b
    Example:
      dpkit evaluate sweep configs/experiments/maxgddp-adult.yaml -o results/maxgddp-adult
      dpkit evaluate sweep configs/experiments/maxgddp-adult.yaml -o /tmp/try --repeats 2 -j 2
    """
    import warnings
    from pathlib import Path

    exp = dpkit.load_experiment(experiment)
    out = Path(output)
    if out.exists() and not out.is_dir():
        raise dpkit.DataError(f"{output}: exists and is not a directory")
    if dry_run:
        rows = dpkit.plan_sweep(exp, out, repeats)
        if as_json:
            return emit(True, {"experiment": exp.name, "output": str(out), "dry_run": True, "sweeps": rows}, ascii=False)
        keys = ("sweep", "points", "runs", "done", "todo")
        total = {k: sum(r[k] for r in rows) for k in keys[1:]}
        for r in [dict(zip(keys, keys, strict=True)), *rows, {"sweep": "total", **total}]:
            click.echo("\t".join(str(r[k]) for k in keys))
        return
    from dpkit.cli.options import quiet

    result = dpkit.run_sweep(exp, out, jobs=jobs, repeats=repeats, progress=not quiet())
    for message in result.warnings:
        warnings.warn(f"(in runs) {message}", dpkit.DpkitWarning, stacklevel=1)
    if as_json:
        emit(True, {"experiment": exp.name, "output": str(out), "runs": result.total, "executed": result.executed,
                    "skipped": result.skipped, "failed": len(result.failed), "seconds": round(result.seconds, 3),
                    "results": str(out / "results.csv"), "summary": str(out / "summary.md")}, ascii=False)
    else:
        say(f"dpkit: {exp.name}: {result.executed} run(s) executed, {result.skipped} already in "
            f"{out / 'results.csv'}, {len(result.failed)} failed, {result.seconds:.1f} s; summary: {out / 'summary.md'}")
    if result.failed:
        raise dpkit.DpkitError(result.failure())

